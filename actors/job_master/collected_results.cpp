#include "actors/job_master/collected_results.hpp"

#include <algorithm>
#include <iterator>

namespace weir {

namespace {

size_t size_of_all(const std::vector<record>& rows) {
  size_t n = 0;
  for (auto& r : rows)
    n += collected_results::size_of(r);
  return n;
}

} // namespace

bool append_within(const std::vector<record>& rows, size_t from,
                   size_t max_bytes, std::vector<record>& out, size_t& taken) {
  for (auto i = from; i < rows.size(); ++i) {
    auto n = collected_results::size_of(rows[i]);
    if (!out.empty() && taken + n > max_bytes)
      return false;
    out.push_back(rows[i]);
    taken += n;
  }
  return true;
}

size_t collected_results::size_of(const record& r) {
  return r.key.size() + r.text.size() + sizeof(int64_t) * 2;
}

bool collected_results::add(int32_t sink, std::vector<record> records) {
  auto n = size_of_all(records);
  if (max_bytes_ > 0 && bytes_ + n > max_bytes_)
    return false;
  bytes_ += n;
  auto& out = records_[sink];
  out.insert(out.end(), std::make_move_iterator(records.begin()),
             std::make_move_iterator(records.end()));
  return true;
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
  bytes_ = 0;
  for (auto& [sink, rows] : records_)
    bytes_ += size_of_all(rows);
}

void collected_results::clear() {
  records_.clear();
  bytes_ = 0;
}

std::vector<record> collected_results::from(int64_t offset,
                                            size_t max_bytes) const {
  std::vector<record> out;
  size_t taken = 0;
  auto skip = static_cast<size_t>(std::max<int64_t>(offset, 0));
  for (auto& [sink, rows] : records_) {
    if (skip >= rows.size()) {
      skip -= rows.size();
      continue;
    }
    if (!append_within(rows, skip, max_bytes, out, taken))
      break;
    skip = 0;
  }
  return out;
}

std::vector<record> collected_results::take_all() {
  std::vector<record> out;
  for (auto& [sink, rows] : records_)
    out.insert(out.end(), std::make_move_iterator(rows.begin()),
               std::make_move_iterator(rows.end()));
  records_.clear();
  bytes_ = 0;
  return out;
}

} // namespace weir
