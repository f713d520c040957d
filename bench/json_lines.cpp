// (v) JSON lines into typed rows, line by line as the `parse` operator gets
// them (a string column of lines): weir's scanner (parse_json_line,
// operators/formats/json_format.cpp) against simdjson's On Demand and DOM
// parsers on the same lines and the same columns (docs/rows.md § JSON
// lines says why weir keeps its own). Prints one JSON line per parser and
// run: MiB/s of line bytes, and the sum of one column, which must agree.
//
// Usage: bench_json_lines [LINES] [RUNS]   (default 2000000 lines, 3 runs)

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "messages/row_batch.hpp"
#include "operators/formats/row_formats.hpp"

namespace {

using weir::field_type;
using weir::row_batch;
using weir::schema;
using clock_type = std::chrono::steady_clock;

/// Access-log lines of five members, three of them fields of the schema.
struct lines {
  std::string bytes; ///< the lines back to back, then simdjson's padding
  std::vector<uint32_t> ends;

  std::string_view operator[](size_t i) const {
    size_t begin = i == 0 ? 0 : ends[i - 1];
    return {bytes.data() + begin, ends[i] - begin};
  }
  /// Bytes after line `i` that a parser may read (simdjson's padding).
  size_t capacity(size_t i) const {
    return bytes.size() - (i == 0 ? 0 : ends[i - 1]);
  }
};

lines make_lines(size_t n) {
  lines out;
  std::mt19937_64 rng{42};
  for (size_t i = 0; i < n; ++i) {
    auto user = rng() % 10000;
    auto status = rng() % 5 == 0 ? 404 : 200;
    auto size = rng() % 100000;
    fmt::format_to(std::back_inserter(out.bytes),
                   R"x({{"user": "user-{}", "status": {}, "bytes": {}, )x"
                   R"x("agent": "Mozilla/5.0 (X11; Linux x86_64)", )x"
                   R"x("path": "/a/b/{}"}})x",
                   user, status, size, rng() % 1000);
    out.ends.push_back(static_cast<uint32_t>(out.bytes.size()));
  }
  out.bytes.append(simdjson::SIMDJSON_PADDING, ' ');
  return out;
}

schema log_schema() {
  schema s;
  s.fields = {{"user", field_type::string},
              {"status", field_type::int64},
              {"bytes", field_type::int64}};
  return s;
}

int field_of(std::string_view key) {
  return key == "user" ? 0 : key == "status" ? 1 : key == "bytes" ? 2 : -1;
}

/// Runs `parse(i, batch)` over all lines in batches of 1024 rows; returns
/// the sum of the `bytes` column, or -1 when a line failed.
template <class Parse>
int64_t run(const lines& in, const schema& s, Parse parse) {
  int64_t sum = 0;
  row_batch out{s};
  auto drain = [&] {
    for (auto x : out.columns[2].ints)
      sum += x;
    out.reset(s);
  };
  for (size_t i = 0; i < in.ends.size(); ++i) {
    if (out.rows == 1024)
      drain();
    if (!parse(i, out))
      return -1;
  }
  drain();
  return sum;
}

void report(const char* parser, const lines& in, clock_type::duration took,
            int64_t sum) {
  double mib = static_cast<double>(in.ends.back()) / (1 << 20);
  double seconds = std::chrono::duration<double>(took).count();
  fmt::print(R"({{"figure": "v", "parser": "{}", "mib_per_s": {:.0f}, )"
             R"("sum": {}}})"
             "\n",
             parser, mib / seconds, sum);
}

} // namespace

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::stoul(argv[1]) : 2000000;
  int runs = argc > 2 ? std::stoi(argv[2]) : 3;
  auto in = make_lines(n);
  auto s = log_schema();
  auto weir_parse = [&](size_t i, row_batch& out) {
    return weir::ops::parse_json_line(in[i], s, out).empty();
  };
  simdjson::ondemand::parser on_demand;
  auto simdjson_on_demand = [&](size_t i, row_batch& out) {
    auto doc = on_demand.iterate(in[i].data(), in[i].size(), in.capacity(i));
    simdjson::ondemand::object obj;
    if (doc.get_object().get(obj))
      return false;
    for (auto member : obj) {
      std::string_view key;
      if (member.unescaped_key().get(key))
        return false;
      auto k = field_of(key);
      if (k < 0)
        continue;
      if (k == 0) {
        std::string_view text;
        if (member.value().get_string().get(text))
          return false;
        out.columns[0].push_str(text);
      } else {
        int64_t x = 0;
        if (member.value().get_int64().get(x))
          return false;
        out.columns[static_cast<size_t>(k)].push_int(x);
      }
    }
    ++out.rows;
    return true;
  };
  simdjson::dom::parser dom;
  auto simdjson_dom = [&](size_t i, row_batch& out) {
    simdjson::dom::object obj;
    if (dom.parse(in[i].data(), in[i].size(), false).get(obj))
      return false;
    for (auto [key, value] : obj) {
      auto k = field_of(key);
      if (k < 0)
        continue;
      if (k == 0) {
        std::string_view text;
        if (value.get_string().get(text))
          return false;
        out.columns[0].push_str(text);
      } else {
        int64_t x = 0;
        if (value.get_int64().get(x))
          return false;
        out.columns[static_cast<size_t>(k)].push_int(x);
      }
    }
    ++out.rows;
    return true;
  };
  auto dom_name = "simdjson DOM ("
                  + simdjson::get_active_implementation()->name() + ")";
  for (int r = 0; r < runs; ++r) {
    auto t0 = clock_type::now();
    auto a = run(in, s, weir_parse);
    auto t1 = clock_type::now();
    auto c = run(in, s, simdjson_on_demand);
    auto t2 = clock_type::now();
    auto d = run(in, s, simdjson_dom);
    auto t3 = clock_type::now();
    report("weir parse_json_line", in, t1 - t0, a);
    report("simdjson On Demand", in, t2 - t1, c);
    report(dom_name.c_str(), in, t3 - t2, d);
    if (a < 0 || a != c || a != d) {
      fmt::print(stderr, "bench_json_lines: the parsers disagree ({}, {}, "
                         "{})\n", a, c, d);
      return 1;
    }
  }
  return 0;
}
