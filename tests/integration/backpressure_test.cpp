// Credit-based flow control: a deliberately slow sink slows its producer
// instead of letting buffered records pile up in memory.
#include <doctest/doctest.h>

#include "process.hpp"

using namespace weir::test;

TEST_CASE("a slow sink keeps memory bounded") {
  temp_dir dir;
  // 2 million records of ~50 bytes (over 200 MB as records in memory) into a
  // sink that takes 1 ms per batch (it sleeps in write(), on its subtask's own
  // thread): only credits returned per processed batch hold the generator
  // back; without them it would run far ahead and buffer most records.
  auto spec = dir.write("slow.json", R"({
    "name": "slow",
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"count": 2000000, "keys": 1000000}},
      {"id": "slow", "operator": "discard", "params": {"delay_ms": 1}}],
    "edges": [{"from": "events", "to": "slow", "partitioning": "rebalance"}]})");
  auto r = run_weir({"run", spec});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("(2000000 records in, 2000000 records out)")
        != std::string::npos);
  MESSAGE("peak RSS: " << r.max_rss_kb << " KiB");
  CHECK(r.max_rss_kb < 64 * 1024);
}
