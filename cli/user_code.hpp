#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cxxopts.hpp>

#include "client/job_service.hpp"
#include "messages/job_graph.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir::ops {
class registry;
} // namespace weir::ops

namespace weir::cli {

/// A job's user code as the client prepared it: what the JobGraph
/// records, the bytes to upload, and the operators (built-in and the
/// libraries') to check the job against.
struct prepared_code {
  user_code code;
  std::vector<std::pair<std::string, std::string>> blobs; // hash, bytes
  const ops::registry* operators = nullptr;
};

/// Adds --libjars, --file, -C/--classpath and -b/--disableSubmitOptimization
/// to `opts`.
void add_user_code_flags(cxxopts::Options& opts);

/// Reads and hashes the libraries and files the flags name, and loads the
/// libraries here to check the job's operators. `extra_libraries` come
/// first (the driver library of `weir run -D`). Prints a one-line error
/// naming the flag and file and returns nothing when one is unusable.
std::optional<prepared_code>
prepare_user_code(const std::string& action, const cxxopts::ParseResult& flags,
                  const std::vector<std::string>& extra_libraries = {});

/// Stores the blobs in the cluster (before the job is submitted). Prints a
/// one-line error and returns false when the cluster refuses.
bool upload_blobs(client::job_service& jobs, const prepared_code& code,
                  const std::string& action);

} // namespace weir::cli
