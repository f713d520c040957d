#pragma once

// What a taskmanager process says when user code crashes it (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGABRT): the operator chain marks each call
// into a user operator with a note (crash_scope); the signal handler
// writes the crashing thread's note to a pipe, waits briefly for an
// acknowledgement (the note reached the subtask's JobMaster), and lets the
// signal kill the process as it would have.
// docs/operations.md § User code that crashes.

namespace weir {

/// Marks the calling thread as running a user operator for its lifetime
/// (restoring the previous mark after). `note` is pre-formatted, as the
/// handler can format nothing: "<attempt id>\t<who>", e.g.
/// "4f…\toperator 'segv' (vertex 'b', subtask 1/2)"; it must outlive the
/// scope. Cheap: a thread-local store (and, once per thread in a process
/// with a handler, an alternate signal stack, so that a stack overflow is
/// reported too).
class crash_scope {
public:
  explicit crash_scope(const char* note) noexcept;
  ~crash_scope();
  crash_scope(const crash_scope&) = delete;
  crash_scope& operator=(const crash_scope&) = delete;

private:
  const char* previous_;
};

/// Installs the handler for the crash signals, once per process. On a
/// crash in a crash_scope it writes "<note>\t<signal>\n" to `note_fd` in
/// one write, a line "weir: <who> crashed the TaskExecutor (signal N)" to
/// stderr, and waits up to `ack_timeout_ms` for a byte on `ack_fd`; then
/// the default action runs (the process ends by the signal). A crash
/// outside user code gets the default action at once.
void install_crash_handler(int note_fd, int ack_fd, int ack_timeout_ms);

/// Restores the default actions (the pipes may close after this).
void uninstall_crash_handler();

} // namespace weir
