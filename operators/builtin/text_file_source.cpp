#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/params.hpp"

namespace weir::ops {

namespace {

__extension__ typedef unsigned __int128 uint128;

constexpr size_t read_size = 256 * 1024;

/// The longest line read unless `max_line_length` says otherwise: a stream
/// without newlines (/dev/zero) fails instead of growing without bound.
constexpr int64_t default_max_line_length = 16 * 1024 * 1024;

/// How long one read of a stream waits for data: the subtask's thread comes
/// back this often, so a cancel is seen even while a FIFO has no writer.
constexpr int read_wait_ms = 100;

const std::vector<param_spec>& text_file_params() {
  static const std::vector<param_spec> specs{
    {"path", param_kind::text, true},
    {"max_line_length", param_kind::positive, false},
  };
  return specs;
}

/// Whether a file is read as one stream rather than split by byte ranges:
/// anything but a regular file with a size (a FIFO, a character device, a
/// /proc file, which reports size 0).
bool is_stream(const struct stat& st) {
  return !S_ISREG(st.st_mode) || st.st_size == 0;
}

/// The lines of a file. Instance i of n reads the lines that start in the
/// byte range [i*size/n, (i+1)*size/n), so every line is read exactly once
/// over all instances, in file order within an instance. A stream (see
/// is_stream) has no size to split: instance 0 reads all of it, the others
/// nothing. A line excludes its '\n' and a '\r' before it; a last line
/// without '\n' counts as a line.
///
/// Reads never block for long: the file is opened non-blocking (a FIFO
/// without a writer does not hang open()) and a stream is polled for at
/// most read_wait_ms per call, so next() returns, possibly with nothing,
/// and its subtask can be cancelled.
class text_file_source : public source {
public:
  text_file_source(std::string path, size_t max_line)
    : path_(std::move(path)), max_line_(max_line) {
  }

  ~text_file_source() override {
    if (fd_ >= 0)
      ::close(fd_);
  }

  text_file_source(const text_file_source&) = delete;
  text_file_source& operator=(const text_file_source&) = delete;

  void open(const operator_context& ctx) override {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0)
      fail("cannot open");
    if (S_ISDIR(st.st_mode))
      throw operator_error(fmt::format("cannot read '{}': is a directory",
                                       path_));
    stream_ = is_stream(st);
    if (stream_ && ctx.subtask_index > 0) {
      done_ = true; // instance 0 reads the stream
      return;
    }
    open_file();
    if (::fstat(fd_, &st) != 0)
      fail("cannot stat");
    if (stream_ || is_stream(st)) {
      stream_ = true;
      range_end_ = UINT64_MAX;
      done_ = false;
      return;
    }
    auto size = static_cast<uint128>(st.st_size);
    auto n = static_cast<uint128>(std::max<int32_t>(ctx.parallelism, 1));
    auto i = static_cast<uint128>(std::max<int32_t>(ctx.subtask_index, 0));
    auto start = static_cast<uint64_t>(i * size / n);
    range_end_ = static_cast<uint64_t>((i + 1) * size / n);
    done_ = start >= range_end_;
    if (!done_ && start > 0)
      skip_to_line_start(start);
  }

  bool next(row_batch& out, size_t max_records) override {
    if (fd_ < 0 && !done_)
      open(operator_context{});
    for (size_t produced = 0; produced < max_records && !done_;) {
      if (line_start_ >= range_end_) {
        done_ = true;
        break;
      }
      const char* first = buf_.data() + begin_;
      const auto* nl = static_cast<const char*>(
        std::memchr(first, '\n', end_ - begin_));
      if (nl != nullptr) {
        auto len = static_cast<size_t>(nl - first);
        emit(out, first, len);
        begin_ += len + 1;
        ++produced;
        continue;
      }
      append_carry(first, end_ - begin_);
      begin_ = end_;
      auto got = fill();
      if (got == fill_result::waiting)
        break; // nothing yet: the caller comes back
      if (got == fill_result::end) {
        if (!carry_.empty())
          emit(out, nullptr, 0);
        done_ = true;
      }
    }
    if (line_start_ >= range_end_)
      done_ = true;
    return !done_;
  }

  bool blocking_io() const override { return true; }

private:
  [[noreturn]] void fail(const char* what) const {
    throw operator_error(
      fmt::format("{} '{}': {}", what, path_, std::strerror(errno)));
  }

  enum class fill_result { data, end, waiting };

