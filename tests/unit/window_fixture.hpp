#pragma once

// A window operator opened on (key, value) rows keyed by "key", and its
// output as text: shared by the window tests (event_time, timers).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "messages/row_batch.hpp"
#include "operators/registry.hpp"
#include "operators/timers.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir::test {

/// Each row of `b` (key, start, end, aggregate) as "key [start,end) agg @t".
inline std::vector<std::string> fired(const row_batch& b) {
  std::vector<std::string> out;
  for (size_t r = 0; r < b.rows; ++r)
    out.push_back(std::string{b.columns[0].str(r)} + " ["
                  + std::to_string(b.columns[1].ints[r]) + ","
                  + std::to_string(b.columns[2].ints[r]) + ") "
                  + std::to_string(b.columns[3].ints[r]) + " @"
                  + std::to_string(b.time(r)));
  return out;
}

/// A window operator on (key, value) rows keyed by "key", opened.
struct window_fixture {
  std::unique_ptr<ops::transform> op;
  schema input = default_schema::keyed_numbers();
  schema output;
  std::map<std::string, int64_t> counters;
  ops::operator_context ctx;

  /// `backend`: the keyed state (nullptr: the operator's own heap).
  /// `timers`: its timers (nullptr: the operator's own).
  explicit window_fixture(ops::params p,
                          state::keyed_backend* backend = nullptr,
                          ops::timer_service* timers = nullptr) {
    auto& f = *ops::registry::builtin().find("window");
    output = f.output_schema(p, ops::schema_query{&input, {"key"}}).value;
    op = f.make_transform(p);
    ctx.input = &input;
    ctx.output = &output;
    ctx.key = {0};
    ctx.counters = &counters;
    ctx.keyed_state = backend;
    ctx.timers = timers;
    op->open(ctx);
  }

  std::vector<std::string> watermark(int64_t wm) {
    row_batch out{output};
    op->on_watermark(wm, out);
    return fired(out);
  }

  void process(row_batch b) {
    row_batch out{output};
    op->process(b, out, false);
    CHECK(out.rows == 0); // windows emit only when they fire
  }
};

} // namespace weir::test
