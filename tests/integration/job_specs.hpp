#pragma once

// The job graphs the integration tests share: as job-spec JSON (for the
// CLI) or as a job_graph (for tests that fill a state directory directly).

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "messages/job_graph.hpp"

namespace weir::test {

/// Word count of `${input}` into `${output}` (job parameters), Flink's
/// tokenizer; the last edge's partitioning is `last_edge`.
inline std::string wordcount_spec(const std::string& name, int parallelism = 1,
                                  const std::string& last_edge = "rebalance") {
  return fmt::format(R"({{
    "name": "{}", "parallelism": {}, "params": {{"input": "", "output": ""}},
    "vertices": [
      {{"id": "lines", "operator": "text_file", "params": {{"path": "${{input}}"}}}},
      {{"id": "words", "operator": "flat_map", "params": {{"function": "tokenize"}}}},
      {{"id": "counts", "operator": "count"}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "${{output}}"}}}}],
    "edges": [
      {{"from": "lines", "to": "words", "partitioning": "forward"}},
      {{"from": "words", "to": "counts", "partitioning": "hash"}},
      {{"from": "counts", "to": "out", "partitioning": "{}"}}]}})",
                     name, parallelism, last_edge);
}

/// Generated events (1000/s) into a discarding sink, parallelism 2,
/// checkpointed every 100 ms; it runs until cancelled.
inline const std::string checkpointed_stream_spec = R"({
    "name": "checkpointed", "parallelism": 2,
    "config": {"execution.checkpointing.interval": "100 ms"},
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 1000}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink", "partitioning": "rebalance"}]})";

/// Lines of `input` parsed as integers by the test library "faults"'
/// `throws` operator (an integer that does not parse throws), restarted
/// once 10 ms after the first failure; then the job fails.
inline std::string throws_once_spec(const std::string& input) {
  return fmt::format(R"({{
    "name": "throws",
    "config": {{"restart-strategy.type": "fixed-delay",
                "restart-strategy.fixed-delay.attempts": "1",
                "restart-strategy.fixed-delay.delay": "10 ms"}},
    "vertices": [
      {{"id": "lines", "operator": "text_file", "params": {{"path": "{}"}}}},
      {{"id": "parse", "operator": "throws"}},
      {{"id": "out", "operator": "collect"}}],
    "edges": [{{"from": "lines", "to": "parse", "partitioning": "rebalance"}},
              {{"from": "parse", "to": "out", "partitioning": "rebalance"}}]}})",
                     input);
}

/// The sum of 1..`to` by key `i mod modulus`, collected by one sink subtask.
inline std::string keyed_sum_spec(const std::string& name, int parallelism,
                                  int64_t to, int64_t modulus) {
  return fmt::format(R"({{
    "name": "{}", "parallelism": {},
    "vertices": [
      {{"id": "numbers", "operator": "sequence", "params": {{"from": 1, "to": {}}}}},
      {{"id": "keyed", "operator": "map", "params": {{"function": "key_mod", "modulus": {}}}}},
      {{"id": "sums", "operator": "sum"}},
      {{"id": "out", "operator": "collect", "parallelism": 1}}],
    "edges": [
      {{"from": "numbers", "to": "keyed", "partitioning": "forward"}},
      {{"from": "keyed", "to": "sums", "partitioning": "hash"}},
      {{"from": "sums", "to": "out", "partitioning": "rebalance"}}]}})",
                     name, parallelism, to, modulus);
}

/// The even numbers of 1..`n`, collected: a job graph with a fresh id for
/// tests that store it themselves. Source and filter run `parallelism`
/// subtasks; the sink one.
inline job_graph evens_graph(int64_t n, int32_t parallelism = 1) {
  job_graph g;
  g.id = job_id::random();
  g.name = "evens";
  g.vertices = {
    {"numbers", "sequence", {{"from", "1"}, {"to", std::to_string(n)}},
     parallelism},
    {"even", "filter", {{"function", "even"}}, parallelism},
    {"result", "collect", {}, 1}};
  g.edges = {{"numbers", "even", partitioning::forward},
             {"even", "result",
              parallelism == 1 ? partitioning::forward : partitioning::rebalance}};
  return g;
}

} // namespace weir::test
