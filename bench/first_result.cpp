// (s) An embedded host program's time from start to its first result: a
// fresh actor system and embedded cluster, a job built with the job
// builder (sequence -> lambda map -> actor sink), timed from main() to
// the first batch at the host's actor and to the job's result. Prints one
// JSON line. Usage: bench_first_result [ROWS]
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "api/actor_sink.hpp"
#include "api/cluster.hpp"
#include "api/job_builder.hpp"
#include "messages/errors.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0)
    .count();
}

} // namespace

int main(int argc, char** argv) {
  auto t0 = clock_type::now();
  int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1000;
  caf::actor_system_config cfg;
  weir::prepare_actor_system(cfg);
  caf::actor_system sys{cfg};
  auto cluster = weir::embedded_cluster::start(sys);
  if (!cluster) {
    fmt::print(stderr, "{}\n", weir::describe(cluster.error()));
    return 1;
  }
  double cluster_ms = ms_since(t0);
  std::atomic<double> first_row_ms{-1};
  std::atomic<int64_t> received{0};
  auto receiver = sys.spawn(
    [&](weir::row_receiver_actor::pointer)
      -> weir::row_receiver_actor::behavior_type {
      return {[&](weir::data_atom, weir::row_delivery& d) {
        if (received.fetch_add(static_cast<int64_t>(d.rows.rows)) == 0)
          first_row_ms = ms_since(t0);
        return true;
      }};
    });
  auto b0 = clock_type::now();
  weir::job_builder job{"first result"};
  job.sequence(1, rows)
    .map([](weir::record&& r) {
      r.num *= 2;
      return std::move(r);
    })
    .to(weir::actor_sink(sys, receiver));
  auto def = job.build();
  double build_us = ms_since(b0) * 1000.0;
  auto result = (*cluster)->run(def);
  double result_ms = ms_since(t0);
  caf::anon_send_exit(receiver, caf::exit_reason::user_shutdown);
  if (!result || result->state != weir::job_state::finished
      || received != rows) {
    fmt::print(stderr, "the job did not deliver its {} rows\n", rows);
    return 1;
  }
  fmt::print("{{\"figure\": \"s\", \"rows\": {}, \"cluster_started_ms\": {:.2f}, "
             "\"first_row_ms\": {:.2f}, \"result_ms\": {:.2f}, "
             "\"build_us\": {:.1f}}}\n",
             rows, cluster_ms, first_row_ms.load(), result_ms, build_us);
  return 0;
}
