#pragma once

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

} // namespace weir
