#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/builtin/file_io.hpp"
#include "operators/params.hpp"
#include "operators/formats/row_formats.hpp"

namespace weir::ops {

namespace {

/// Output is written once this much is buffered.
constexpr size_t flush_bytes = 256 * 1024;

const std::vector<param_spec>& text_file_params() {
  static const std::vector<param_spec> specs{
    {"path", param_kind::text, true},
    {"delivery", param_kind::text, false},
    {"format", param_kind::text, false},
  };
  return specs;
}

/// Writes one line per row (by its line_writer) to `<final>.inprogress`
/// and renames it to `<final>` in finish(); abort() (or destruction before
/// finish) removes it, so a failed or canceled job leaves no partial output
/// file. `<final>` is `path` when the vertex runs with parallelism 1, else
/// `path/part-<i>` (the directory is created).
///
/// Several attempts of one subtask can hold `<final>.inprogress` at once: a
/// restarted job's new attempt, and the old one on a worker that was
/// declared lost but still runs until it notices (it was hung, or cut off).
/// Each attempt writes its own file: open() replaces the name with a fresh
/// file rather than truncating the old attempt's, and abort() and finish()
/// touch the name only while it is still their file, so a stale attempt can
/// neither delete nor publish a newer attempt's output.
class text_file_sink : public sink {
public:
  text_file_sink(std::string path, line_writer w)
    : path_(std::move(path)), write_line_(w) {
  }

  ~text_file_sink() override { abort(); }

  text_file_sink(const text_file_sink&) = delete;
  text_file_sink& operator=(const text_file_sink&) = delete;

  void open(const operator_context& ctx) override {
    abort();
    if (ctx.input != nullptr)
      schema_ = *ctx.input;
    final_ = path_;
    if (ctx.parallelism > 1) {
      make_directory();
      final_ = fmt::format("{}/part-{}", path_, ctx.subtask_index);
    }
    // The client checked this, but a job may come from elsewhere, and the
    // file system may have changed since.
    throw_if(special_output_problem(final_));
    in_progress_ = final_ + ".inprogress";
    // A leftover of another attempt (a killed worker's, or one that still
    // runs) is replaced, not truncated and shared.
    for (int tries = 0; fd_ < 0; ++tries) {
      if (::unlink(in_progress_.c_str()) != 0 && errno != ENOENT)
        fail("cannot remove", in_progress_);
      fd_ = ::open(in_progress_.c_str(),
                   O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd_ < 0 && (errno != EEXIST || tries == 3))
        fail("cannot create", in_progress_);
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
      fail("cannot stat", in_progress_);
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    buf_.reserve(flush_bytes + 64 * 1024);
  }

  void write(const row_batch& in) override {
    if (fd_ < 0)
      throw operator_error(fmt::format("text_file sink '{}' is not open", path_));
    append_lines(buf_, in, schema_, write_line_);
    if (buf_.size() >= flush_bytes)
      flush();
  }

  void finish() override {
    if (finished_)
      return; // the file is final already
    if (fd_ < 0)
      throw operator_error(fmt::format("text_file sink '{}' is not open", path_));
    flush();
    if (::fdatasync(fd_) != 0 && errno != EINVAL)
      fail("cannot sync", in_progress_);
    ::close(fd_);
    fd_ = -1;
    if (!owns_in_progress()) {
      // A newer attempt of this subtask took the name over: this attempt
      // is stale and must not publish (nor remove) that attempt's file.
      buf_.clear();
      throw operator_error(fmt::format(
        "'{}' was replaced by another attempt of this subtask", in_progress_));
    }
    if (::rename(in_progress_.c_str(), final_.c_str()) != 0) {
      auto saved = errno;
      if (owns_in_progress())
        ::unlink(in_progress_.c_str());
      errno = saved;
      fail("cannot rename", in_progress_);
    }
    finished_ = true;
  }

  void abort() override {
    if (fd_ < 0)
      return;
    ::close(fd_);
    fd_ = -1;
    if (owns_in_progress())
      ::unlink(in_progress_.c_str());
    buf_.clear();
  }

  bool blocking_io() const override { return true; }

private:
  bool finished_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;

  /// Whether `<final>.inprogress` still names the file this attempt writes.
  bool owns_in_progress() const {
    struct stat st {};
    return ::stat(in_progress_.c_str(), &st) == 0 && st.st_dev == dev_
           && st.st_ino == ino_;
  }

  [[noreturn]] static void fail(const char* what, const std::string& path) {
    throw operator_error(
      fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
  }

  void make_directory() {
    if (::mkdir(path_.c_str(), 0755) == 0)
      return;
    struct stat st {};
    if (errno == EEXIST && ::stat(path_.c_str(), &st) == 0
        && S_ISDIR(st.st_mode))
      return;
    fail("cannot create directory", path_);
  }

  void flush() {
    write_fully(fd_, buf_, in_progress_);
    buf_.clear();
  }

  std::string path_;
  line_writer write_line_;
  schema schema_;
  std::string final_;
  std::string in_progress_;
  int fd_ = -1;
  std::string buf_;
};

} // namespace

std::string check_delivery(const params& p) {
  if (auto d = p.find("delivery");
      d != p.end() && d->second != "at-least-once" && d->second != "exactly-once")
    return fmt::format("parameter 'delivery': expected at-least-once or "
                       "exactly-once, got '{}'",
                       d->second);
  if (auto d = p.find("delivery");
      d != p.end() && d->second == "exactly-once" && p.at("path") == "-")
    return "parameter 'delivery': exactly-once needs a directory 'path', not "
           "'-'";
  return {};
}

sink_guarantee delivery_guarantee(const params& p) {
  auto d = p.find("delivery");
  return d != p.end() && d->second == "exactly-once"
           ? sink_guarantee::external_exactly_once
           : sink_guarantee::external_at_least_once;
}

std::string check_text_file_sink_params(const params& p) {
  auto problem = check_params("text_file", p, text_file_params());
  if (!problem.empty())
    return problem;
  if (auto f = p.find("format");
      f != p.end() && f->second != "tsv" && f->second != "csv")
    return fmt::format("parameter 'format': expected tsv or csv, got '{}'",
                       f->second);
  return check_delivery(p);
}

std::string special_output_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)
      || S_ISDIR(st.st_mode))
    return {};
  auto kind = S_ISCHR(st.st_mode)    ? "a character device"
              : S_ISBLK(st.st_mode)  ? "a block device"
              : S_ISFIFO(st.st_mode) ? "a FIFO"
              : S_ISSOCK(st.st_mode) ? "a socket"
                                     : "not a regular file";
  return fmt::format("parameter 'path': '{}' is {}: a file sink writes a "
                     "new file and renames it over its output, which would "
                     "replace it (write to a file, or use the discard sink "
                     "to drop rows)",
                     path, kind);
}

