#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace weir {

/// What a finished command left behind.
struct command_result {
  /// 0 when it ran; else the errno of starting it (ENOENT: no such program).
  int start_error = 0;
  /// Its exit code; -1 when a signal ended it (the deadline's SIGKILL).
  int exit_code = -1;
  bool timed_out = false;
  std::string out;
  std::string err;

  /// Whether it ran and exited with code 0.
  bool ok() const { return start_error == 0 && exit_code == 0; }

  /// One line saying why it did not succeed: the start error, the deadline,
  /// or its exit code and the first line of its stderr.
  std::string problem() const;
};

/// Runs `argv` (argv[0] a path, or a name looked up on PATH) in a process
/// group of its own, with stdin from /dev/null and this process's
/// environment less the variables starting with one of `drop_env`, and
/// collects its output; kills the group (SIGKILL) past `deadline`. Blocks
/// the calling thread: for detached actors and plain threads only.
command_result run_command(const std::vector<std::string>& argv,
                           std::chrono::milliseconds deadline,
                           const std::vector<std::string>& drop_env = {});

} // namespace weir
