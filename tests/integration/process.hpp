#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace weir::test {

/// What a finished child process left behind.
struct process_result {
  int exit_code = -1;       ///< -1 when killed by a signal or the deadline
  bool timed_out = false;
  std::string out;
  std::string err;
  long max_rss_kb = 0;      ///< peak resident memory of the child
};

/// A child process whose stdout and stderr are collected while the test
/// interacts with it. The destructor kills it if it still runs.
class running_process {
public:
  explicit running_process(const std::vector<std::string>& argv);
  ~running_process();
  running_process(const running_process&) = delete;
  running_process& operator=(const running_process&) = delete;

  /// Reads output until stderr contains `text`; false once `deadline` passed
  /// or the process closed its output first.
  bool wait_for_stderr(const std::string& text,
                       std::chrono::milliseconds deadline);

  /// The same for stdout.
  bool wait_for_stdout(const std::string& text,
                       std::chrono::milliseconds deadline);

  /// Reads what the process wrote so far, without waiting: a test that
  /// makes it log much calls this, or the full pipe blocks the process.
  void drain() {
    pump(std::chrono::milliseconds{0});
  }

  /// Sends a signal.
  void signal(int sig);

  /// The process id.
  int pid() const { return pid_; }

  /// The stderr read so far (the process keeps running).
  const std::string& stderr_so_far() const { return result_.err; }

  /// Reads the rest of the output and reaps the process (SIGKILL after
  /// `deadline`).
  process_result finish(std::chrono::milliseconds deadline);

private:
  /// Reads until `output` (stdout or stderr read so far) contains `text`.
  bool wait_for(const std::string& output, const std::string& text,
                std::chrono::milliseconds deadline);

  /// Reads whatever is ready within `timeout`; false when both pipes closed.
  bool pump(std::chrono::milliseconds timeout);

  int pid_ = -1;
  int fds_[2] = {-1, -1};
  process_result result_;
  bool reaped_ = false;
};

/// Waits until a `weir jobmanager` logged where it listens and returns that
/// "HOST:PORT"; "" after the deadline.
std::string listening_address(running_process& jobmanager,
                              std::chrono::milliseconds deadline
                              = std::chrono::seconds(30));

/// Waits until a `weir jobmanager` logged where it listens and returns
/// its REST API's "HOST:PORT" (what clients' -m names; the jobmanager
/// needs rest.port, 0 in tests); "" after the deadline or without one.
std::string rest_address(running_process& jobmanager,
                         std::chrono::milliseconds deadline
                         = std::chrono::seconds(30));

/// The flag that gives a test's jobmanager a REST API on a free port (the
/// default port, 8081, may be taken by a test running beside it).
inline const std::string any_rest_port = "-Drest.port=0";

/// Runs `argv` (argv[0] is a path) with stdin from /dev/null, collecting
/// stdout and stderr; kills it (SIGKILL) once `deadline` has passed.
process_result run_process(const std::vector<std::string>& argv,
                           std::chrono::milliseconds deadline
                           = std::chrono::seconds(120));

/// Runs the weir binary (path from the WEIR_BIN environment variable).
process_result run_weir(const std::vector<std::string>& args,
                        std::chrono::milliseconds deadline
                        = std::chrono::seconds(120));

/// A fresh directory under /tmp, removed with everything in it on
/// destruction.
class temp_dir {
public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  /// Writes `content` to `name` inside the directory; returns its path.
  std::string write(const std::string& name, const std::string& content) const;

private:
  std::string path_;
};

/// The contents of a file ("" when missing).
std::string read_file(const std::string& path);

/// A memory figure of /proc/PID/status in KiB ("VmRSS:", "VmHWM:" for the
/// peak); 0 when the process is gone.
long status_kib(int pid, const std::string& key);

/// Whether a file or directory exists.
bool exists(const std::string& path);

/// Splits into lines, without the newline characters.
std::vector<std::string> lines_of(const std::string& text);

/// The lines, sorted.
std::vector<std::string> sorted_lines(const std::string& text);

/// Where `name` is on $PATH ("" when it is not).
std::string on_path(const std::string& name);

/// A loopback port nobody listens on now (the kernel's pick for port 0); 0
/// when none could be had.
int free_port();

/// Processes whose command line mentions `text`, as "PID: ARGS" (a test's
/// own executable, integration_*, excluded).
std::vector<std::string> processes_mentioning(const std::string& text);

/// Sets an environment variable for the lifetime of the object (the weir
/// processes a test starts inherit it), then puts back what was there.
class scoped_env {
public:
  scoped_env(std::string name, const std::string& value);
  ~scoped_env();
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};

/// Path of a file in the source tree (WEIR_SOURCE_ROOT environment variable).
std::string source_path(const std::string& relative);

/// Whether `done()` holds within 30 s (polled every 20 ms: a log, a
/// client's answer, the process table).
template <class Predicate>
bool eventually(Predicate done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20)); // polling
  }
  return true;
}

} // namespace weir::test
