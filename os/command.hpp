#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace weir::os {

/// What a finished command left behind.
struct command_result {
  /// 0 when it ran; else the errno of starting it (ENOENT: no such program).
  int start_error = 0;
  /// Its exit code; -1 when a signal ended it (the deadline's SIGKILL).
  int exit_code = -1;
  /// The signal that ended it (0: none).
  int signal = 0;
  bool timed_out = false;
  /// It wrote more than the output limit (what was over it is dropped).
  bool output_cut = false;
  std::string out;
  std::string err;

  /// Whether it ran and exited with code 0.
  bool ok() const { return start_error == 0 && exit_code == 0; }

  /// One line saying why it did not succeed: the start error, the deadline,
  /// or its exit code and the first line of its stderr.
  std::string problem() const;
};

/// Runs `argv` (argv[0] a path, or a name looked up on PATH) in a process
/// group of its own, with stdin from /dev/null, no other descriptor of
/// this process's beyond stdout and stderr (pipes), and this process's
/// environment less the variables starting with one of `drop_env`, and
/// collects its output (at most `max_output` bytes of each stream, the
/// rest read and dropped); kills the group (SIGKILL) past `deadline`.
/// Blocks the calling thread: for detached actors and plain threads only.
command_result run_command(const std::vector<std::string>& argv,
                           std::chrono::milliseconds deadline,
                           const std::vector<std::string>& drop_env = {},
                           size_t max_output = SIZE_MAX);

} // namespace weir::os
