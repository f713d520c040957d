#include "cluster/stop_signal.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <mutex>
#include <thread>

#include <fmt/format.h>

namespace weir {

namespace {

volatile std::sig_atomic_t stop_flag = 0;

/// The write end of the pipe the watchdog of end_process_after_stop reads
/// (-1: none armed); writing is async-signal-safe.
volatile std::sig_atomic_t watchdog_fd = -1;

extern "C" void on_stop_signal(int) {
  stop_flag = 1;
  if (watchdog_fd >= 0) {
    char byte = 1;
    auto saved = errno;
    [[maybe_unused]] auto n = ::write(watchdog_fd, &byte, 1);
    errno = saved;
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

void end_process_after_stop(const char* who, int code,
                            std::chrono::milliseconds grace) {
  static std::once_flag armed;
  std::call_once(armed, [&] {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return;
    watchdog_fd = fds[1];
    std::thread{[who, code, grace, in = fds[0]] {
      // The handler sets the flag before it writes; a signal that came
      // before the pipe existed set only the flag.
      while (!stop_requested()) {
        char byte = 0;
        auto n = ::read(in, &byte, 1);
        if (n == 0 || (n < 0 && errno != EINTR))
          return; // the pipe broke: no watchdog
      }
      std::this_thread::sleep_for(grace); // the process should be gone by now
      fmt::print(stderr, "{}: still running {} ms after the stop signal; "
                         "exiting\n", who, grace.count());
      std::fflush(stderr);
      ::_exit(code);
    }}.detach();
  });
}

} // namespace weir
