#pragma once

#include <memory>
#include <string>

#include "messages/ids.hpp"
#include "messages/job_master.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// Reports user code that crashes a taskmanager process (SIGSEGV, SIGBUS,
/// SIGFPE, SIGILL, SIGABRT) to the JobMaster of the crashed subtask, so
/// that the job fails with "operator 'X' (vertex 'v', subtask i/n) crashed
/// the TaskExecutor (signal 11)" instead of a lost link. It installs the
/// signal handler (dataplane/crash_note.hpp) and runs a thread that reads
/// the handler's notes, asks the subtask's JobMaster (crashed_atom) and
/// acknowledges once it answered (or after a deadline), so the process
/// dies only after its cause was delivered. One per process, for its
/// lifetime. docs/operations.md § User code that crashes.
class crash_watch {
public:
  explicit crash_watch(caf::actor_system& sys);
  ~crash_watch();
  crash_watch(const crash_watch&) = delete;
  crash_watch& operator=(const crash_watch&) = delete;

  /// Crashes of subtask `attempt` go to `jm` (the subtask actor calls this
  /// when spawned; nothing happens without a watch in the process).
  static void route(execution_attempt_id attempt, job_master_actor jm);
  /// The subtask ended.
  static void forget(execution_attempt_id attempt);

  /// The cause a JobMaster gets for a note line "<attempt>\t<who>\t<signal>"
  /// (its attempt and cause; an empty cause for a line that is not one).
  static std::pair<std::string, std::string> parse_note(const std::string& line);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace weir
