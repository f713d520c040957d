#include "operators/keyed_timers.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "storage/state/codec.hpp"
#include "storage/state/rescale.hpp"

namespace weir::ops {

namespace {

/// A timer's store key: its time, sortable, then the key.
void encode(int64_t time, std::string_view key, std::string& out) {
  out.clear();
  state::codec<int64_t>::append(out, time);
  out.append(key.data(), key.size());
}

int64_t time_of(std::string_view entry) {
  return state::codec<int64_t>::decode(entry.substr(0, 8));
}

int64_t system_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
    .count();
}

} // namespace

keyed_timers::keyed_timers(state::keyed_backend& backend, clock now)
  : backend_(backend),
    now_(now ? std::move(now) : clock{system_now}),
    watermark_(std::numeric_limits<int64_t>::min()) {
}

const char* keyed_timers::column_name(time_domain d) {
  return d == time_domain::event_time ? state::event_timers_state
                                      : state::processing_timers_state;
}

int64_t keyed_timers::current_processing_time() const {
  return now_();
}

state::kv_column& keyed_timers::column(time_domain d) {
  auto& q = of(d);
  if (q.column == nullptr) {
    q.column = &backend_.column(column_name(d), state::state_type::map);
    q.known = false; // a restored queue may hold timers
  }
  return *q.column;
}

void keyed_timers::claim_restored() {
  auto restored = backend_.unclaimed();
  for (auto d : {time_domain::event_time, time_domain::processing_time})
    if (std::find(restored.begin(), restored.end(), column_name(d))
        != restored.end())
      column(d);
}

void keyed_timers::add(time_domain d, int64_t time) {
  encode(time, backend_.current_key(), entry_);
  auto& c = column(d);
  c.put(entry_, {});
  auto& q = of(d);
  if (q.known && (!q.head || time < *q.head))
    q.head = time;
}

void keyed_timers::remove(time_domain d, int64_t time) {
  auto& q = of(d);
  if (q.column == nullptr && q.known && !q.head)
    return; // no timer ever
  encode(time, backend_.current_key(), entry_);
  column(d).remove(entry_);
  if (q.known && q.head == time)
    q.known = false;
}

void keyed_timers::register_event_time_timer(int64_t time) {
  add(time_domain::event_time, time);
}

void keyed_timers::register_processing_time_timer(int64_t time) {
  add(time_domain::processing_time, time);
}

void keyed_timers::delete_event_time_timer(int64_t time) {
  remove(time_domain::event_time, time);
}

void keyed_timers::delete_processing_time_timer(int64_t time) {
  remove(time_domain::processing_time, time);
}

void keyed_timers::advance_watermark(int64_t wm) {
  watermark_ = std::max(watermark_, wm);
}

std::optional<int64_t> keyed_timers::earliest(time_domain d) {
  auto& q = of(d);
  if (q.known)
    return q.head;
  q.head.reset();
  column(d).scan_from({}, [&](std::string_view k, std::string_view) {
    if (k.size() < 8)
      throw std::runtime_error("a timer's keyed state holds an entry of "
                               "fewer than 8 bytes");
    q.head = time_of(k);
    return false;
  });
  q.known = true;
  return q.head;
}

std::optional<int64_t> keyed_timers::pop_due(time_domain d, int64_t t) {
  auto head = earliest(d);
  if (!head || *head > t)
    return std::nullopt;
  auto& c = column(d);
  c.scan_from({}, [&](std::string_view k, std::string_view) {
    firing_key_.assign(k.substr(8));
    entry_.assign(k);
    return false;
  });
  c.remove(entry_);
  of(d).known = false;
  backend_.set_current_key(firing_key_);
  return head;
}

std::vector<std::pair<int64_t, std::string>> keyed_timers::all(time_domain d) {
  std::vector<std::pair<int64_t, std::string>> out;
  if (!earliest(d))
    return out;
  column(d).scan_from({}, [&](std::string_view k, std::string_view) {
    out.emplace_back(time_of(k), std::string{k.substr(8)});
    return true;
  });
  return out;
}

bool keyed_timers::take(time_domain d, int64_t time, const std::string& key) {
  encode(time, key, entry_);
  auto& c = column(d);
  std::string ignored;
  if (!c.get(entry_, ignored))
    return false;
  c.remove(entry_);
  of(d).known = false;
  firing_key_ = key;
  backend_.set_current_key(firing_key_);
  return true;
}

void keyed_timers::clear(time_domain d) {
  auto& q = of(d);
  if (q.column == nullptr && q.known && !q.head)
    return;
  column(d).remove_prefix({});
  q.known = true;
  q.head.reset();
}

} // namespace weir::ops
