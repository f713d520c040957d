#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace weir {

/// What a second SIGINT/SIGTERM does once the first one was caught.
enum class second_signal {
  caught,          ///< also caught (a process loop stops at its own pace)
  ends_process,    ///< the default action: the process ends at once
};

/// Catches SIGINT and SIGTERM: a signal sets the flag stop_requested()
/// reads (the jobmanager and taskmanager loops stop, a client cancels its
/// job).
void catch_stop_signals(second_signal second = second_signal::caught);

/// Whether SIGINT or SIGTERM arrived since catch_stop_signals().
bool stop_requested();

/// Calls `fn` on a thread of its own when SIGINT or SIGTERM arrives, and at
/// once when one already did (it may be called twice): a process loop
/// waits on its mailbox for the message `fn` sends instead of waking up to
/// poll stop_requested(). A later call replaces `fn`.
void call_on_stop(std::function<void()> fn);

/// How long a process may take to stop after the first stop signal before
/// end_process_after_stop ends it.
constexpr std::chrono::seconds stop_grace{10};

/// A directory the process removes even when a watchdog ends it (an
/// application cluster's state, which its normal exit removes too).
void remove_at_exit(const std::string& dir);

/// Once a stop signal arrived, ends the process with `code` if it still
/// runs `grace` later, saying so on stderr as `who`: a subtask stuck in
/// user code or in a system call must not keep the process (or the
/// destructor of its actor system) alive. A thread of its own waits for
/// the signal; the first call arms it, later calls do nothing.
void end_process_after_stop(const char* who, int code,
                            std::chrono::milliseconds grace = stop_grace);

/// Ends the process with `code` if it still runs `grace` from now, saying
/// so on stderr as `who`, and at once on a stop signal: a process that has
/// decided to exit (its supervisor gave up) exits, whatever its teardown
/// waits for. A thread of its own waits; call it once.
void end_process_after(const char* who, int code,
                       std::chrono::milliseconds grace = stop_grace);

} // namespace weir