  void open_file() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0)
      fail("cannot open");
    buf_.resize(read_size);
    begin_ = end_ = 0;
    buf_offset_ = line_start_ = 0;
    carry_.clear();
  }

  /// Positions at the first line that starts at or after `start` (> 0): the
  /// one after the first '\n' at or after byte start-1.
  void skip_to_line_start(uint64_t start) {
    if (::lseek(fd_, static_cast<off_t>(start - 1), SEEK_SET) < 0)
      fail("cannot seek in");
    buf_offset_ = start - 1;
    for (;;) {
      if (fill() != fill_result::data) { // a regular file never waits
        done_ = true;
        return;
      }
      const char* first = buf_.data() + begin_;
      const auto* nl = static_cast<const char*>(
        std::memchr(first, '\n', end_ - begin_));
      if (nl != nullptr) {
        begin_ += static_cast<size_t>(nl - first) + 1;
        line_start_ = buf_offset_ + begin_;
        return;
      }
      begin_ = end_;
    }
  }

  /// Reads the next chunk once the buffer is used up: data, the end of the
  /// file, or (a stream) nothing within read_wait_ms.
  fill_result fill() {
    buf_offset_ += end_;
    begin_ = end_ = 0;
    // A FIFO reports readable only once a writer wrote or left: reading
    // before would see "end of file" while no writer has opened it yet.
    if (stream_ && !readable())
      return fill_result::waiting;
    for (;;) {
      auto n = ::read(fd_, buf_.data(), buf_.size());
      if (n > 0) {
        end_ = static_cast<size_t>(n);
        return fill_result::data;
      }
      if (n == 0)
        return fill_result::end;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return fill_result::waiting;
      if (errno != EINTR)
        fail("cannot read");
    }
  }

  /// Whether a read would not block, waiting at most read_wait_ms.
  bool readable() {
    pollfd p{fd_, POLLIN, 0};
    for (;;) {
      int n = ::poll(&p, 1, read_wait_ms);
      if (n >= 0)
        return n > 0;
      if (errno != EINTR)
        fail("cannot read");
    }
  }

  /// Keeps the start of a line that spans chunks, up to max_line_.
  void append_carry(const char* first, size_t len) {
    check_line_length(carry_.size() + len);
    carry_.append(first, len);
  }

  void check_line_length(size_t len) const {
    if (len > max_line_)
      throw operator_error(fmt::format(
        "a line of '{}' (starting at byte {}) is longer than {} bytes "
        "(parameter 'max_line_length')",
        path_, line_start_, max_line_));
  }

  /// Emits `carry_` followed by [first, first+len) as one line.
  void emit(row_batch& out, const char* first, size_t len) {
    check_line_length(carry_.size() + len);
    std::string_view line{first, len};
    if (!carry_.empty()) {
      carry_.append(first, len);
      line = carry_;
    }
    line_start_ += line.size() + 1;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    out.columns[0].push_str(line);
    ++out.rows;
    if (!carry_.empty())
      carry_ = std::string{};
  }

  std::string path_;
  size_t max_line_;
  bool stream_ = false;     ///< read as one stream, polling for data
  int fd_ = -1;
  std::vector<char> buf_;
  size_t begin_ = 0;        ///< first unread byte in buf_
  size_t end_ = 0;          ///< end of the bytes read into buf_
  uint64_t buf_offset_ = 0; ///< file offset of buf_[0]
  uint64_t line_start_ = 0; ///< file offset of the next line
  uint64_t range_end_ = 0;  ///< lines must start before this offset
  std::string carry_;       ///< start of a line that spans chunks
  bool done_ = false;
};

} // namespace

std::string check_text_file_params(const params& p) {
  return check_params("text_file", p, text_file_params());
}

std::string check_text_file_source(const params& p) {
  auto problem = check_params("text_file", p, text_file_params());
  if (!problem.empty())
    return problem;
  return check_input_path(p);
}

std::string check_input_path(const params& p) {
  const auto& path = p.at("path");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return fmt::format("parameter 'path': file '{}' does not exist", path);
  if (S_ISDIR(st.st_mode))
    return fmt::format("parameter 'path': file '{}' is a directory", path);
  if (::access(path.c_str(), R_OK) != 0)
    return fmt::format("parameter 'path': file '{}' is not readable", path);
  return {};
}

std::unique_ptr<source> make_text_file_source(const params& p) {
  throw_if(check_params("text_file", p, text_file_params()));
  return std::make_unique<text_file_source>(
    p.at("path"), static_cast<size_t>(int_param(p, "max_line_length",
                                                default_max_line_length)));
}

} // namespace weir::ops
