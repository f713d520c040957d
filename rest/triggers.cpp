#include "rest/triggers.hpp"

#include "rest/json.hpp"

namespace weir::rest {

std::string trigger_table::start(const job_id& job) {
  // 128 random bits in Flink's form (its TriggerId is an AbstractID too).
  auto id = job_id::random().to_string();
  std::lock_guard<std::mutex> guard{mutex_};
  entries_.emplace(id, entry{job, {}});
  order_.push_back(id);
  trim();
  return id;
}

std::optional<trigger_table::started>
trigger_table::start(const job_id& job, const std::string& wanted) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (auto i = entries_.find(wanted); i != entries_.end()) {
    if (i->second.job != job)
      return std::nullopt;
    return started{wanted, false};
  }
  entries_.emplace(wanted, entry{job, {}});
  order_.push_back(wanted);
  trim();
  return started{wanted, true};
}

void trigger_table::complete(const std::string& id,
                             const std::string& location) {
  finish(id, trigger_state{true, location, {}});
}

void trigger_table::fail(const std::string& id, const std::string& why,
                         const std::string& code) {
  finish(id, trigger_state{true, {}, why, code});
}

std::optional<trigger_state> trigger_table::find(const job_id& job,
                                                 const std::string& id) const {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = entries_.find(id);
  if (i == entries_.end() || i->second.job != job)
    return std::nullopt;
  return i->second.state;
}

size_t trigger_table::size() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return entries_.size();
}

void trigger_table::finish(const std::string& id, trigger_state s) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = entries_.find(id);
  if (i != entries_.end())
    i->second.state = std::move(s);
  trim();
}

void trigger_table::trim() {
  // The oldest finished entries go first; running ones stay whatever the
  // count (a client polls them, and they end by themselves).
  for (auto i = order_.begin();
       entries_.size() > capacity_ && i != order_.end();) {
    auto e = entries_.find(*i);
    if (e == entries_.end() || e->second.state.done) {
      if (e != entries_.end())
        entries_.erase(e);
      i = order_.erase(i);
    } else {
      ++i;
    }
  }
}

nlohmann::json operation_status(const trigger_state& s) {
  using nlohmann::json;
  if (!s.done)
    return json{{"status", {{"id", "IN_PROGRESS"}}}};
  // An operation without a location (a disposal) answers {} when done.
  auto operation = !s.failure.empty()
                     ? json{{"failure-cause",
                             failure_cause(s.failure, "weir.error")}}
                   : s.location.empty() ? json::object()
                                        : json{{"location", "file:" + s.location}};
  return json{{"status", {{"id", "COMPLETED"}}}, {"operation", operation}};
}

} // namespace weir::rest
