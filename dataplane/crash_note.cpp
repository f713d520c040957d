#include "dataplane/crash_note.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <poll.h>
#include <unistd.h>

namespace weir {

namespace {

constexpr int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/// The current thread's note (nullptr outside user code). Static TLS of
/// the executable: reading it in a signal handler is safe.
thread_local const char* current_note = nullptr;

std::atomic<bool> installed{false};
std::atomic<bool> crashing{false};
int note_fd = -1;
int ack_fd = -1;
int ack_timeout = 0;

/// The thread's alternate signal stack, freed when the thread ends.
struct alt_stack {
  void* memory = nullptr;
  ~alt_stack() {
    if (memory == nullptr)
      return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
    std::free(memory);
  }
};

thread_local alt_stack thread_stack;

void ensure_alt_stack() {
  if (thread_stack.memory != nullptr)
    return;
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE))
    return; // the thread has one already (a sanitizer's, say)
  constexpr size_t size = 64 * 1024;
  stack_t st{};
  st.ss_sp = std::malloc(size);
  st.ss_size = size;
  if (st.ss_sp == nullptr || ::sigaltstack(&st, nullptr) != 0) {
    std::free(st.ss_sp);
    return;
  }
  thread_stack.memory = st.ss_sp;
}

// -- async-signal-safe helpers -------------------------------------------------

/// Appends `s` to buf[0..cap) at `n`.
void append(char* buf, size_t cap, size_t& n, const char* s) {
  while (*s != '\0' && n + 1 < cap)
    buf[n++] = *s++;
}

void append_int(char* buf, size_t cap, size_t& n, int v) {
  char digits[12];
  size_t k = 0;
  do {
    digits[k++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && k < sizeof digits);
  while (k > 0 && n + 1 < cap)
    buf[n++] = digits[--k];
}

void write_all(int fd, const char* s, size_t n) {
  while (n > 0) {
    auto w = ::write(fd, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void report(const char* note, int sig) {
  const char* who = note;
  while (*who != '\0' && *who != '\t')
    ++who;
  who = *who == '\t' ? who + 1 : note;
  char line[1024];
  size_t n = 0;
  append(line, sizeof line, n, "weir: ");
  append(line, sizeof line, n, who);
  append(line, sizeof line, n, " crashed the TaskExecutor (signal ");
  append_int(line, sizeof line, n, sig);
  append(line, sizeof line, n, ")\n");
  write_all(STDERR_FILENO, line, n);
  if (note_fd < 0)
    return;
  // One write below PIPE_BUF: the watcher never sees half a note.
  n = 0;
  append(line, sizeof line, n, note);
  append(line, sizeof line, n, "\t");
  append_int(line, sizeof line, n, sig);
  append(line, sizeof line, n, "\n");
  write_all(note_fd, line, n);
  pollfd ack{ack_fd, POLLIN, 0};
  ::poll(&ack, 1, ack_timeout);
}

extern "C" void on_crash_signal(int sig, siginfo_t*, void*) {
  int saved = errno;
  const char* note = current_note;
  if (note != nullptr) {
    if (!crashing.exchange(true))
      report(note, sig);
    else
      ::poll(nullptr, 0, ack_timeout); // another thread reports its crash
  }
  // The default action, once this handler returns (the signal is blocked
  // until then): the process ends by the signal, as without a handler.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
  errno = saved;
}

} // namespace

crash_scope::crash_scope(const char* note) noexcept
  : previous_(current_note) {
  if (installed.load(std::memory_order_relaxed))
    ensure_alt_stack();
  current_note = note;
}

crash_scope::~crash_scope() {
  current_note = previous_;
}

void install_crash_handler(int notes, int acks, int ack_timeout_ms) {
  note_fd = notes;
  ack_fd = acks;
  ack_timeout = ack_timeout_ms;
  struct sigaction sa {};
  sa.sa_sigaction = on_crash_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (auto sig : crash_signals)
    ::sigaction(sig, &sa, nullptr);
  installed = true;
}

void uninstall_crash_handler() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (auto sig : crash_signals)
    ::sigaction(sig, &dfl, nullptr);
  installed = false;
}

} // namespace weir
