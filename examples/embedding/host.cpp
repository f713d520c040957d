// A host program that embeds weir: its own CAF actor system, a weir cluster
// inside it, and a word-count job submitted to the cluster's Dispatcher.
// Prints each word and its count, sorted by word. Built against the
// installed library with pkg-config (README.md in this folder).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "cluster/mini_cluster.hpp"
#include "cluster/runtime_config.hpp"
#include "config/config.hpp"
#include "messages/dispatcher.hpp"
#include "messages/errors.hpp"
#include "plan/job_spec.hpp"

namespace {

using namespace std::chrono_literals;

const char* text = "the quick brown fox\n"
                   "jumps over the lazy dog\n"
                   "the dog sleeps\n";

/// The job: read a file, split lines into words, count each word (keyed by
/// the word, so each count comes from one subtask), collect the counts.
std::string wordcount_spec(const std::string& input) {
  return R"({"name": "embedded word count", "parallelism": 2,
    "vertices": [
      {"id": "lines", "operator": "text_file", "params": {"path": ")"
         + input + R"("}},
      {"id": "words", "operator": "flat_map", "params": {"function": "tokenize"}},
      {"id": "counts", "operator": "count"},
      {"id": "out", "operator": "collect", "parallelism": 1}],
    "edges": [
      {"from": "lines", "to": "words", "partitioning": "forward"},
      {"from": "words", "to": "counts", "partitioning": "hash"},
      {"from": "counts", "to": "out", "partitioning": "rebalance"}]})";
}

int fail(const std::string& what) {
  std::fprintf(stderr, "host: %s\n", what.c_str());
  return 1;
}

/// Runs the job in `cluster` and prints its counts; returns the exit code.
int run_wordcount(caf::actor_system& sys, weir::mini_cluster& cluster,
                  const std::string& input) {
  auto spec = weir::parse_job_spec_text(wordcount_spec(input), "wordcount");
  if (!spec)
    return fail(weir::describe(spec.error()));
  auto graph = weir::resolve_job_graph(*spec, {});
  if (!graph)
    return fail(weir::describe(graph.error()));
  caf::scoped_actor self{sys};
  weir::dispatcher_actor dispatcher = cluster.dispatcher();
  std::string problem;
  weir::job_result result;
  // Submit; the reply is the job's id once the cluster stored the job.
  // Then ask for its result, which the Dispatcher answers when it ended.
  self->request(dispatcher, 10s, weir::submit_atom_v, std::move(*graph))
    .receive(
      [&](weir::job_id id) {
        self->request(dispatcher, caf::infinite, weir::result_atom_v, id)
          .receive([&](weir::job_result& r) { result = std::move(r); },
                   [&](caf::error& err) { problem = weir::describe(err); });
      },
      [&](caf::error& err) { problem = weir::describe(err); });
  if (!problem.empty())
    return fail(problem);
  if (result.state != weir::job_state::finished)
    return fail("the job ended " + weir::to_string(result.state) + ": "
                + result.error);
  std::vector<std::pair<std::string, int64_t>> counts;
  for (auto& r : result.collected)
    counts.emplace_back(r.key, r.num);
  std::sort(counts.begin(), counts.end());
  for (auto& [word, n] : counts)
    std::printf("%s %lld\n", word.c_str(), static_cast<long long>(n));
  return 0;
}

} // namespace

int main() {
  // The host's actor system: weir's message types and scheduler settings
  // are added to the host's own configuration.
  caf::actor_system_config cfg;
  weir::configure_actor_system(cfg);
  caf::actor_system sys{cfg};
  // The cluster's options from weir's configuration defaults, with two
  // slots for the job's parallelism of 2.
  auto opts = weir::mini_cluster_options::from(weir::configuration{});
  opts.slots_per_task_executor = 2;
  auto cluster = weir::mini_cluster::start(sys, opts);
  if (!cluster)
    return fail("cannot start the cluster: " + weir::describe(cluster.error()));
  auto input = std::filesystem::temp_directory_path()
               / ("weir-host-" + std::to_string(getpid()) + ".txt");
  std::ofstream{input} << text;
  auto code = run_wordcount(sys, **cluster, input.string());
  std::filesystem::remove(input);
  (*cluster)->stop();
  return code;
}
