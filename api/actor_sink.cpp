#include "api/actor_sink.hpp"

#include <deque>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "messages/errors.hpp"

namespace weir {

namespace {

/// Runs on a thread of its own (blocking_io): it blocks on replies.
class actor_sink_impl : public ops::sink {
public:
  actor_sink_impl(caf::actor_system& sys, row_receiver_actor receiver,
                  size_t credits)
    : sys_(sys), receiver_(std::move(receiver)),
      credits_(credits == 0 ? 1 : credits) {
  }

  void open(const ops::operator_context& ctx) override {
    step_ = ctx.vertex_id;
    subtask_ = ctx.subtask_index;
    if (ctx.input != nullptr)
      fields_ = *ctx.input;
    self_.emplace(sys_);
  }

  bool blocking_io() const override { return true; }

  void write(const row_batch& in) override {
    if (in.rows == 0)
      return;
    if (pending_.size() >= credits_)
      await_one();
    pending_.push_back((*self_)->request(
      receiver_, caf::infinite, data_atom_v,
      row_delivery{step_, subtask_, fields_, in}));
  }

  void finish() override {
    while (!pending_.empty())
      await_one();
  }

private:
  void await_one() {
    auto next = std::move(pending_.front());
    pending_.pop_front();
    std::string problem;
    next.receive(
      [&](bool accepted) {
        if (!accepted)
          problem = "the receiver refused the rows";
      },
      [&](caf::error& err) {
        problem = "the receiving actor is gone (" + describe(err) + ")";
      });
    if (!problem.empty())
      throw ops::operator_error(problem);
  }

  using pending_reply = decltype(std::declval<caf::scoped_actor&>()->request(
    std::declval<row_receiver_actor&>(), caf::infinite, data_atom_v,
    std::declval<row_delivery>()));

  caf::actor_system& sys_;
  row_receiver_actor receiver_;
  size_t credits_;
  std::string step_;
  int32_t subtask_ = 0;
  schema fields_;
  std::optional<caf::scoped_actor> self_;
  std::deque<pending_reply> pending_;
};

} // namespace

ops::operator_factory actor_sink(caf::actor_system& sys,
                                 row_receiver_actor receiver, size_t credits) {
  ops::operator_factory f;
  f.name = "actor_sink";
  f.make_sink = [&sys, receiver, credits](const ops::params&) {
    return std::unique_ptr<ops::sink>(
      new actor_sink_impl(sys, receiver, credits));
  };
  // The rows reach the host as they are written: a restart writes them
  // again, like any at-least-once sink.
  f.guarantee = [](const ops::params&) {
    return ops::sink_guarantee::external_at_least_once;
  };
  return f;
}

std::vector<record> records_of(const row_delivery& d) {
  std::vector<record> out;
  out.reserve(d.rows.rows);
  for (size_t i = 0; i < d.rows.rows; ++i)
    out.push_back(to_record(d.rows, d.fields, i));
  return out;
}

} // namespace weir
