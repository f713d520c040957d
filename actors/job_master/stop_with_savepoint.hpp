#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "actors/job_master/checkpoint_requests.hpp"

namespace weir {

/// A client's `weir stop` (Flink's stop-with-savepoint), one at a time, as
/// explicit states:
///
///   idle ──begin(id)──▶ taking_savepoint ──written(req, path)──▶ draining
///     ▲                       │ failed(): the sources resume        │
///     └───────────────────────┴──────── finished() / restarted() ◀──┘
///
/// While taking_savepoint the sources are halted at the savepoint's barrier
/// (they produce nothing more); once it is written they end their input, so
/// every subtask finishes and the job FINISHES; the client is answered
/// then, with the savepoint's path, or refused when the job ended
/// otherwise. Plain bookkeeping: the JobMaster sends the messages.
class stop_with_savepoint {
public:
  enum class phase { idle, taking_savepoint, draining };

  phase current() const { return phase_; }

  /// Whether a stop is under way (no checkpoint or second stop may start).
  bool busy() const { return phase_ != phase::idle; }

  /// Whether the savepoint is written and the sources end their input.
  bool draining() const { return phase_ == phase::draining; }

  /// Whether `checkpoint_id` is the savepoint a stop waits for.
  bool waits_for(int64_t checkpoint_id) const {
    return phase_ == phase::taking_savepoint && checkpoint_id == checkpoint_;
  }

  /// A stop begins with savepoint `checkpoint_id`; false when one is under
  /// way already.
  bool begin(int64_t checkpoint_id);

  /// The savepoint was not taken or not written: true when the halted
  /// sources must produce again (a stop was taking its savepoint).
  bool failed();

  /// The savepoint of `req` is at `path`: the sources end their input and
  /// `req` is answered when the job ends.
  void written(checkpoint_request req, std::string path);

  /// The job ended: the request to answer and its savepoint's path, when a
  /// stop was draining. Back to idle.
  std::optional<std::pair<checkpoint_request, std::string>> finished();

  /// The job restarts: the stop ends with the attempt it halted. The
  /// request to refuse and its savepoint's path, when one was draining.
  std::optional<std::pair<checkpoint_request, std::string>> restarted() {
    return finished();
  }

private:
  phase phase_ = phase::idle;
  int64_t checkpoint_ = 0;
  std::optional<std::pair<checkpoint_request, std::string>> reply_;
};

const char* to_string(stop_with_savepoint::phase p);

} // namespace weir
