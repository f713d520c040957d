#pragma once

namespace weir {

/// Writes one event line (timestamp and component, as log_event does) if
/// the event log is on, with a single write(2) and no allocation:
/// async-signal-safe, for a signal handler that ends the process. `line` is
/// cut at 400 bytes.
void log_event_from_signal_handler(const char* line) noexcept;

} // namespace weir
