// The subtask runner's output side: credits, producing, flushing and
// draining its output gates.
#include "dataplane/subtask_runner.hpp"

#include <utility>

#include <fmt/format.h>

#include "dataplane/checkpoint_kind.hpp"
#include "dataplane/subtask_runner_inl.hpp"

namespace weir {

void subtask_runner::on_credit(int32_t gate, int32_t consumer, int32_t n) {
  if (terminal())
    return;
  auto g = static_cast<size_t>(gate);
  if (g >= chain_->gates().size())
    return;
  metered([&] {
    chain_->gates()[g].add_credit(consumer, n);
    drain();
    release_owed_credits();
    if (!chain_->backlogged())
      schedule_produce();
    try_finish();
  });
}

void subtask_runner::produce() {
  produce_pending_ = false;
  if (phase_ != phase::running || halted_ || chain_->backlogged())
    return;
  metered([&] {
    guarded([&] {
      if (!chain_->run_source()) {
        end_of_input();
        return;
      }
      generate_watermark();
      drain();
      schedule_flush();
      if (!chain_->backlogged())
        schedule_produce();
    });
  });
}

void subtask_runner::flush() {
  flush_pending_ = false;
  if (!processing())
    return;
  metered([&] {
    guarded([&] {
      for (auto& g : chain_->gates())
        g.flush();
      if (generated_pending_)
        generate_watermark();
      drain();
      try_finish();
    });
  });
}

/// Sends every event that has credit.
void subtask_runner::drain() {
  if (!processing())
    return;
  auto& gates = chain_->gates();
  for (size_t g = 0; g < gates.size(); ++g)
    gates[g].drain(
      [&](int32_t consumer, int32_t channel, int64_t seq, row_batch&& b) {
        meter_.batch_out(b.byte_size());
        port_.send_batch(g, consumer, channel, seq, std::move(b));
      },
      [&](int32_t consumer, int32_t channel, int64_t seq,
          const checkpoint_barrier& b) {
        port_.send_barrier(g, consumer, channel, seq, b);
      },
      [&](int32_t consumer, int32_t channel, int64_t seq,
          const watermark_mark& m) {
        port_.send_watermark(g, consumer, channel, seq, m);
      },
      [&](int32_t consumer, int32_t channel, int32_t waiting) {
        port_.send_backlog(g, consumer, channel, waiting);
      });
}

void subtask_runner::schedule_produce() {
  if (phase_ != phase::running || halted_ || produce_pending_
      || !chain_->has_source())
    return;
  produce_pending_ = true;
  port_.schedule_produce(chain_->source()->pause());
}

void subtask_runner::schedule_flush() {
  if (flush_pending_ || terminal())
    return;
  if (generated_pending_) {
    flush_pending_ = true;
    port_.schedule_flush(buffer_timeout);
    return;
  }
  for (auto& g : chain_->gates()) {
    if (g.has_open_data()) {
      flush_pending_ = true;
      port_.schedule_flush(buffer_timeout);
      return;
    }
  }
}

/// Credits withheld while the outputs were backlogged go out once they drain.
void subtask_runner::release_owed_credits() {
  if (chain_->backlogged())
    return;
  for (auto& c : inputs_.release())
    port_.return_credit(c.channel, c.port, c.n);
}

} // namespace weir
