// A cluster started on a RocksDB state directory that holds jobs: the
// unfinished ones run to completion, finished ones never run again, corrupt
// records are reported by key and skipped.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <fmt/format.h>

#include "cluster/mini_cluster.hpp"
#include "cluster/runtime_config.hpp"
#include "messages/errors.hpp"
#include "messages/record.hpp"
#include "job_specs.hpp"
#include "process.hpp"
#include "storage/job_graph_store.hpp"
#include "storage/job_result_store.hpp"
#include "storage/rocksdb_store.hpp"

using namespace weir;
using namespace weir::test;

namespace {

int64_t sum_of(const std::vector<collected_table>& tables) {
  int64_t total = 0;
  for (auto& r : to_records(tables))
    total += r.num;
  return total;
}

/// Waits (up to a deadline) for the result of a job.
job_result wait_for_result(caf::actor_system& sys, dispatcher_actor d,
                           job_id id) {
  caf::scoped_actor self{sys};
  job_result result;
  self->request(d, std::chrono::seconds(60), result_atom_v, id)
    .receive([&](job_result& r) { result = std::move(r); },
             [&](caf::error& err) { FAIL_CHECK(describe(err)); });
  return result;
}

} // namespace

TEST_CASE("a cluster on a state directory recovers its unfinished jobs") {
  temp_dir dir;
  auto state = dir.file("state");
  auto unfinished = evens_graph(1000, 2);
  auto finished = evens_graph(10, 2);
  job_result old;
  old.id = finished.id;
  old.name = finished.name;
  old.state = job_state::finished;
  old.collected = {collected_table{"out", default_schema::numbers(),
                                   row_batch{default_schema::numbers()}}};
  old.collected[0].rows.columns[0].push_int(7);
  old.collected[0].rows.rows = 1;
  {
    auto kv = storage::open_rocksdb_store(state);
    REQUIRE(kv);
    storage::job_graph_store graphs{**kv};
    storage::job_result_store results{**kv};
    REQUIRE_FALSE(graphs.put(unfinished));
    REQUIRE_FALSE(graphs.put(finished));
    REQUIRE_FALSE(results.put_dirty(old));
    REQUIRE_FALSE(results.mark_clean(old.id));
    REQUIRE_FALSE((*kv)->put(storage::column::job_graphs,
                             std::string(32, 'f'), "{not json",
                             storage::durability::synced));
  }
  {
    caf::actor_system_config cfg;
    configure_actor_system(cfg);
    caf::actor_system sys{cfg};
    mini_cluster_options opts;
    opts.slots_per_task_executor = 2;
    opts.state_dir = state;
    auto cluster = mini_cluster::start(sys, opts);
    REQUIRE(cluster);
    auto r = wait_for_result(sys, (*cluster)->dispatcher(), unfinished.id);
    CHECK(r.state == job_state::finished);
    CHECK(sum_of(r.collected) == 250500); // 2 + 4 + ... + 1000
    auto again = wait_for_result(sys, (*cluster)->dispatcher(), finished.id);
    CHECK(again == old);
    (*cluster)->stop();
  }
  // Afterwards the recovered job has a clean result and no stored graph.
  auto kv = storage::open_rocksdb_store(state);
  REQUIRE(kv);
  auto entry = storage::job_result_store{**kv}.get(unfinished.id);
  REQUIRE(entry);
  REQUIRE(entry->has_value());
  CHECK((*entry)->result.state == job_state::finished);
  CHECK_FALSE((*entry)->dirty);
  auto graph = storage::job_graph_store{**kv}.get(unfinished.id);
  REQUIRE(graph);
  CHECK_FALSE(graph->has_value());
}

TEST_CASE("weir run with an unusable state directory exits 3 and names it") {
  temp_dir dir;
  auto file = dir.write("plain-file", "x");
  auto r = run_weir({"run", "examples/collect.json", "--state-dir",
                     file + "/state"});
  CHECK(r.exit_code == 3);
  CHECK(r.err == "weir run: cannot start the local cluster: " + file
                   + "/state: cannot create directory: Not a directory\n");
}

