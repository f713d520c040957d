#pragma once

#include <string>
#include <vector>

namespace weir::cli {

/// `weir run`: runs a job on the embedded local cluster.
int run_action(const std::vector<std::string>& args);

/// `weir info`: prints a job's execution plan without running it.
int info_action(const std::vector<std::string>& args);

} // namespace weir::cli
