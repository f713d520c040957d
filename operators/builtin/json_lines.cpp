// The json_lines operator: a source reading one JSON object a line into
// rows of its schema, and a sink writing rows so (row_formats.hpp).
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/params.hpp"
#include "operators/formats/row_formats.hpp"
#include "operators/state_codec.hpp"

namespace weir::ops {

namespace {

constexpr size_t read_size = 256 * 1024;

/// The longest line: a file without newlines fails instead of growing the
/// buffer without bound.
constexpr size_t max_line_length = 16 * 1024 * 1024;

const std::vector<param_spec>& source_params() {
  static const std::vector<param_spec> specs{
    {"path", param_kind::text, true},
    {"schema", param_kind::text, true},
  };
  return specs;
}

const std::vector<param_spec>& sink_params() {
  static const std::vector<param_spec> specs{
    {"path", param_kind::text, true},
    {"delivery", param_kind::text, false},
  };
  return specs;
}

std::string check_source(const params& p) {
  auto problem = check_params("json_lines", p, source_params());
  if (!problem.empty())
    return problem;
  if (auto s = parse_schema(p.at("schema")); !s.problem.empty())
    return fmt::format("parameter 'schema': {}", s.problem);
  return {};
}

std::string check_sink(const params& p) {
  auto problem = check_params("json_lines", p, sink_params());
  if (!problem.empty())
    return problem;
  return check_delivery(p);
}

bool blank(std::string_view line) {
  for (char c : line)
    if (c != ' ' && c != '\t' && c != '\r')
      return false;
  return true;
}

/// The rows of a file of JSON lines, in file order. Subtask 0 reads the
/// whole file (the others nothing): a line's number is its place in the
/// file, which problems name ("line 12 of 'events.jsonl': field 'status'
/// is missing and not nullable"). Blank lines are skipped; a '\r' before
/// a '\n' is no part of the line. Checkpoints hold the offset of the next
/// line and its number.
class json_lines_source : public source {
public:
  json_lines_source(std::string path, schema s)
    : path_(std::move(path)), schema_(std::move(s)) {
  }

  ~json_lines_source() override {
    if (fd_ >= 0)
      ::close(fd_);
  }

  json_lines_source(const json_lines_source&) = delete;
  json_lines_source& operator=(const json_lines_source&) = delete;

  void open(const operator_context& ctx) override {
    if (ctx.subtask_index > 0) {
      done_ = true;
      return;
    }
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
      fail("cannot open");
    buf_.resize(read_size);
  }

  bool next(row_batch& out, size_t max_rows) override {
    if (fd_ < 0 && !done_)
      open(operator_context{});
    for (size_t produced = 0; produced < max_rows && !done_;) {
      std::string_view line;
      if (!next_line(line)) {
        done_ = true;
        break;
      }
      ++line_number_;
      if (blank(line))
        continue;
      auto problem = parse_json_line(line, schema_, out);
      if (!problem.empty())
        throw operator_error(fmt::format("line {} of '{}': {}", line_number_,
                                         path_, problem));
      ++produced;
    }
    return !done_;
  }

  bool blocking_io() const override { return true; }

  std::string snapshot_state() const override {
    state_writer w;
    w.int64(static_cast<int64_t>(offset_));
    w.int64(line_number_);
    return w.take();
  }

  /// Subtask 0 reads the file whatever the parallelism: it goes on from
  /// the old subtask 0's position, the others read nothing.
  void restore_rescaled(const std::vector<std::string>& old_states) override {
    if (!old_states.empty() && !old_states[0].empty())
      restore_state(old_states[0]);
  }

  void restore_state(const std::string& bytes) override {
    state_reader r{bytes, "json_lines"};
    offset_ = static_cast<uint64_t>(r.int64());
    line_number_ = r.int64();
    if (fd_ < 0)
      return; // not subtask 0: reads nothing
    if (::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) < 0)
      fail("cannot seek in");
    begin_ = end_ = 0;
    done_ = false;
  }

private:
  [[noreturn]] void fail(const char* what) const {
    throw operator_error(
      fmt::format("{} '{}': {}", what, path_, std::strerror(errno)));
  }

  /// The next line (valid until the next call); false at the end.
  bool next_line(std::string_view& line) {
    for (;;) {
      const char* first = buf_.data() + begin_;
      const auto* nl = static_cast<const char*>(
        std::memchr(first, '\n', end_ - begin_));
      if (nl != nullptr) {
        auto len = static_cast<size_t>(nl - first);
        take(line, len, len + 1);
        return true;
      }
      if (end_ - begin_ > max_line_length)
        throw operator_error(fmt::format(
          "line {} of '{}' is longer than {} bytes", line_number_ + 1, path_,
          max_line_length));
      if (fill() == 0) {
        if (begin_ == end_)
          return false;
        take(line, end_ - begin_, end_ - begin_); // the last, without '\n'
        return true;
      }
    }
  }

  /// The line of `len` bytes at begin_, `used` bytes with its '\n'.
  void take(std::string_view& line, size_t len, size_t used) {
    line = {buf_.data() + begin_, len};
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    begin_ += used;
    offset_ += used;
  }

  /// Moves the unread bytes to the front (growing the buffer when they
  /// fill it) and reads more; the number of bytes read.
  size_t fill() {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buf_.size() - end_ < read_size / 2)
      buf_.resize(buf_.size() * 2);
    for (;;) {
      auto n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
      if (n >= 0) {
        end_ += static_cast<size_t>(n);
        return static_cast<size_t>(n);
      }
      if (errno != EINTR)
        fail("cannot read");
    }
  }

  std::string path_;
  schema schema_;
  int fd_ = -1;
  std::vector<char> buf_;
  size_t begin_ = 0;       ///< first unread byte in buf_
  size_t end_ = 0;         ///< end of the bytes read into buf_
  uint64_t offset_ = 0;    ///< file offset of the next line
  int64_t line_number_ = 0; ///< of the last line read
  bool done_ = false;
};

} // namespace

operator_factory json_lines_factory() {
  operator_factory f;
  f.name = "json_lines";
  f.splits_operator_state = true; // its source's position, its sink's files
  f.make_source = [](const params& p) -> std::unique_ptr<source> {
    throw_if(check_source(p));
    return std::make_unique<json_lines_source>(
      p.at("path"), parse_schema(p.at("schema")).value);
  };
  f.make_sink = [](const params& p) {
    throw_if(check_sink(p));
    return make_text_sink(p, write_json_line);
  };
  f.validate = [](const params& p, role r) {
    return r == role::source ? check_source(p) : check_sink(p);
  };
  f.check_files = [](const params& p, role r) {
    return r == role::source ? check_input_path(p) : check_output_path(p);
  };
  f.path_params = {"path"};
  f.bounded = [](const params&) { return true; };
  f.guarantee = delivery_guarantee;
  f.output_schema = [](const params& p,
                       const schema_query& q) -> derived_schema {
    if (q.input != nullptr)
      return {}; // a sink: writes any rows
    if (auto problem = check_source(p); !problem.empty())
      return {{}, problem};
    return {parse_schema(p.at("schema")).value, {}};
  };
  return f;
}

} // namespace weir::ops
