#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace weir {

/// A client's in-place rescale of a running job (`weir rescale`, PATCH
/// /jobs/{id}/rescaling), one at a time, as explicit states:
///
///   idle ──begin──▶ checkpointing ──taken──▶ switching ──switched──▶ deploying ──running──▶ idle
///                        │ failed: refused,        (every subtask      │ failed: refused,
///                        │ the job runs on          stops)             │ the next round runs
///                        ▼                                             ▼ at the old parallelism
///                       idle                                   rolling_back ──switched──▶ idle
///
/// A checkpoint is taken first; once it is stored every subtask stops and
/// the next round restores it at the new parallelism (the key groups
/// split: docs/state.md § Rescaling). The client is answered once every
/// subtask of that round runs. Should a subtask fail before that (state
/// it cannot restore, say), the next round goes back to the old
/// parallelism from the same checkpoint. Plain bookkeeping: the JobMaster
/// sends the messages.
class rescale_operation {
public:
  enum class phase { idle, checkpointing, switching, deploying, rolling_back };

  /// How the client is answered: none, or why the rescale did not happen.
  using reply_fn = std::function<void(std::string failure)>;

  phase current() const { return phase_; }

  /// Whether a rescale is under way.
  bool busy() const { return phase_ != phase::idle; }

  /// A rescale from parallelism `from` to `to` begins with checkpoint
  /// `checkpoint_id`; false (nothing changes) when one is under way.
  bool begin(int32_t from, int32_t to, int64_t checkpoint_id, reply_fn reply);

  /// Whether `checkpoint_id` is the one the rescale waits for.
  bool waits_for(int64_t checkpoint_id) const {
    return phase_ == phase::checkpointing && checkpoint_id == checkpoint_;
  }

  /// Whether completed checkpoint `completed_id` gives the rescale its
  /// state: its own, or a later one (which subsumed it).
  bool taken_by(int64_t completed_id) const {
    return phase_ == phase::checkpointing && completed_id >= checkpoint_;
  }

  /// The checkpoint is stored: every subtask stops, then the next round.
  void taken();

  /// The parallelism the next round runs at, when a rescale decides it
  /// (switching: the new one; rolling back: the old one).
  std::optional<int32_t> next_round() const;

  /// The next round was built at next_round(): its subtasks deploy.
  void switched();

  /// Every subtask of the new round runs: the client is answered.
  void running();

  /// The rescale failed because of `why`: the client is refused. Returns
  /// true when the next round must go back to the old parallelism (the new
  /// one was deploying).
  bool failed(const std::string& why);

  /// The parallelism rescaled from and to (while busy).
  int32_t from() const { return from_; }
  int32_t to() const { return to_; }

private:
  phase phase_ = phase::idle;
  int32_t from_ = 0;
  int32_t to_ = 0;
  int64_t checkpoint_ = 0;
  reply_fn reply_;
};

const char* to_string(rescale_operation::phase p);

} // namespace weir
