#pragma once

#include <cstdint>
#include <string>

#include "dataplane/operator_chain.hpp"

namespace weir {

/// Where a subtask's checkpoint state goes (Flink's checkpoint storage):
/// files under the job's part of execution.checkpointing.dir, one per
/// vertex and checkpoint, `chk-<id>.d/<vertex>-<subtask>-<attempt>.state`.
/// The acknowledgement then carries handles (path, size, checksum), never
/// the state itself. With no directory (the single-process `weir run`
/// without a state directory) the state stays in the acknowledgement.
class checkpoint_storage {
public:
  /// `job_dir` is `<execution.checkpointing.dir>/<job id>` ("" for none);
  /// `owner` names this subtask's files ("<subtask>-<attempt>").
  checkpoint_storage(std::string job_dir, std::string owner);

  bool enabled() const { return !job_dir_.empty(); }

  /// Turns `snap` into one whose large states are written to files off the
  /// processing thread: every ready state above the inline limit moves to
  /// the deferred work, and the deferred work writes what it yields to a
  /// file and returns the handle. Small states stay as they are.
  void offload(int64_t id, chain_snapshot& snap) const;

private:
  std::string file_of(int64_t id, const std::string& vertex) const;

  std::string job_dir_;
  std::string owner_;
};

} // namespace weir
