#include "dataplane/input_credits.hpp"

#include <algorithm>

namespace weir {

input_credits::input_credits(const std::vector<gate>& gates) {
  for (size_t g = 0; g < gates.size(); ++g) {
    gates_.push_back(gate_state{gates[g].exclusive, gates[g].initial,
                                gates[g].floating, {}});
    for (int32_t c = 0; c < gates[g].channels; ++c) {
      channel_state ch;
      ch.gate = static_cast<int32_t>(g);
      channels_.push_back(ch);
    }
  }
}

input_credits::channel_state* input_credits::at(int32_t channel) {
  if (channel < 0 || static_cast<size_t>(channel) >= channels_.size())
    return nullptr;
  return &channels_[static_cast<size_t>(channel)];
}

void input_credits::on_backlog(int32_t channel, int32_t port, int32_t backlog,
                               std::vector<grant>& out) {
  auto* ch = at(channel);
  if (ch == nullptr || backlog <= 0)
    return;
  ch->port = port;
  ch->wants = backlog;
  auto& g = gates_[static_cast<size_t>(ch->gate)];
  if (!ch->exclusive_given && g.exclusive > g.initial) {
    ch->exclusive_given = true;
    auto more = g.exclusive - g.initial; // it started with `initial`
    out.push_back(grant{channel, port, more});
    ch->wants = std::max(0, ch->wants - more);
  }
  want(channel, out);
}

void input_credits::want(int32_t channel, std::vector<grant>& out) {
  auto* ch = at(channel);
  if (ch->wants <= 0 || ch->blocked)
    return;
  auto& g = gates_[static_cast<size_t>(ch->gate)];
  if (!ch->waiting) {
    ch->waiting = true;
    g.waiting.push_back(channel);
  }
  lend(g, out);
}

void input_credits::lend(gate_state& g, std::vector<grant>& out) {
  // One credit at a time, round-robin over the channels waiting.
  while (g.free > 0 && !g.waiting.empty()) {
    auto c = g.waiting.front();
    g.waiting.pop_front();
    auto& ch = channels_[static_cast<size_t>(c)];
    ch.waiting = false;
    if (ch.blocked || ch.wants <= 0)
      continue;
    --g.free;
    ++ch.lent;
    --ch.wants;
    if (!out.empty() && out.back().channel == c)
      ++out.back().n;
    else
      out.push_back(grant{c, ch.port, 1});
    if (ch.wants > 0) {
      ch.waiting = true;
      g.waiting.push_back(c);
    }
  }
}

bool input_credits::consume(int32_t channel, std::vector<grant>& out) {
  auto* ch = at(channel);
  if (ch == nullptr)
    return true;
  if (ch->lent == 0) // exclusive, or an initial one not renewed
    return gates_[static_cast<size_t>(ch->gate)].exclusive > 0;
  --ch->lent;
  auto& g = gates_[static_cast<size_t>(ch->gate)];
  ++g.free;
  lend(g, out);
  return false;
}

bool input_credits::hold(int32_t channel, std::vector<grant>& out) {
  auto* ch = at(channel);
  if (ch == nullptr)
    return false;
  ch->blocked = true;
  if (ch->lent == 0)
    return false;
  consume(channel, out);
  return true;
}

void input_credits::unblock_all(std::vector<grant>& out) {
  for (size_t c = 0; c < channels_.size(); ++c) {
    if (!channels_[c].blocked)
      continue;
    channels_[c].blocked = false;
    want(static_cast<int32_t>(c), out);
  }
}

int32_t input_credits::lent(int32_t channel) const {
  return channels_.at(static_cast<size_t>(channel)).lent;
}

int32_t input_credits::free_in_gate_of(int32_t channel) const {
  auto g = channels_.at(static_cast<size_t>(channel)).gate;
  return gates_.at(static_cast<size_t>(g)).free;
}

} // namespace weir
