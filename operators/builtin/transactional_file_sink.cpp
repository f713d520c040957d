// The exactly-once mode of the text_file sink: a two-phase commit on
// checkpoints (Flink's FileSink with pending and committed part files).
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <algorithm>
#include <map>
#include <vector>
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
    parallelism_ = std::max<int32_t>(ctx.parallelism, 1);
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
    next_ = settle(bytes, subtask_);
    fresh_ = false;
  }

  /// At another parallelism: this subtask settles the files of the old
  /// subtasks whose index is its own modulo the parallelism now (so each
  /// old subtask's by exactly one), and numbers its own files after every
  /// file its index has, so that no committed file is touched.
  void restore_rescaled(const std::vector<std::string>& old_states) override {
    next_ = 0;
    for (size_t j = 0; j < old_states.size(); ++j) {
      auto old = static_cast<int32_t>(j);
      if (old_states[j].empty() || old % parallelism_ != subtask_)
        continue;
      auto next = settle(old_states[j], old);
      if (old == subtask_)
        next_ = next;
    }
    each_file(subtask_, [&](int64_t n, const fs::path&) {
      next_ = std::max(next_, n + 1);
    });
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

  /// Subtask `s`'s state as a checkpoint left it: the restored checkpoint
  /// completed, so its pending files are committed, and files numbered
  /// after it are removed. Returns the next file number.
  int64_t settle(const std::string& bytes, int32_t s) {
    state_reader r{bytes, "text_file"};
    auto next = r.int64();
    auto count = r.int64();
    std::map<int64_t, int64_t> covered;
    for (int64_t i = 0; i < count; ++i) {
      auto n = r.int64();
      covered.emplace(n, r.int64());
    }
    for (auto& [n, checkpoint] : covered)
      publish(n, s);
    remove_files([&](int64_t n) { return n >= next; }, s);
    return next;
  }

  std::string final_name(int64_t n, int32_t s) const {
    return fmt::format("{}/part-{}-{}", dir_, s, n);
  }
  std::string final_name(int64_t n) const { return final_name(n, subtask_); }

  std::string hidden(int64_t n, const char* what, int32_t s) const {
    return fmt::format("{}/.part-{}-{}.{}", dir_, s, n, what);
  }
  std::string hidden(int64_t n, const char* what) const {
    return hidden(n, what, subtask_);
  }

  void publish(int64_t n, int32_t s) {
    auto pending = hidden(n, "pending", s);
    if (::rename(pending.c_str(), final_name(n, s).c_str()) != 0
        && errno != ENOENT) // committed before
      fail("cannot commit", pending);
  }
  void publish(int64_t n) { publish(n, subtask_); }

  /// Calls `f(number, path)` for each file of subtask `s` (final, pending,
  /// in progress).
  template <class F>
  void each_file(int32_t s, F&& f) {
    auto visible = fmt::format("part-{}-", s);
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
      if (auto n = parse_int64(rest.substr(0, rest.find('.'))))
        f(*n, entry.path());
    }
  }

  /// Removes subtask `s`'s files whose number satisfies `pred`.
  template <class Pred>
  void remove_files(Pred pred, int32_t s) {
    std::vector<fs::path> doomed;
    each_file(s, [&](int64_t n, const fs::path& p) {
      if (pred(n))
        doomed.push_back(p);
    });
    std::error_code ec;
    for (auto& p : doomed)
      fs::remove(p, ec);
  }
  template <class Pred>
  void remove_files(Pred pred) {
    remove_files(pred, subtask_);
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
  int32_t parallelism_ = 1;
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
