#pragma once

#include <cstdint>
#include <string>

#include <caf/meta/type_name.hpp>

namespace weir {

/// What a checkpoint is for; a subtask's keyed state backends snapshot
/// accordingly (state::snapshot_kind, same names).
enum class checkpoint_kind : int8_t {
  /// A periodic checkpoint (incremental where the backend can).
  checkpoint = 0,
  /// A checkpoint that shares no files with earlier ones (`weir checkpoint
  /// --full`).
  full_checkpoint = 1,
  /// A savepoint (canonical state, restorable by any backend).
  savepoint = 2,
};

std::string to_string(checkpoint_kind x);

/// Checkpoint `id`'s barrier. The JobMaster triggers a checkpoint by sending
/// it to the source subtasks; every subtask forwards it on each output
/// channel after the records it emitted before its snapshot, numbered in
/// line with that channel's batches.
struct checkpoint_barrier {
  int64_t id = 0;
  checkpoint_kind kind = checkpoint_kind::checkpoint;
  /// The savepoint of a `weir stop` without --drain (Flink's SUSPEND): the
  /// input ends after it without advancing event time, and operators keep
  /// their open windows and timers in the savepoint instead of firing them.
  bool suspend = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_barrier& x) {
  return f(caf::meta::type_name("checkpoint_barrier"), x.id, x.kind,
           x.suspend);
}

inline bool operator==(const checkpoint_barrier& a,
                       const checkpoint_barrier& b) {
  return a.id == b.id && a.kind == b.kind && a.suspend == b.suspend;
}

/// What a savepoint does to its job.
enum class savepoint_mode : int8_t {
  /// The job runs on (`weir savepoint`).
  keep_running = 0,
  /// The job ends after it, its event time where it was: open windows and
  /// timers stay in the savepoint for the job that resumes from it (`weir
  /// stop`; Flink's stop-with-savepoint).
  stop = 1,
  /// The job ends after the final watermark fired every window and timer
  /// (`weir stop --drain`, as Flink's): for a job that will not resume.
  stop_and_drain = 2,
};

std::string to_string(savepoint_mode x);

} // namespace weir
