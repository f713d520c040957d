#pragma once

#include <string>

namespace weir {

/// A worker process's directory for RocksDB state:
/// `<root>/weir-tm-<pid>-<n>` (root: taskmanager.state.local.root-dirs, or
/// $TMPDIR, or /tmp). Directories that processes no longer running left
/// behind (a killed worker) are removed first; the directory itself is
/// created on first use by the backends.
std::string claim_local_state_dir(const std::string& root);

/// Removes the directory claim_local_state_dir() returned.
void release_local_state_dir(const std::string& dir);

} // namespace weir
