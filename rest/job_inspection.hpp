#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "messages/job_graph.hpp"

namespace weir {

/// What a REST submission asks to run: its spec (JSON text), parameters,
/// default parallelism, configuration overrides and the paths of its
/// uploaded libraries.
struct job_inspection {
  std::string spec;
  std::map<std::string, std::string> params;
  std::optional<int32_t> parallelism;
  std::map<std::string, std::string> config;
  std::vector<std::string> libraries;
};

/// Limits of the child process that inspects a submission.
struct inspection_limits {
  std::chrono::milliseconds timeout{30000};
  int64_t memory_mb = 2048;
};

/// Resolves the submission's JobGraph (its spec checked and its schemas
/// derived against the operators of its libraries, as `weir run` does) in
/// a short-lived child process, `weir inspect-job` (this process's own
/// executable), never in this
/// one: a library's constructor runs as soon as it is loaded, and what it
/// does (crash, hang, allocate, anything) stays in the child, which has a
/// deadline and an address-space limit. `work_dir` holds the request and
/// result files. On failure the error's context is one line: the spec's or
/// library's problem as `weir run` names it, or what became of the child.
/// Blocks the calling thread (a REST worker).
[[nodiscard]] caf::expected<job_graph> inspect_in_child(const job_inspection& what,
                                          const std::string& work_dir,
                                          const inspection_limits& limits);

/// The child's side (`weir inspect-job REQUEST RESULT MEMORY_MB`): limits
/// its own address space, reads the request file, loads the libraries,
/// resolves the graph and writes it (or the problem) to the result file.
/// Its exit code: 0 resolved, 2 refused, 3 out of memory.
int run_job_inspection(const std::vector<std::string>& args);

} // namespace weir
