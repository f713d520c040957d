#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace weir {

/// A subtask's input credits, Flink's exclusive and floating buffers
/// (docs/architecture.md § Data plane). A producer starts each channel
/// with `initial` credits, sends only against credit and announces a
/// backlog when it has events waiting without any. Each input gate then
/// gives the channel the rest of its `exclusive` credits (the first time),
/// and lends its `floating` credits to channels with a backlog, first
/// come, first served. In a gate without exclusive credits the initial
/// ones are not renewed: the producer's one buffer per output channel
/// travels once, so that the last small batches of a wide exchange need
/// no round trip. A consumed event's credit goes back:
/// a lent one to the gate's pool and on to a waiting channel, an exclusive
/// one to its producer. So credit goes where data waits, and a wide gate
/// (many channels, no exclusive credits) holds at most `floating` events.
///
/// During a barrier alignment a blocked channel's events wait unprocessed;
/// their lent credits go back to the pool at once, and blocked channels
/// are lent nothing, so the channels still owing their barrier always get
/// credit. Plain class; the runner sends the grants.
class input_credits {
public:
  struct gate {
    int32_t channels = 0;
    int32_t exclusive = 0;
    int32_t floating = 0;
    int32_t initial = 0;
  };

  /// `n` credits for the producer of `channel`, for its output `port`.
  struct grant {
    int32_t channel = 0;
    int32_t port = 0;
    int32_t n = 0;

    friend bool operator==(const grant& a, const grant& b) {
      return a.channel == b.channel && a.port == b.port && a.n == b.n;
    }
  };

  /// Channels are numbered across the gates, in their order.
  explicit input_credits(const std::vector<gate>& gates);

  /// The producer of `channel` (its output `port`) has `backlog` events
  /// waiting without credit; what to grant now goes to `out`.
  void on_backlog(int32_t channel, int32_t port, int32_t backlog,
                  std::vector<grant>& out);

  /// An event of `channel` was processed. True: its credit was exclusive
  /// and goes back to its producer; false: it was lent and is back in the
  /// pool (what that lends on goes to `out`), or it was an initial credit
  /// of a gate without exclusive ones.
  bool consume(int32_t channel, std::vector<grant>& out);

  /// An event of `channel` waits for a barrier alignment: the channel is
  /// blocked. True when the event's credit was lent and went back to the
  /// pool already (processing it later gives nothing back).
  bool hold(int32_t channel, std::vector<grant>& out);

  /// The alignment completed: no channel is blocked.
  void unblock_all(std::vector<grant>& out);

  /// Credits lent out and free in `channel`'s gate (for tests and metrics).
  int32_t lent(int32_t channel) const;
  int32_t free_in_gate_of(int32_t channel) const;

private:
  struct channel_state {
    int32_t gate = 0;
    int32_t port = 0;
    bool exclusive_given = false;
    bool blocked = false;
    bool waiting = false;
    int32_t lent = 0;
    /// Events its producer has waiting for credit, as far as known.
    int32_t wants = 0;
  };

  struct gate_state {
    int32_t exclusive = 0;
    int32_t initial = 0;
    int32_t free = 0;
    std::deque<int32_t> waiting;
  };

  channel_state* at(int32_t channel);
  void want(int32_t channel, std::vector<grant>& out);
  void lend(gate_state& g, std::vector<grant>& out);

  std::vector<channel_state> channels_;
  std::vector<gate_state> gates_;
};

} // namespace weir
