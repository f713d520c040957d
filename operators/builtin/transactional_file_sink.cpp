// The exactly-once mode of the text_file sink: a two-phase commit on
// checkpoints (Flink's FileSink with pending and committed part files).
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/builtin/file_io.hpp"
#include "operators/params.hpp"
#include "operators/state_codec.hpp"

namespace weir::ops {

namespace {

namespace fs = std::filesystem;

constexpr size_t flush_bytes = 256 * 1024;

/// Subtask s writes part files `path/part-<s>-<n>` (n = 0, 1, ...). Rows,
/// as lines by its line_writer, go to a hidden in-progress file; at
/// checkpoint c's barrier that file becomes pending
/// (`.part-<s>-<n>.pending`, phase one), and once the
/// checkpoint completed everywhere it is renamed to its final name (phase
/// two). A restore from checkpoint c commits c's pending files and deletes
/// every file of this subtask numbered after c, so the committed output
/// holds each record exactly once however often the job fails. Without a
/// checkpoint to restore, an attempt starts with no files of its subtask.
/// The end of a bounded input commits everything.
class transactional_file_sink : public sink {
public:
  transactional_file_sink(std::string dir, line_writer w)
    : dir_(std::move(dir)), write_line_(w) {
  }

  ~transactional_file_sink() override { abort(); }

  void open(const operator_context& ctx) override {
    subtask_ = ctx.subtask_index;
    if (ctx.input != nullptr)
      schema_ = *ctx.input;
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec)
      throw operator_error(fmt::format("cannot create directory '{}': {}", dir_,
                                       ec.message()));
    fresh_ = true;
  }

  void write(const row_batch& in) override {
    start();
    append_lines(buf_, in, schema_, write_line_);
    if (buf_.size() >= flush_bytes)
      flush();
  }

  void prepare_commit(int64_t checkpoint) override {
    start();
    if (fd_ < 0 && buf_.empty())
      return; // nothing written since the last checkpoint
    close_current();
    auto pending = hidden(next_, "pending");
    if (::rename(in_progress_.c_str(), pending.c_str()) != 0)
      fail("cannot rename", in_progress_);
    pending_.emplace(next_, checkpoint);
    ++next_;
  }

  std::string snapshot_state() const override {
    state_writer w;
    w.int64(next_);
    w.int64(static_cast<int64_t>(pending_.size()));
    for (auto& [n, checkpoint] : pending_) {
      w.int64(n);
      w.int64(checkpoint);
    }
    return w.take();
  }

  void restore_state(const std::string& bytes) override {
    state_reader r{bytes, "text_file"};
    next_ = r.int64();
    auto count = r.int64();
    std::map<int64_t, int64_t> covered;
    for (int64_t i = 0; i < count; ++i) {
      auto n = r.int64();
      covered.emplace(n, r.int64());
    }
    // The restored checkpoint completed: its pending files are committed.
    for (auto& [n, checkpoint] : covered)
      publish(n);
    remove_files([&](int64_t n) { return n >= next_; });
    fresh_ = false;
  }

  void commit(int64_t checkpoint) override {
    for (auto i = pending_.begin(); i != pending_.end();) {
      if (i->second <= checkpoint) {
        publish(i->first);
        i = pending_.erase(i);
      } else {
        ++i;
      }
    }
  }

  void finish() override {
    start();
    if (fd_ >= 0 || !buf_.empty()) {
      close_current();
      if (::rename(in_progress_.c_str(), final_name(next_).c_str()) != 0)
        fail("cannot rename", in_progress_);
      ++next_;
    }
    for (auto& [n, checkpoint] : pending_)
      publish(n);
    pending_.clear();
  }

  void abort() override {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
      ::unlink(in_progress_.c_str());
    }
    buf_.clear();
  }

private:
  /// A fresh start (no checkpoint restored): no files of this subtask.
  void start() {
    if (!fresh_)
      return;
    fresh_ = false;
    remove_files([](int64_t) { return true; });
  }

  std::string final_name(int64_t n) const {
    return fmt::format("{}/part-{}-{}", dir_, subtask_, n);
  }

  std::string hidden(int64_t n, const char* what) const {
    return fmt::format("{}/.part-{}-{}.{}", dir_, subtask_, n, what);
  }

  void publish(int64_t n) {
    auto pending = hidden(n, "pending");
    if (::rename(pending.c_str(), final_name(n).c_str()) != 0
        && errno != ENOENT) // committed before
      fail("cannot commit", pending);
  }

  /// Removes this subtask's files (final, pending, in progress) whose
  /// number satisfies `pred`.
  template <class Pred>
  void remove_files(Pred pred) {
    auto visible = fmt::format("part-{}-", subtask_);
    auto invisible = "." + visible;
    std::error_code ec;
    for (auto& entry : fs::directory_iterator(dir_, ec)) {
      auto name = entry.path().filename().string();
      const std::string* prefix = nullptr;
      if (name.rfind(visible, 0) == 0)
        prefix = &visible;
      else if (name.rfind(invisible, 0) == 0)
        prefix = &invisible;
      if (prefix == nullptr)
        continue;
      auto rest = name.substr(prefix->size());
      auto n = parse_int64(rest.substr(0, rest.find('.')));
      if (n && pred(*n))
        fs::remove(entry.path(), ec);
    }
  }

  void open_current() {
    // A name of its own per attempt: an attempt on a worker that was
    // declared lost cannot touch this one's file.
    std::random_device rd;
    in_progress_ = hidden(next_, "inprogress") + fmt::format(".{:x}", rd());
    fd_ = ::open(in_progress_.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0)
      fail("cannot create", in_progress_);
  }

  void flush() {
    if (fd_ < 0)
      open_current();
    write_fully(fd_, buf_, in_progress_);
    buf_.clear();
  }

  /// Writes what is buffered, syncs and closes the in-progress file.
  void close_current() {
    flush();
    if (::fsync(fd_) != 0)
      fail("cannot sync", in_progress_);
    ::close(fd_);
    fd_ = -1;
  }

  [[noreturn]] static void fail(const char* what, const std::string& path) {
    throw operator_error(
      fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
  }

  std::string dir_;
  line_writer write_line_;
  schema schema_;
  int32_t subtask_ = 0;
  bool fresh_ = true;
  int64_t next_ = 0;
  std::map<int64_t, int64_t> pending_; ///< part number → checkpoint id
  std::string in_progress_;
  int fd_ = -1;
  std::string buf_;
};

} // namespace

std::unique_ptr<sink> make_transactional_file_sink(const std::string& dir,
                                                   line_writer w) {
  return std::make_unique<transactional_file_sink>(dir, w);
}

} // namespace weir::ops
