#include "actors/job_master/collected_results.hpp"

#include <algorithm>
#include <iterator>

namespace weir {

void collected_results::add(int32_t sink, std::vector<record> records) {
  auto& out = records_[sink];
  out.insert(out.end(), std::make_move_iterator(records.begin()),
             std::make_move_iterator(records.end()));
}

void collected_results::acknowledged(int64_t checkpoint, int32_t subtask) {
  auto i = records_.find(subtask);
  pending_[checkpoint][subtask] = i == records_.end() ? 0 : i->second.size();
}

void collected_results::commit(int64_t checkpoint) {
  committed_ = std::move(pending_[checkpoint]);
  pending_.erase(pending_.begin(), pending_.upper_bound(checkpoint));
}

void collected_results::abort_pending() {
  pending_.clear();
}

void collected_results::cut_back() {
  for (auto& [sink, rows] : records_) {
    auto i = committed_.find(sink);
    auto keep = i == committed_.end() ? size_t{0} : i->second;
    rows.resize(std::min(rows.size(), keep));
  }
}

void collected_results::clear() {
  records_.clear();
}

std::vector<record> collected_results::from(int64_t offset) const {
  std::vector<record> out;
  int64_t seen = 0;
  for (auto& [sink, rows] : records_)
    for (auto& r : rows)
      if (seen++ >= offset)
        out.push_back(r);
  return out;
}

std::vector<record> collected_results::take_all() {
  std::vector<record> out;
  for (auto& [sink, rows] : records_)
    out.insert(out.end(), std::make_move_iterator(rows.begin()),
               std::make_move_iterator(rows.end()));
  records_.clear();
  return out;
}

} // namespace weir
