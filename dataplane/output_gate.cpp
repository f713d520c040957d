#include "dataplane/output_gate.hpp"

#include <algorithm>

#include "messages/key_groups.hpp"
#include "operators/builtin/aggregation.hpp"

namespace weir {

namespace {

/// Appends the rows of `src` to the batches `dst[lane_of_row[i]]`, a column
/// at a time (the type switch outside the row loop).
void scatter(const row_batch& src, const std::vector<uint32_t>& lane_of_row,
             std::vector<row_batch*>& dst) {
  auto n = src.rows;
  for (size_t c = 0; c < src.columns.size(); ++c) {
    auto& col = src.columns[c];
    bool plain = col.nulls.empty();
    for (auto* d : dst) // a lane without columns gets no rows (open_lane)
      plain = plain && (d->columns.empty() || d->columns[c].nulls.empty());
    if (!plain) {
      for (size_t i = 0; i < n; ++i)
        dst[lane_of_row[i]]->columns[c].push_from(col, i);
    } else if (holds_chars(col.type)) {
      for (size_t i = 0; i < n; ++i) {
        auto& d = dst[lane_of_row[i]]->columns[c];
        auto v = col.str(i);
        d.chars.append(v.data(), v.size());
        d.ends.push_back(static_cast<uint32_t>(d.chars.size()));
      }
    } else if (col.type == field_type::float64) {
      for (size_t i = 0; i < n; ++i)
        dst[lane_of_row[i]]->columns[c].floats.push_back(col.floats[i]);
    } else {
      for (size_t i = 0; i < n; ++i)
        dst[lane_of_row[i]]->columns[c].ints.push_back(col.ints[i]);
    }
  }
  bool times = !src.times.empty();
  for (auto* d : dst)
    times = times || !d->times.empty();
  for (size_t i = 0; i < n; ++i) {
    auto* d = dst[lane_of_row[i]];
    ++d->rows;
    if (times)
      d->push_time(src.time(i));
  }
}

/// Appends rows [from, to) of `src` to `dst` (same column types), a column
/// at a time.
void append_rows(row_batch& dst, const row_batch& src, size_t from,
                 size_t to) {
  auto n = to - from;
  for (size_t c = 0; c < src.columns.size(); ++c) {
    auto& s = src.columns[c];
    auto& d = dst.columns[c];
    auto before = d.size();
    if (holds_chars(s.type)) {
      uint32_t begin = from == 0 ? 0 : s.ends[from - 1];
      uint32_t end = to == 0 ? 0 : s.ends[to - 1];
      auto base = static_cast<uint32_t>(d.chars.size());
      d.chars.append(s.chars, begin, end - begin);
      for (size_t i = from; i < to; ++i)
        d.ends.push_back(base + (s.ends[i] - begin));
    } else if (s.type == field_type::float64) {
      d.floats.insert(d.floats.end(), s.floats.begin() + from,
                      s.floats.begin() + to);
    } else {
      d.ints.insert(d.ints.end(), s.ints.begin() + from, s.ints.begin() + to);
    }
    if (!s.nulls.empty() || !d.nulls.empty()) {
      d.nulls.resize(before, 0);
      if (s.nulls.empty())
        d.nulls.resize(before + n, 0);
      else
        d.nulls.insert(d.nulls.end(), s.nulls.begin() + from,
                       s.nulls.begin() + to);
    }
  }
  if (!src.times.empty() || !dst.times.empty()) {
    dst.times.resize(dst.rows, 0);
    if (src.times.empty())
      dst.times.resize(dst.rows + n, 0);
    else
      dst.times.insert(dst.times.end(), src.times.begin() + from,
                       src.times.begin() + to);
  }
  dst.rows += n;
}

/// The bytes of rows [from, to) of `b`, as row_batch::byte_size counts
/// them.
size_t rows_bytes(const row_batch& b, size_t from, size_t to) {
  auto n = to - from;
  size_t bytes = b.times.empty() ? 0 : 8 * n;
  for (auto& c : b.columns) {
    if (holds_chars(c.type)) {
      uint32_t begin = from == 0 ? 0 : c.ends[from - 1];
      uint32_t end = to == 0 ? 0 : c.ends[to - 1];
      bytes += (end - begin) + 4 * n;
    } else {
      bytes += 8 * n;
    }
  }
  return bytes;
}

/// How many rows of `b` from row `from` make one full batch: at least one,
/// at most `max_rows`, and up to the row that reaches `max_bytes`; fewer
/// when `b` ends first.
size_t full_batch_rows(const row_batch& b, size_t from, size_t max_rows,
                       size_t max_bytes) {
  auto n = std::min(max_rows, b.rows - from);
  if (n <= 1 || rows_bytes(b, from, from + n - 1) < max_bytes)
    return n;
  // The first k rows reach max_bytes for some k < n: the least such k
  // (the bytes grow with k).
  size_t lo = 1;
  size_t hi = n - 1;
  while (lo < hi) {
    auto mid = lo + (hi - lo) / 2;
    if (rows_bytes(b, from, from + mid) >= max_bytes)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

} // namespace

output_gate::output_gate(const output_desc& desc, int32_t producer_index,
                         const exchange_options& opts, const schema& rows)
  : desc_(desc), opts_(opts), sent_(rows) {
  bool forward = desc.part == partitioning::forward;
  channel_ = desc.channel_base + (forward ? 0 : producer_index);
  // A forward output has one consumer, so one lane: lanes per consumer of
  // every producer would grow with the square of the parallelism.
  lanes_.resize(forward ? 1 : static_cast<size_t>(desc.consumers));
  if (forward) {
    targets_.push_back(producer_index);
  } else {
    for (int32_t i = 0; i < desc.consumers; ++i)
      targets_.push_back(i);
  }
  for (auto t : targets_)
    lane_of(t).credit = opts.initial_credit;
  // Rebalance starts at a different consumer per producer, so that many
  // producers with few records do not all load consumer 0.
  next_rebalance_ = static_cast<size_t>(producer_index);
  if (desc.part == partitioning::hash)
    key_ = ops::field_indices(rows, desc.key);
  if (!desc.combine.empty()) {
    combiner_ = std::make_unique<ops::keyed_aggregation>(
      ops::parse_aggregation_kind(desc.combine).value(), desc.combine_params,
      rows, key_);
    sent_ = combiner_->output();
    partials_.reset(sent_);
    // The partial aggregates' key fields come first.
    for (size_t i = 0; i < key_.size(); ++i)
      key_[i] = i;
  }
  if (!wide())
    for (auto& l : lanes_)
      l.open.reset(sent_);
}

output_gate::~output_gate() = default;
output_gate::output_gate(output_gate&&) noexcept = default;
output_gate& output_gate::operator=(output_gate&&) noexcept = default;

void output_gate::emit(const row_batch& rows) {
  if (rows.rows == 0)
    return;
  if (combiner_) {
    combined_in_ += static_cast<int64_t>(rows.rows);
    combiner_->add(rows, false);
    if (combiner_->size() >= opts_.combiner_keys)
      drain_combiner();
    return;
  }
  route(rows);
}

void output_gate::drain_combiner() {
  partials_.clear();
  combiner_->drain(partials_);
  combined_out_ += static_cast<int64_t>(partials_.rows);
  route(partials_);
}

void output_gate::route(const row_batch& rows) {
  if (rows.rows == 0)
    return;
  switch (desc_.part) {
    case partitioning::forward:
      open_lane(lanes_.front());
      lanes_.front().open.append(rows);
      check_full(lanes_.front());
      return;
    case partitioning::broadcast:
      for (auto& l : lanes_) {
        open_lane(l);
        l.open.append(rows);
        check_full(l);
      }
      return;
    case partitioning::hash: {
      ops::key_hashes(rows, key_, hashes_);
      lane_of_row_.resize(rows.rows);
      auto n = lanes_.size();
      if (auto groups = desc_.key_groups; groups > 0) {
        // To the consumer that owns the key's group (its keyed state).
        auto consumers = static_cast<int32_t>(n);
        for (size_t i = 0; i < rows.rows; ++i)
          lane_of_row_[i] = static_cast<uint32_t>(subtask_of_key_group(
            key_group_of_hash(hashes_[i], groups), consumers, groups));
      } else {
        for (size_t i = 0; i < rows.rows; ++i)
          lane_of_row_[i] = static_cast<uint32_t>(hashes_[i] % n);
      }
      break;
    }
    case partitioning::rebalance: {
      // Contiguous slices, one per lane in round-robin order: each batch
      // spreads evenly (slices differ by one row at most; the lanes that
      // get the extra row rotate), and a slice is copied a column at a
      // time, not row by row.
      auto n = lanes_.size();
      auto each = rows.rows / n;
      auto extra = rows.rows % n;
      auto start = next_rebalance_ % n;
      size_t at = 0;
      for (size_t k = 0; k < n && at < rows.rows; ++k) {
        auto count = each + (k < extra ? 1 : 0);
        if (count == 0)
          break;
        auto& l = lanes_[(start + k) % n];
        open_lane(l);
        append_rows(l.open, rows, at, at + count);
        at += count;
        check_full(l);
      }
      next_rebalance_ = start + extra;
      return;
    }
  }
  if (wide())
    for (auto i : lane_of_row_)
      open_lane(lanes_[i]);
  std::vector<row_batch*> dst;
  dst.reserve(lanes_.size());
  for (auto& l : lanes_)
    dst.push_back(&l.open);
  scatter(rows, lane_of_row_, dst);
  for (auto& l : lanes_)
    check_full(l);
}

void output_gate::check_full(lane& l) {
  if (l.open.rows < opts_.batch_records
      && l.open.byte_size() < opts_.batch_bytes)
    return;
  auto max_rows = std::max<size_t>(opts_.batch_records, 1);
  if (full_batch_rows(l.open, 0, max_rows, opts_.batch_bytes) == l.open.rows) {
    close(l);
    return;
  }
  // One emit (an aggregation's final rows, a flat_map's words) filled more
  // than a batch: cut it into batches of the limits, as record-at-a-time
  // routing did; what is left under them stays open.
  auto all = std::move(l.open);
  l.open = row_batch{};
  size_t at = 0;
  while (at < all.rows) {
    auto n = full_batch_rows(all, at, max_rows, opts_.batch_bytes);
    open_lane(l); // close() leaves a wide gate's lane unopened
    append_rows(l.open, all, at, at + n);
    at += n;
    if (at < all.rows || l.open.rows >= max_rows
        || l.open.byte_size() >= opts_.batch_bytes)
      close(l);
  }
}

void output_gate::close(lane& l) {
  if (l.open.rows == 0)
    return;
  l.closed.emplace_back(std::move(l.open));
  l.open = row_batch{};
  // A wide gate opens a lane's next batch when rows come for it; a narrow
  // one opens it now, reserved whole, which saves regrowing it.
  if (!wide()) {
    l.open.reset(sent_);
    l.open.reserve(opts_.batch_records);
  }
}

void output_gate::flush() {
  if (combiner_)
    drain_combiner();
  for (auto& l : lanes_)
    close(l);
}

void output_gate::emit_barrier(const checkpoint_barrier& barrier) {
  flush();
  for (auto t : targets_)
    lane_of(t).closed.emplace_back(barrier);
}

void output_gate::emit_watermark(const watermark_mark& mark) {
  flush();
  for (auto t : targets_) {
    auto& l = lane_of(t);
    if (!l.closed.empty())
      if (auto* last = std::get_if<watermark_mark>(&l.closed.back())) {
        *last = mark;
        continue;
      }
    l.closed.emplace_back(mark);
  }
}

void output_gate::add_credit(int32_t consumer, int32_t n) {
  bool known = desc_.part == partitioning::forward
                 ? consumer == targets_.front()
                 : consumer >= 0 && static_cast<size_t>(consumer) < lanes_.size();
  if (known) {
    auto& l = lane_of(consumer);
    l.credit += n;
    l.announced = false; // a backlog left after these is announced again
  }
}

bool output_gate::backlogged() const {
  for (auto t : targets_)
    if (!lanes_[lane_index(t)].closed.empty())
      return true;
  return false;
}

int32_t output_gate::waiting() const {
  size_t n = 0;
  for (auto& l : lanes_)
    n += l.closed.size();
  return static_cast<int32_t>(n);
}

bool output_gate::has_open_data() const {
  if (combiner_ && combiner_->size() > 0)
    return true;
  for (auto t : targets_)
    if (lanes_[lane_index(t)].open.rows > 0)
      return true;
  return false;
}

bool output_gate::empty() const {
  return !backlogged() && !has_open_data();
}

} // namespace weir
