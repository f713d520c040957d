#include "operators/builtin/index_runs.hpp"

#include <algorithm>

#include "operators/state_codec.hpp"

namespace weir::ops {

std::string write_runs(const std::vector<index_run>& runs,
                       int64_t parallelism) {
  state_writer w;
  if (runs.size() == 1 && runs[0].stride == parallelism) {
    w.int64(runs[0].next);
    return w.take();
  }
  for (auto& r : runs) {
    w.int64(r.next);
    w.int64(r.stride);
  }
  return w.take();
}

std::vector<index_run> read_runs(const std::string& bytes, int64_t parallelism,
                                 const std::string& what) {
  state_reader r{bytes, what};
  std::vector<int64_t> xs;
  do
    xs.push_back(r.int64());
  while (!r.done());
  if (xs.size() == 1)
    return {{xs[0], std::max<int64_t>(parallelism, 1)}};
  if (xs.size() % 2 != 0)
    throw operator_error("cannot restore the state of " + what
                         + ": it is truncated or malformed");
  std::vector<index_run> out;
  for (size_t i = 0; i < xs.size(); i += 2) {
    if (xs[i + 1] < 1)
      throw operator_error("cannot restore the state of " + what
                           + ": a stride is not positive");
    out.push_back({xs[i], xs[i + 1]});
  }
  return out;
}

std::vector<index_run> deal_runs(const std::vector<std::string>& old_states,
                                 int64_t index, int64_t parallelism,
                                 int64_t limit, const std::string& what) {
  auto left = [&](const index_run& r) { return limit < 0 || r.next < limit; };
  auto old_parallelism = static_cast<int64_t>(old_states.size());
  std::vector<index_run> all;
  for (auto& bytes : old_states)
    for (auto& r : read_runs(bytes, old_parallelism, what))
      if (left(r))
        all.push_back(r);
  auto n = static_cast<int64_t>(all.size());
  if (n > 0 && n < parallelism) {
    auto k = (parallelism + n - 1) / n;
    std::vector<index_run> split;
    for (auto& r : all)
      for (int64_t j = 0; j < k; ++j)
        split.push_back({r.next + j * r.stride, r.stride * k});
    all = std::move(split);
  }
  std::vector<index_run> out;
  for (size_t i = static_cast<size_t>(index); i < all.size();
       i += static_cast<size_t>(parallelism))
    if (left(all[i]))
      out.push_back(all[i]);
  return out;
}

} // namespace weir::ops
