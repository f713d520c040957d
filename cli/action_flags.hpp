#pragma once

#include <string>
#include <vector>

#include <cxxopts.hpp>

namespace weir::cli {

// Each action's options, built next to the action: what `weir ACTION
// --help` lists, what its command line is checked against, and what the
// docs test compares with docs/configuration.md's flag tables.

/// `weir run SPEC` (job mode).
cxxopts::Options run_flags();
/// `weir run -D` (driver mode).
cxxopts::Options driver_run_flags();
/// `weir info`.
cxxopts::Options info_flags();
/// `weir jobmanager`.
cxxopts::Options jobmanager_flags();
/// `weir list`.
cxxopts::Options list_flags();
/// `weir status`, `weir wait`, `weir cancel`.
cxxopts::Options status_flags();
cxxopts::Options wait_flags();
cxxopts::Options cancel_flags();
/// `weir checkpoint`, `weir savepoint`, `weir stop`.
cxxopts::Options checkpoint_flags();
cxxopts::Options savepoint_flags();
cxxopts::Options stop_flags();
cxxopts::Options rescale_flags();
/// `weir repair-state`.
cxxopts::Options repair_state_flags();
/// `weir cert KIND` (ca, node, client).
cxxopts::Options cert_flags(const std::string& kind);

/// The command forms with options of their own: "run", "run -D", "info",
/// ..., "cert ca", "cert node", "cert client".
std::vector<std::string> command_forms();

/// The options of one of command_forms().
cxxopts::Options flags_of(const std::string& form);

} // namespace weir::cli
