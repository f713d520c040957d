#include "cluster/stop_signal.hpp"

#include <filesystem>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace weir {

namespace {

volatile std::sig_atomic_t stop_flag = 0;

/// The write end of the pipe the watchdog of end_process_after_stop reads
/// (-1: none armed); writing is async-signal-safe.
volatile std::sig_atomic_t watchdog_fd = -1;

/// The same for the watchdog of end_process_after.
volatile std::sig_atomic_t exit_watchdog_fd = -1;

/// The same for the thread of call_on_stop.
volatile std::sig_atomic_t notify_fd = -1;

void wake(int fd) {
  if (fd < 0)
    return;
  char byte = 1;
  [[maybe_unused]] auto n = ::write(fd, &byte, 1);
}

extern "C" void on_stop_signal(int) {
  stop_flag = 1;
  auto saved = errno;
  wake(watchdog_fd);
  wake(exit_watchdog_fd);
  wake(notify_fd);
  errno = saved;
}

/// Waits up to `grace` for a byte on `in`; true when one came (a stop
/// signal), false at the deadline.
bool signalled_within(int in, std::chrono::milliseconds grace) {
  using clock = std::chrono::steady_clock;
  auto until = clock::now() + grace;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{in, POLLIN, 0};
    auto n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      return false;
  }
}

} // namespace

void catch_stop_signals(second_signal second) {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = second == second_signal::ends_process ? SA_RESETHAND : 0;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() {
  return stop_flag != 0;
}

namespace {

/// Opens the pipe a stop signal writes to (its write end goes to `slot`)
/// and runs `watch` with its read end on a thread of its own; nothing when
/// no pipe can be had.
template <class Watch>
void start_watchdog(volatile std::sig_atomic_t& slot, Watch watch) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return;
  slot = fds[1];
  std::thread{[watch, in = fds[0]] { watch(in); }}.detach();
}

/// Ends the process with `code` after one line on stderr.
/// Removed by a forced exit too (remove_at_exit); set before any watchdog
/// can fire.
std::string& directory_to_remove() {
  static std::string dir;
  return dir;
}

[[noreturn]] void end_now(const char* who, int code, const std::string& why) {
  fmt::print(stderr, "{}: {}\n", who, why);
  std::fflush(stderr);
  if (!directory_to_remove().empty()) {
    std::error_code ec;
    std::filesystem::remove_all(directory_to_remove(), ec);
  }
  ::_exit(code);
}

} // namespace

namespace {

std::mutex on_stop_mutex;
std::function<void()> on_stop; // guarded by on_stop_mutex

void call_on_stop_now() {
  std::lock_guard<std::mutex> guard{on_stop_mutex};
  if (on_stop)
    on_stop();
}

} // namespace

void call_on_stop(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> guard{on_stop_mutex};
    on_stop = std::move(fn);
  }
  static std::once_flag armed;
  std::call_once(armed, [] {
    start_watchdog(notify_fd, [](int in) {
      char byte = 0;
      auto n = ::read(in, &byte, 1);
      while (n < 0 && errno == EINTR)
        n = ::read(in, &byte, 1);
      if (n == 1)
        call_on_stop_now();
    });
  });
  // A signal that came before the pipe existed set only the flag.
  if (stop_requested())
    call_on_stop_now();
}

void remove_at_exit(const std::string& dir) {
  directory_to_remove() = dir;
}

void end_process_after_stop(const char* who, int code,
                            std::chrono::milliseconds grace) {
  static std::once_flag armed;
  std::call_once(armed, [&] {
    start_watchdog(watchdog_fd, [who, code, grace](int in) {
      // The handler sets the flag before it writes; a signal that came
      // before the pipe existed set only the flag.
      while (!stop_requested()) {
        char byte = 0;
        auto n = ::read(in, &byte, 1);
        if (n == 0 || (n < 0 && errno != EINTR))
          return; // the pipe broke: no watchdog
      }
      std::this_thread::sleep_for(grace); // the process should be gone by now
      end_now(who, code,
              fmt::format("still running {} ms after the stop signal; exiting",
                          grace.count()));
    });
  });
}

void end_process_after(const char* who, int code,
                       std::chrono::milliseconds grace) {
  static std::once_flag armed;
  std::call_once(armed, [&] {
    start_watchdog(exit_watchdog_fd, [who, code, grace](int in) {
      if (signalled_within(in, grace))
        end_now(who, code, "a stop signal while exiting; exiting now");
      end_now(who, code,
              fmt::format("still running {} ms after deciding to exit; "
                          "exiting",
                          grace.count()));
    });
  });
}

} // namespace weir
