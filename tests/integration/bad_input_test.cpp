// Bad input: one clear line naming file and field or flag, exit code 2,
// no crash, no hang, no output file.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "process.hpp"

using namespace weir::test;

namespace {

constexpr const char* good_spec = R"({
  "name": "wc", "params": {"input": "", "output": ""},
  "vertices": [
    {"id": "lines", "operator": "text_file", "params": {"path": "${input}"}},
    {"id": "words", "operator": "flat_map", "params": {"function": "tokenize"}},
    {"id": "counts", "operator": "count"},
    {"id": "out", "operator": "text_file", "params": {"path": "${output}"}}],
  "edges": [
    {"from": "lines", "to": "words", "partitioning": "forward"},
    {"from": "words", "to": "counts", "partitioning": "hash"},
    {"from": "counts", "to": "out", "partitioning": "rebalance"}]})";

std::string replace(std::string s, const std::string& from,
                    const std::string& to) {
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

/// Runs a spec through `weir run` and checks the error contract.
void expect_rejected(const std::string& spec_text, const std::string& message,
                     std::vector<std::string> extra = {}) {
  temp_dir dir;
  auto spec = dir.write("job.json", spec_text);
  auto input = dir.write("in.txt", "some words here\n");
  auto out = dir.file("out.txt");
  std::vector<std::string> args{"run", spec, "--input", input, "--output", out};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_weir(args);
  CHECK(r.exit_code == 2);
  CHECK_FALSE(r.timed_out);
  CHECK(r.out.empty());
  auto expected = replace(message, "SPEC", spec);
  CHECK(r.err == expected + "\n");
  CHECK_FALSE(exists(out));
}

} // namespace

TEST_CASE("the good spec used below runs") {
  temp_dir dir;
  auto spec = dir.write("job.json", good_spec);
  auto input = dir.write("in.txt", "some words here\n");
  auto r = run_weir({"run", spec, "--input", input, "--output", dir.file("o")});
  CHECK(r.exit_code == 0);
  CHECK(read_file(dir.file("o")) == "here\t1\nsome\t1\nwords\t1\n");
}

TEST_CASE("malformed JSON names line and column") {
  expect_rejected("{\n  \"name\": \"wc\",\n  \"vertices\": [,]\n}",
                  "SPEC:3:16: syntax error: unexpected ','; expected '[', '{', "
                  "or a literal");
}

TEST_CASE("a missing field is named") {
  expect_rejected(replace(good_spec, R"("operator": "count")", R"("op": "count")"),
                  "SPEC: vertices[2].op: unknown field (known: id, operator, "
                  "params, parallelism, watermarks)");
  expect_rejected(replace(good_spec, R"("name": "wc", )", ""),
                  "SPEC: name: missing");
}

TEST_CASE("an unknown operator is named with its vertex") {
  expect_rejected(replace(good_spec, R"("operator": "count")",
                          R"("operator": "frobnicate")"),
                  "SPEC: vertices[2] ('counts'): unknown operator 'frobnicate' (not "
                  "built in: an operator of a user library needs --libjars "
                  "LIB, and weir info --libjars LIB lists them)");
}

TEST_CASE("an unknown partitioning is named") {
  expect_rejected(replace(good_spec, R"("partitioning": "hash")",
                          R"("partitioning": "shuffle")"),
                  "SPEC: edges[1].partitioning: unknown partitioning 'shuffle' "
                  "(known: forward, hash, rebalance, broadcast)");
}

