#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "operators/timers.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir::ops {

/// The runtime's side of a keyed operator's timers: two ordered queues in
/// its keyed state backend (one per time domain), each entry's store key
/// the timer's time (8 bytes that sort as the number does) then the key,
/// so that the earliest timer is the first entry. RocksDB keeps them on
/// disk, the heap backend in an ordered map; neither holds a copy in
/// memory. A queue's column is made on first use, so that operators that
/// never use timers keep no extra state.
class keyed_timers final : public timer_service {
public:
  using clock = std::function<int64_t()>;

  /// `now` reads the processing-time clock (default: the system clock).
  explicit keyed_timers(state::keyed_backend& backend, clock now = {});

  int64_t current_watermark() const override { return watermark_; }
  int64_t current_processing_time() const override;
  void register_event_time_timer(int64_t time) override;
  void register_processing_time_timer(int64_t time) override;
  void delete_event_time_timer(int64_t time) override;
  void delete_processing_time_timer(int64_t time) override;

  /// The input watermark reached `wm` (it never goes back).
  void advance_watermark(int64_t wm);

  /// The time of the earliest timer of `d` (nullopt: none).
  std::optional<int64_t> earliest(time_domain d);

  /// Takes the earliest timer of `d` off its queue if it is due at `t`,
  /// makes its key the backend's current key, and returns its time;
  /// nullopt when none is due.
  std::optional<int64_t> pop_due(time_domain d, int64_t t);

  /// Every timer of `d` now, earliest first (the end of the input fires
  /// these once; see docs/event-time.md § Timers).
  std::vector<std::pair<int64_t, std::string>> all(time_domain d);

  /// Takes the timer (`time`, `key`) off its queue and makes `key` current;
  /// false if it is gone (deleted meanwhile).
  bool take(time_domain d, int64_t time, const std::string& key);

  /// Removes every timer of `d`.
  void clear(time_domain d);

  /// A restored snapshot holds timers: claim their columns, so that the
  /// backend does not count them as unclaimed state.
  void claim_restored();

  /// The state names of the two queues.
  static const char* column_name(time_domain d);

private:
  struct queue {
    state::kv_column* column = nullptr;
    /// The earliest time, cached: `known` false when it must be read.
    bool known = true;
    std::optional<int64_t> head;
  };

  queue& of(time_domain d) { return queues_[static_cast<size_t>(d)]; }
  state::kv_column& column(time_domain d);
  void add(time_domain d, int64_t time);
  void remove(time_domain d, int64_t time);

  state::keyed_backend& backend_;
  clock now_;
  int64_t watermark_;
  std::array<queue, 2> queues_;
  std::string entry_;
  /// The key of the timer being fired (the backend's current key views it).
  std::string firing_key_;
};

} // namespace weir::ops