std::string check_output_path(const params& p) {
  std::string path = p.at("path");
  if (path == "-")
    return {};
  if (auto problem = special_output_problem(path); !problem.empty())
    return problem;
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  auto dir = std::filesystem::path{path}.parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
    return fmt::format("parameter 'path': directory '{}' does not exist",
                       dir.string());
  return {};
}

std::string check_text_file_sink(const params& p) {
  auto problem = check_text_file_sink_params(p);
  if (!problem.empty())
    return problem;
  return check_output_path(p);
}

void write_tsv_line(std::string& out, const row_batch& b, size_t i,
                    const schema&) {
  append_row_text(out, b, i);
}

void write_csv_line(std::string& out, const row_batch& b, size_t i,
                    const schema&) {
  append_delimited(out, b, i, delimited_format{',', true});
}

void write_json_line(std::string& out, const row_batch& b, size_t i,
                     const schema& s) {
  append_json_line(out, b, i, s);
}

void append_lines(std::string& out, const row_batch& b, const schema& s,
                  line_writer w) {
  for (size_t i = 0; i < b.rows; ++i)
    w(out, b, i, s);
}

std::unique_ptr<sink> make_text_sink(const params& p, line_writer w) {
  if (p.at("path") == "-")
    return make_stdout_sink(w);
  if (auto d = p.find("delivery"); d != p.end() && d->second == "exactly-once")
    return make_transactional_file_sink(p.at("path"), w);
  return std::make_unique<text_file_sink>(p.at("path"), w);
}

std::unique_ptr<sink> make_text_file_sink(const params& p) {
  throw_if(check_text_file_sink_params(p));
  return make_text_sink(p, text_param(p, "format", "tsv") == "csv"
                             ? write_csv_line
                             : write_tsv_line);
}

} // namespace weir::ops