TEST_CASE("weir run with a state directory keeps the job's result there") {
  temp_dir dir;
  auto state = dir.file("state");
  auto r = run_weir({"run", "examples/collect.json", "--to", "6", "--state-dir",
                     state});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "2\n4\n6\n");
  auto kv = storage::open_rocksdb_store(state);
  REQUIRE(kv);
  auto results = storage::job_result_store{**kv}.load_all();
  REQUIRE(results);
  REQUIRE(results->entries.size() == 1);
  CHECK(results->entries[0].result.state == job_state::finished);
  CHECK(r.err.find(results->entries[0].result.id.to_string()) != std::string::npos);
}

namespace {

/// A state directory holding `g`, stored and never run (a `weir run` that
/// was killed, say).
void store_unfinished(const std::string& state, const job_graph& g) {
  auto kv = storage::open_rocksdb_store(state);
  REQUIRE(kv);
  REQUIRE_FALSE(storage::job_graph_store{**kv}.put(g));
}

} // namespace

using namespace std::chrono_literals;

TEST_CASE("weir run --state-dir says what it recovered and what became of "
          "it") {
  temp_dir dir;
  auto state = dir.file("state");
  auto recovered = [&](const job_graph& g) {
    return fmt::format("weir run: recovered job {} (evens) from {}",
                       g.id.to_string(), state);
  };
  SUBCASE("a job that needs more slots than the local cluster has waits") {
    auto wide = evens_graph(10, 2);
    store_unfinished(state, wide);
    // The local cluster is sized to this run's job: one slot.
    auto r = run_weir({"run", "examples/collect.json", "--to", "4",
                       "--state-dir", state});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "2\n4\n");
    CHECK(r.err.find(recovered(wide) + ", left unfinished there; it is "
                                       "started too\n")
          == 0);
    CHECK(r.err.find(recovered(wide) + "; it is waiting for 2 of its 2 slots "
                                       "(this cluster has 1) and was left "
                                       "unfinished in " + state + "\n")
          != std::string::npos);
    // It is still there for the next run.
    auto again = run_weir({"run", "examples/collect.json", "--to", "2",
                           "--state-dir", state, "--slots", "3"});
    INFO("the second run said: " << again.err);
    CHECK(again.exit_code == 0);
    CHECK(again.err.find(recovered(wide) + ", left unfinished there")
          != std::string::npos);
  }
  SUBCASE("a job that gets its slots runs; a finished one is said so") {
    auto small = evens_graph(10, 1);
    store_unfinished(state, small);
    // This run's own job reads a FIFO, so it ends only when the test
    // closes its writing end: after the event log says that the recovered
    // job finished.
    auto fifo = dir.file("gate");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto held = dir.write("held.json", fmt::format(R"({{
      "name": "held",
      "vertices": [
        {{"id": "in", "operator": "text_file", "params": {{"path": "{}"}}}},
        {{"id": "out", "operator": "discard"}}],
      "edges": [{{"from": "in", "to": "out", "partitioning": "forward"}}]}})",
                                                    fifo));
    auto log = dir.file("events.log");
    running_process run{{std::getenv("WEIR_BIN"), "run", held, "--slots", "2",
                         "--state-dir", state, "--log", log}};
    REQUIRE(run.wait_for_stderr(recovered(small) + ", left unfinished there",
                                30s));
    REQUIRE(eventually([&] {
      return read_file(log).find("(evens) switched from RUNNING to FINISHED")
             != std::string::npos;
    }));
    int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    ::close(fd); // end of the own job's input
    auto r = run.finish(60s);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find(recovered(small) + "; it finished\n")
          != std::string::npos);
    // Its result is stored: the next run recovers nothing.
    auto again = run_weir({"run", "examples/collect.json", "--to", "2",
                           "--state-dir", state});
    CHECK(again.exit_code == 0);
    CHECK(again.err.find("recovered") == std::string::npos);
  }
}
