// (y) How long after a window's end its row reaches the sink: an embedded
// cluster runs source -> tumbling 100 ms event-time window (count per key)
// -> actor sink. The source stamps each row with the clock (ms since 1970)
// and its watermarks are monotonous, so a window [s, e) fires once a row
// stamped e or later reached the window: the row's arrival at the sink
// less e is the watermark's trip from the source through the window, the
// firing, and the row's trip to the sink. Prints one JSON line with the
// percentiles over every window but the last (which the end of the input
// fires). Usage: bench_window_latency [SECONDS] [WATERMARK_INTERVAL_MS]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "api/actor_sink.hpp"
#include "api/cluster.hpp"
#include "api/job_builder.hpp"
#include "messages/errors.hpp"

namespace {

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
    .count();
}

/// Ten keyed rows stamped with the clock every millisecond, for `seconds`.
class clock_source : public weir::ops::source {
public:
  explicit clock_source(int64_t seconds) : end_(now_ms() + seconds * 1000) {}

  bool next(weir::row_batch& out, size_t) override {
    auto t = now_ms();
    if (t == last_)
      return true;
    last_ = t;
    for (int k = 0; k < 10; ++k) {
      out.columns[0].push_str("k" + std::to_string(k));
      out.columns[1].push_int(t);
      ++out.rows;
      out.push_time(t);
    }
    return t < end_;
  }
  std::chrono::microseconds pause() const override {
    return std::chrono::microseconds{1000};
  }

private:
  int64_t end_;
  int64_t last_ = 0;
};

double percentile(std::vector<int64_t> xs, double p) {
  std::sort(xs.begin(), xs.end());
  auto i = static_cast<size_t>(p * static_cast<double>(xs.size() - 1));
  return static_cast<double>(xs[i]);
}

} // namespace

int main(int argc, char** argv) {
  int64_t seconds = argc > 1 ? std::atoll(argv[1]) : 10;
  std::string interval = argc > 2 ? argv[2] : "0";
  caf::actor_system_config cfg;
  weir::prepare_actor_system(cfg);
  caf::actor_system sys{cfg};
  auto cluster = weir::embedded_cluster::start(sys);
  if (!cluster) {
    fmt::print(stderr, "{}\n", weir::describe(cluster.error()));
    return 1;
  }
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> arrivals; // window end, arrival
  auto receiver = sys.spawn(
    [&](weir::row_receiver_actor::pointer)
      -> weir::row_receiver_actor::behavior_type {
      return {[&](weir::data_atom, weir::row_delivery& d) {
        auto t = now_ms();
        std::lock_guard<std::mutex> guard{m};
        for (size_t r = 0; r < d.rows.rows; ++r)
          arrivals.emplace_back(d.rows.columns[2].ints[r], t);
        return true;
      }};
    });
  weir::ops::operator_factory source;
  source.name = "clock";
  source.make_source = [seconds](const weir::ops::params&) {
    return std::make_unique<clock_source>(seconds);
  };
  source.bounded = [](const weir::ops::params&) { return true; };
  source.output_schema = [](const weir::ops::params&,
                            const weir::ops::schema_query&) {
    return weir::ops::derived_schema{weir::default_schema::keyed_numbers(), {}};
  };
  using namespace std::chrono_literals;
  weir::job_builder job{"window latency"};
  job.parallelism(1).config("pipeline.auto-watermark-interval", interval + " ms");
  job.source(source)
    .monotonous_watermarks("value")
    .key_by("key")
    .window(weir::window_assigner::tumbling(100ms))
    .count()
    .to(weir::actor_sink(sys, receiver));
  auto result = (*cluster)->run(job.build());
  caf::anon_send_exit(receiver, caf::exit_reason::user_shutdown);
  if (!result || result->state != weir::job_state::finished) {
    fmt::print(stderr, "the job did not finish\n");
    return 1;
  }
  std::lock_guard<std::mutex> guard{m};
  int64_t last_end = 0;
  for (auto& [end, at] : arrivals)
    last_end = std::max(last_end, end);
  std::vector<int64_t> latencies;
  for (auto& [end, at] : arrivals)
    if (end < last_end)
      latencies.push_back(at - end);
  if (latencies.empty()) {
    fmt::print(stderr, "no window fired before the end\n");
    return 1;
  }
  fmt::print("{{\"figure\": \"y\", \"watermark_interval_ms\": {}, \"rows\": {}, "
             "\"p50_ms\": {}, \"p99_ms\": {}, \"max_ms\": {}}}\n",
             interval, latencies.size(), percentile(latencies, 0.5),
             percentile(latencies, 0.99), percentile(latencies, 1.0));
  return 0;
}
