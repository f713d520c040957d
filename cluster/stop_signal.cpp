#include "cluster/stop_signal.hpp"

#include <signal.h>

#include <csignal>

namespace weir {

namespace {

volatile std::sig_atomic_t stop_flag = 0;

extern "C" void on_stop_signal(int) {
  stop_flag = 1;
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

} // namespace weir