TEST_CASE("a cycle is named") {
  expect_rejected(replace(good_spec, R"({"from": "counts", "to": "out",)",
                          R"({"from": "counts", "to": "words", "partitioning": "hash"},
                             {"from": "counts", "to": "out",)"),
                  "SPEC: vertex 'words': part of a cycle");
}

TEST_CASE("a dangling edge is named") {
  expect_rejected(replace(good_spec, R"("to": "out")", R"("to": "nowhere")"),
                  "SPEC: edge 'counts' -> 'nowhere': no vertex 'nowhere'");
}

TEST_CASE("parallelism 0 and above the maximum are rejected") {
  expect_rejected(replace(good_spec, R"("operator": "count")",
                          R"("operator": "count", "parallelism": 0)"),
                  "SPEC: vertices[2] ('counts'): parallelism 0 is outside [1, "
                  "32768]");
  expect_rejected(replace(good_spec, R"("operator": "count")",
                          R"("operator": "count", "parallelism": 40000)"),
                  "SPEC: vertices[2] ('counts'): parallelism 40000 is outside "
                  "[1, 32768]");
}

TEST_CASE("a missing input file is named") {
  temp_dir dir;
  auto spec = dir.write("job.json", good_spec);
  auto out = dir.file("out.txt");
  auto r = run_weir({"run", spec, "--input", "/nonexistent/in.txt", "--output",
                     out});
  CHECK(r.exit_code == 2);
  CHECK(r.err
        == spec + ": vertices[0] ('lines'): parameter 'path': file "
                  "'/nonexistent/in.txt' does not exist\n");
  CHECK_FALSE(exists(out));
}

TEST_CASE("a missing spec file is named") {
  auto r = run_weir({"run", "/nonexistent/job.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "/nonexistent/job.json: cannot read file: No such file or "
                 "directory\n");
}

TEST_CASE("unknown flags, actions and arguments are named") {
  auto flag = run_weir({"run", "--bogus", "examples/wordcount.json"});
  CHECK(flag.exit_code == 2);
  CHECK(flag.err == "weir run: unknown flag '--bogus' (see weir run --help)\n");
  auto after = run_weir({"run", "examples/wordcount.json", "--inptu", "x"});
  CHECK(after.exit_code == 2);
  CHECK(after.err == "weir run: unknown flag '--inptu' (job 'wordcount' takes "
                     "--input, --output; see weir run --help)\n");
  auto action = run_weir({"runn"});
  CHECK(action.exit_code == 2);
  CHECK(action.err == "weir: unknown action 'runn' (known: run, info, list, "
                      "status, wait, cancel, checkpoint, savepoint, stop, "
                      "rescale, jobmanager, taskmanager, repair-state, cert; "
                      "see weir --help)\n");
  auto bad_value = run_weir({"run", "examples/wordcount.json", "-p", "two"});
  CHECK(bad_value.exit_code == 2);
  CHECK(bad_value.err.find("weir run: ") == 0);
  auto dashes = run_weir({"run", "examples/wordcount.json", "--"});
  CHECK(dashes.exit_code == 2);
  CHECK(dashes.err == "weir run: unknown flag '--' (job 'wordcount' takes "
                      "--input, --output; see weir run --help)\n");
  auto no_spec = run_weir({"run"});
  CHECK(no_spec.exit_code == 2);
  CHECK(no_spec.err == "weir run: missing job spec (see weir run --help)\n");
  auto slots = run_weir({"run", "examples/wordcount.json", "--slots", "0"});
  CHECK(slots.exit_code == 2);
  CHECK(slots.err == "weir run: --slots 0: key "
                     "'taskmanager.numberOfTaskSlots': expected a value in "
                     "[1, 32768], got '0'\n");
}

TEST_CASE("a local cluster too small for the job is refused at once") {
  auto r = run_weir({"run", "examples/wordcount.json", "-p", "4",
                     "--taskmanagers", "1", "--slots", "3"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "weir run: the job needs 4 slots (its highest parallelism) "
                 "but minicluster.number-of-taskmanagers 1 (--taskmanagers 1) "
                 "x taskmanager.numberOfTaskSlots 3 (--slots 3) give 3\n");
}

TEST_CASE("bad configuration keys and values are named with their source") {
  auto key = run_weir({"run", "examples/collect.json", "-Dtaskmanager.slots=2"});
  CHECK(key.exit_code == 2);
  CHECK(key.err == "weir run: -Dtaskmanager.slots=2: unknown key "
                   "'taskmanager.slots' (see docs/configuration.md)\n");
  temp_dir dir;
  auto file = dir.write("weir.yaml", "slot.request.timeout: soon\n");
  auto value = run_weir({"run", "--config", file, "examples/collect.json"});
  CHECK(value.exit_code == 2);
  CHECK(value.err == "weir run: " + file + ":1: key 'slot.request.timeout': "
                     "expected a duration such as '500 ms' or '10 s', got "
                     "'soon'\n");
  auto ok = run_weir({"run", "--config", dir.write("ok.yaml",
                      "taskmanager.numberOfTaskSlots: 2\n"),
                      "examples/collect.json", "--to", "2"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "2\n");
}

TEST_CASE("a job may set only its restart strategy; heartbeats must be sane") {
  temp_dir dir;
  auto spec = dir.write("job.json", R"({
    "name": "c", "config": {"taskmanager.numberOfTaskSlots": "4"},
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 3}},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "numbers", "to": "out"}]})");
  auto r = run_weir({"run", spec});
  CHECK(r.exit_code == 2);
  CHECK(r.err == spec + ": config: key 'taskmanager.numberOfTaskSlots' cannot "
                        "be set per job: it configures the cluster's "
                        "processes (per job: restart-strategy.*, "
                        "execution.checkpointing.*, execution.savepoint.*, "
                        "state.checkpoints.num-retained, state.backend.type, "
                        "slot.request.timeout, pipeline.*, "
                        "jobmanager.scheduler, jobmanager.adaptive-scheduler.*, "
                        "scheduler-mode, driver.*)\n");
  auto hb = run_weir({"run", "examples/collect.json", "-Dheartbeat.interval=5 s"});
  CHECK(hb.exit_code == 2);
  CHECK(hb.err == "weir run: heartbeat.interval (5000 ms, "
                  "-Dheartbeat.interval=5 s) must be above 0 and "
                  "below heartbeat.timeout (3000 ms, default)\n");
}

