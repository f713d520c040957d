#include "actors/job_master/rescale_operation.hpp"

#include <utility>

namespace weir {

bool rescale_operation::begin(int32_t from, int32_t to, int64_t checkpoint_id,
                              reply_fn reply) {
  if (busy())
    return false;
  phase_ = phase::checkpointing;
  from_ = from;
  to_ = to;
  checkpoint_ = checkpoint_id;
  reply_ = std::move(reply);
  return true;
}

void rescale_operation::taken() {
  if (phase_ == phase::checkpointing)
    phase_ = phase::switching;
}

std::optional<int32_t> rescale_operation::next_round() const {
  switch (phase_) {
    case phase::switching:
      return to_;
    case phase::rolling_back:
      return from_;
    default:
      return std::nullopt;
  }
}

void rescale_operation::switched() {
  if (phase_ == phase::switching)
    phase_ = phase::deploying;
  else if (phase_ == phase::rolling_back)
    phase_ = phase::idle;
}

void rescale_operation::running() {
  if (phase_ != phase::deploying)
    return;
  phase_ = phase::idle;
  if (auto reply = std::exchange(reply_, nullptr))
    reply({});
}

bool rescale_operation::failed(const std::string& why) {
  if (!busy() || phase_ == phase::rolling_back)
    return false;
  // Switching: the checkpoint is stored and the subtasks stop; the round
  // that follows still goes back to the old parallelism.
  bool roll_back = phase_ == phase::deploying || phase_ == phase::switching;
  phase_ = roll_back ? phase::rolling_back : phase::idle;
  if (auto reply = std::exchange(reply_, nullptr))
    reply(why);
  return roll_back;
}

const char* to_string(rescale_operation::phase p) {
  switch (p) {
    case rescale_operation::phase::idle:
      return "idle";
    case rescale_operation::phase::checkpointing:
      return "taking its checkpoint";
    case rescale_operation::phase::switching:
      return "stopping its subtasks";
    case rescale_operation::phase::deploying:
      return "deploying at the new parallelism";
    case rescale_operation::phase::rolling_back:
      return "going back to the old parallelism";
  }
  return "?";
}

} // namespace weir