TEST_CASE("an edge's key needs hash partitioning") {
  expect_rejected(replace(good_spec, R"("partitioning": "rebalance")",
                          R"("partitioning": "rebalance", "key": ["key"])"),
                  "SPEC: edge 'counts' -> 'out': \"key\" needs "
                  "\"partitioning\": \"hash\"");
  expect_rejected(replace(good_spec, R"("partitioning": "hash")",
                          R"("partitioning": "hash", "key": {"f": 1})"),
                  "SPEC: edges[1].key: expected a field name or an array of "
                  "field names, got an object");
}

namespace {

/// `weir info` of `spec_text`: exit 2 and one line on stderr that starts
/// with `prefix` (SPEC: the spec's path) and holds each of `parts`. The
/// types in schema problems are the built-in operators' own.
void expect_info_refuses(const std::string& spec_text,
                         const std::string& prefix,
                         std::vector<std::string> parts = {}) {
  temp_dir dir;
  auto spec = dir.write("job.json", spec_text);
  auto input = dir.write("in.txt", "some words here\n");
  auto r = run_weir({"info", spec, "--input", input, "--output", "-"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(replace(prefix, "SPEC", spec), 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (auto& part : parts)
    CHECK_MESSAGE(r.err.find(part) != std::string::npos, part);
}

} // namespace

TEST_CASE("schema problems are one line naming the edge or vertex (exit 2)") {
  // A key field the producer does not emit.
  expect_info_refuses(replace(good_spec, R"("partitioning": "hash")",
                              R"("partitioning": "hash", "key": ["usr"])"),
                      "SPEC: edge 'words' -> 'counts': key field 'usr' is not "
                      "in (");
  // Two inputs whose rows differ: numbers and lines into one vertex.
  expect_info_refuses(R"({"name": "mix", "params": {"input": "", "output": ""},
    "vertices": [
      {"id": "nums", "operator": "sequence", "params": {"from": 1, "to": 3}},
      {"id": "lines", "operator": "text_file", "params": {"path": "${input}"}},
      {"id": "both", "operator": "map", "params": {"function": "identity"}},
      {"id": "out", "operator": "text_file", "params": {"path": "${output}"}}],
    "edges": [
      {"from": "nums", "to": "both", "partitioning": "rebalance"},
      {"from": "lines", "to": "both", "partitioning": "rebalance"},
      {"from": "both", "to": "out"}]})",
                      "SPEC: vertex 'both': its inputs differ: 'nums' sends (",
                      {", 'lines' sends ("});
}
