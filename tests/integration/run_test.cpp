// End-to-end tests of `weir run` and `weir info` through the real binary:
// exact results against independently computed references.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <csignal>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "job_specs.hpp"
#include "process.hpp"
#include "reference.hpp"

using namespace weir::test;


TEST_CASE("the README's word count prints exact counts of the sample text") {
  auto r = run_weir({"run", "examples/wordcount.json"});
  REQUIRE(r.exit_code == 0);
  auto text = read_file(source_path("examples/data/sample.txt"));
  CHECK(sorted_lines(r.out) == as_lines(reference_word_counts(text)));
  CHECK(r.err.find("Job has been submitted with JobID ") == 0);
  CHECK(r.err.find("has finished.") != std::string::npos);
}

TEST_CASE("word count of any text equals an independent count") {
  temp_dir dir;
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto text = random_text(seed, 3000 * static_cast<int>(seed));
    auto input = dir.write(fmt::format("in{}.txt", seed), text);
    auto p = std::to_string(seed + 1);
    auto r = run_weir({"run", "examples/wordcount.json", "-p", p, "--input",
                       input});
    REQUIRE(r.exit_code == 0);
    CHECK(sorted_lines(r.out) == as_lines(reference_word_counts(text)));
  }
}

TEST_CASE("Flink's word-count data reproduces faust.expected exactly") {
  auto input = source_path("../shared/testdata/flink-wordcount/faust.txt");
  auto expected = read_file(
    source_path("../shared/testdata/flink-wordcount/faust.expected"));
  temp_dir dir;
  auto out = dir.file("counts.txt");
  auto r = run_weir({"run", "examples/wordcount.json", "--input", input,
                     "--output", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  std::string flink_form;
  for (auto& line : sorted_lines(read_file(out))) {
    auto tab = line.find('\t');
    flink_form += line.substr(0, tab) + " " + line.substr(tab + 1) + "\n";
  }
  CHECK(flink_form == expected);
  CHECK(lines_of(expected).size() == 418);
  CHECK_FALSE(exists(out + ".inprogress"));
}

TEST_CASE("a text_file sink with parallelism above 1 writes part files") {
  temp_dir dir;
  auto text = random_text(7, 5000);
  auto input = dir.write("in.txt", text);
  auto spec = dir.write("wc3.json", wordcount_spec("wc3", 3, "forward"));
  auto out = dir.file("out");
  auto r = run_weir({"run", spec, "--input", input, "--output", out});
  REQUIRE(r.exit_code == 0);
  std::string all;
  for (int i = 0; i < 3; ++i) {
    auto part = fmt::format("{}/part-{}", out, i);
    CHECK(exists(part));
    all += read_file(part);
  }
  CHECK(sorted_lines(all) == as_lines(reference_word_counts(text)));
}

TEST_CASE("keyed sum over a sequence gives exact sums per key") {
  auto r = run_weir({"run", "examples/keyed_sum.json", "--to", "200000",
                     "--modulus", "1000"});
  REQUIRE(r.exit_code == 0);
  std::map<std::string, int64_t> expected;
  for (int64_t i = 1; i <= 200000; ++i)
    expected[std::to_string(i % 1000)] += i;
  CHECK(sorted_lines(r.out) == as_lines(expected));
}

TEST_CASE("weir run --log FILE appends the embedded cluster's event log") {
  temp_dir dir;
  auto log = dir.file("events.log");
  auto r = run_weir({"run", "examples/collect.json", "--to", "4", "--log",
                     log});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "2\n4\n");
  auto events = read_file(log);
  CHECK(events.find("Z weir run: TaskExecutor taskexecutor-0 registered")
        != std::string::npos);
  CHECK(events.find("(collect) switched from RUNNING to FINISHED")
        != std::string::npos);
  auto bad = run_weir({"run", "examples/collect.json", "--log",
                       dir.file("missing/events.log")});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "weir run: --log: cannot open '" + dir.file("missing/events.log")
                     + "': No such file or directory\n");
}

TEST_CASE("a --log file that cannot be opened: the same line from run, "
          "jobmanager and taskmanager") {
  temp_dir dir;
  auto log = dir.file("missing/events.log");
  auto line = [&](const std::string& action) {
    return "weir " + action + ": --log: cannot open '" + log
           + "': No such file or directory\n";
  };
  auto run = run_weir({"run", "examples/collect.json", "--log", log});
  CHECK(run.exit_code == 2);
  CHECK(run.err == line("run"));
  auto jm = run_weir({"jobmanager", "--port", "0", "--state-dir",
                      dir.file("state"), "--log", log});
  CHECK(jm.exit_code == 2);
  CHECK(jm.err == line("jobmanager"));
  CHECK_FALSE(exists(dir.file("state")));
  auto tm = run_weir({"taskmanager", "-m", "127.0.0.1:1", "--log", log});
  CHECK(tm.exit_code == 2);
  CHECK(tm.err == line("taskmanager"));
}

TEST_CASE("-r over checkpoints of several jobs is refused: it names them "
          "and asks for one job's directory") {
  temp_dir dir;
  for (auto job : {"0123456789abcdef0123456789abcdef",
                   "fedcba9876543210fedcba9876543210"})
    std::filesystem::create_directories(dir.file("checkpoints/") + job);
  dir.write("checkpoints/0123456789abcdef0123456789abcdef/chk-7", "");
  dir.write("checkpoints/fedcba9876543210fedcba9876543210/chk-3", "");
  auto r = run_weir({"run", "examples/collect.json", "-r",
                     dir.file("checkpoints")});
  CHECK(r.exit_code == 2);
  CHECK(r.err
        == "weir run: -r: '" + dir.file("checkpoints")
             + "' holds checkpoints of 2 jobs (0123456789abcdef0123456789abcdef, "
               "fedcba9876543210fedcba9876543210): give one job's directory, "
               "e.g. " + dir.file("checkpoints")
             + "/0123456789abcdef0123456789abcdef\n");
}

TEST_CASE("a bounded keyed sum emits each key once, in key order within "
          "each subtask (docs/operations.md § Bounded and unbounded jobs)") {
  auto r = run_weir({"run", "examples/keyed_sum.json", "--modulus", "3",
                     "--to", "30"});
  REQUIRE(r.exit_code == 0);
  CHECK(sorted_lines(r.out)
        == std::vector<std::string>{"0\t165", "1\t145", "2\t155"});
  // Keys 0 and 1 are in key groups of one subtask (85 and 88 of 128), 2
  // in the other's (20): 0 comes before 1 wherever 2 lands.
  auto lines = lines_of(r.out);
  auto zero = std::find(lines.begin(), lines.end(), "0\t165");
  auto one = std::find(lines.begin(), lines.end(), "1\t145");
  CHECK(zero < one);
}

TEST_CASE("a three-stage job mixing forward, hash, rebalance and broadcast") {
  auto r = run_weir({"run", "examples/pipeline.json"});
  REQUIRE(r.exit_code == 0);
  // generator: record i (0 <= i < 100000) has key "key-<i mod 100>" and value
  // i; filter keeps i > 500; max per key is 99900 + k; then squared.
  std::map<std::string, int64_t> expected;
  for (int64_t k = 0; k < 100; ++k)
    expected["key-" + std::to_string(k)] = (99900 + k) * (99900 + k);
  CHECK(sorted_lines(r.out) == as_lines(expected));
}

TEST_CASE("a collect sink hands its records back to the client") {
  auto r = run_weir({"run", "examples/collect.json", "--to", "20"});
  REQUIRE(r.exit_code == 0);
  CHECK(lines_of(r.out)
        == std::vector<std::string>{"2", "4", "6", "8", "10", "12", "14", "16",
                                    "18", "20"});
}

TEST_CASE("a job of 256 subtasks spread over four TaskExecutors") {
  temp_dir dir;
  auto spec = dir.write("wide.json",
                        keyed_sum_spec("wide", 128, 500000, 97));
  auto r = run_weir({"run", spec, "--taskmanagers", "4"});
  REQUIRE(r.exit_code == 0);
  std::map<std::string, int64_t> expected;
  for (int64_t i = 1; i <= 500000; ++i)
    expected[std::to_string(i % 97)] += i;
  CHECK(sorted_lines(r.out) == as_lines(expected));
  CHECK(r.err.find("(500000 records in, 97 records out)") != std::string::npos);
}

TEST_CASE("weir info prints the execution plan without running the job") {
  auto r = run_weir({"info", "examples/wordcount.json",
                     "-Drestart-strategy.type=none"});
  REQUIRE(r.exit_code == 0);
  auto settings = r.out.find("Job settings (key = value, from):\n");
  REQUIRE(settings != std::string::npos);
  // The job's settings and where each came from.
  auto setting_lines = lines_of(r.out.substr(settings));
  auto has = [&](const std::string& line) {
    return std::find(setting_lines.begin(), setting_lines.end(), line)
           != setting_lines.end();
  };
  CHECK(has("  restart-strategy.type = none  (-Drestart-strategy.type=none)"));
  CHECK(has("  slot.request.timeout = 300 s  (default)"));
  CHECK(has("  state.backend.type = hashmap  (default)"));
  r.out.resize(settings);
  auto edges = r.out.find("Edges:\n");
  REQUIRE(edges != std::string::npos);
  CHECK(r.out.substr(0, edges)
        == "Job 'wordcount': 4 vertices, 3 tasks, 5 subtasks\n"
           "Vertices:\n"
           "  lines   source     text_file  parallelism 2  path="
             + std::filesystem::current_path().string() // absolute for -m
             + "/examples/data/sample.txt\n"
             "  words   transform  flat_map   parallelism 2  function=tokenize\n"
           "  counts  transform  count      parallelism 2\n"
           "  out     sink       text_file  parallelism 1  path=-\n"
           "Tasks (operator chains):\n"
           "  task 1  parallelism 2  lines -> words\n"
           "  task 2  parallelism 2  counts\n"
           "  task 3  parallelism 1  out\n");
  // Each edge: its partitioning (hash: by the default key), the schema of
  // its rows (the built-in operators' own, tested in unit_plan), chained.
  auto lines = lines_of(r.out.substr(edges));
  REQUIRE(lines.size() == 4u);
  CHECK(lines[1]
        == "  lines -> words   forward        (value: string)              "
           "chained");
  CHECK(lines[2]
        == "  words -> counts  hash by (key)  (key: string, value: int64)");
  CHECK(lines[3]
        == "  counts -> out    rebalance      (key: string, value: int64)");
  CHECK(lines[3].back() == ')');
}

TEST_CASE("--help lists every flag") {
  auto top = run_weir({"--help"});
  CHECK(top.exit_code == 0);
  for (auto form : {"\n  run SPEC", "\n  info SPEC",
                    "\n  run -D -c NAME [OPTIONS] DRIVER_LIBRARY [ARGS...]\n",
                    "but cert takes --config FILE"})
    CHECK_MESSAGE(top.out.find(form) != std::string::npos, form);
  // weir run --help: both modes, driver mode's -D forms included.
  auto run = run_weir({"run", "--help"});
  CHECK(run.exit_code == 0);
  for (auto flag : {"--parallelism", "--taskmanagers", "--slots", "--state-dir",
                    "--help", "--disableSubmitOptimization", "--config",
                    "-D arg", "--driver", "--class", "-Dhm", "-Ddm", "-Dc",
                    "-Dnm"})
    CHECK_MESSAGE(run.out.find(flag) != std::string::npos, flag);
  auto info = run_weir({"info", "--help"});
  CHECK(info.exit_code == 0);
  CHECK(info.out.find("--parallelism") != std::string::npos);
  CHECK(run_weir({"savepoint", "--help"}).out.find("-d, --dispose")
        != std::string::npos);
  auto stop = run_weir({"stop", "--help"}).out;
  CHECK(stop.find("-p, --savepointPath") != std::string::npos);
  CHECK(stop.find("--drain") != std::string::npos);
  // Every action's help; its usage line without cxxopts' stray words.
  for (std::vector<std::string> args :
       {std::vector<std::string>{"run", "-D"}, {"jobmanager"}, {"taskmanager"},
        {"list"}, {"status"}, {"wait"}, {"cancel"}, {"checkpoint"},
        {"savepoint"}, {"stop"}, {"repair-state"}, {"cert", "node"}}) {
    args.push_back("--help");
    CAPTURE(args.front());
    auto r = run_weir(args);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Usage:") != std::string::npos);
    CHECK(r.out.find("positional parameters") == std::string::npos);
  }
}

TEST_CASE("a job that fails at run time exits 1 and leaves no output file") {
  temp_dir dir;
  // The sink's target is a non-empty directory: renaming the finished file
  // onto it fails when the sink finishes.
  auto target = dir.file("occupied");
  std::filesystem::create_directory(target);
  dir.write("occupied/keep", "x");
  auto r = run_weir({"run", "examples/collect.json"}); // warm-up: must pass
  REQUIRE(r.exit_code == 0);
  auto spec = dir.write("fail.json", R"({
    "name": "fail", "params": {"output": ""},
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 10}},
      {"id": "out", "operator": "text_file", "params": {"path": "${output}"}}],
    "edges": [{"from": "numbers", "to": "out"}]})");
  auto f = run_weir({"run", spec, "--output", target});
  CHECK(f.exit_code == 1);
  CHECK(f.err.find("ended FAILED: ") != std::string::npos);
  CHECK_FALSE(exists(target + ".inprogress"));
  CHECK(read_file(target + "/keep") == "x");
}

TEST_CASE("a terminal on stderr gets a live progress line") {
  temp_dir dir;
  // About one second of work: 1000 records at 1000 records/s.
  auto spec = dir.write("paced.json", R"({
    "name": "paced",
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"count": 1000, "rate": 1000}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink", "partitioning": "forward"}]})");
  auto weir = std::string{std::getenv("WEIR_BIN")};
  // script(1) runs the command on a pseudo terminal.
  auto r = run_process({"/usr/bin/script", "-qec", weir + " run " + spec,
                        "/dev/null"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\r\x1b[K[RUNNING] subtasks: ") != std::string::npos);
  CHECK(r.out.find(" finished of 1 | records in ") != std::string::npos);
  CHECK(r.out.find("has finished.") != std::string::npos);
}

TEST_CASE("a file sink fed by fast parallel producers keeps every record") {
  temp_dir dir;
  auto spec = dir.write("fan_in.json", R"({
    "name": "fan_in", "parallelism": 4, "params": {"output": ""},
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 20}},
      {"id": "out", "operator": "text_file", "params": {"path": "${output}"},
       "parallelism": 1}],
    "edges": [{"from": "numbers", "to": "out", "partitioning": "rebalance"}]})");
  std::vector<std::string> expected;
  for (int i = 1; i <= 20; ++i)
    expected.push_back(std::to_string(i));
  std::sort(expected.begin(), expected.end());
  // Producers that end before their consumer starts must not cost records.
  for (int round = 0; round < 10; ++round) {
    auto out = dir.file("out" + std::to_string(round) + ".txt");
    auto r = run_weir({"run", spec, "--output", out});
    REQUIRE(r.exit_code == 0);
    CHECK(sorted_lines(read_file(out)) == expected);
  }
}

TEST_CASE("Ctrl-C cancels a streaming job and leaves no partial output") {
  temp_dir dir;
  auto spec = dir.write("stream.json", R"({
    "name": "stream", "params": {"output": ""},
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 20000, "keys": 5}},
      {"id": "counts", "operator": "count"},
      {"id": "out", "operator": "text_file", "params": {"path": "${output}"}}],
    "edges": [{"from": "events", "to": "counts", "partitioning": "hash"},
              {"from": "counts", "to": "out", "partitioning": "forward"}]})");
  auto out = dir.file("counts.txt");
  running_process weir{{std::getenv("WEIR_BIN"), "run", spec, "--output", out}};
  REQUIRE(weir.wait_for_stderr("Job has been submitted with JobID ",
                               std::chrono::seconds(30)));
  weir.signal(SIGINT);
  auto r = weir.finish(std::chrono::seconds(30));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("weir run: interrupted, canceling job ") != std::string::npos);
  CHECK(r.err.find("ended CANCELED: job was canceled") != std::string::npos);
  CHECK_FALSE(exists(out));
  CHECK_FALSE(exists(out + ".inprogress"));
}

TEST_CASE("parallelism 32768 with a hash edge fails at once for want of "
          "network buffers, memory bounded") {
  temp_dir dir;
  auto spec = dir.write("huge.json", keyed_sum_spec("huge", 32768, 10, 7));
  auto started = std::chrono::steady_clock::now();
  auto r = run_weir({"run", spec}, std::chrono::minutes(3));
  auto took = std::chrono::steady_clock::now() - started;
  MESSAGE("took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
          << " ms, peak RSS " << r.max_rss_kb << " KiB");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ended FAILED: insufficient network buffers: needs ")
        != std::string::npos);
  CHECK(r.err.find("taskmanager.memory.network.max") != std::string::npos);
  CHECK(r.max_rss_kb < 1024 * 1024);
}

TEST_CASE("a collect result past collect.max-bytes fails the job") {
  // 200000 records of 16 counted bytes: 3.2 MB.
  auto big = run_weir({"run", "examples/collect.json", "--to", "400000",
                       "-Dcollect.max-bytes=1m"});
  CHECK(big.exit_code == 1);
  CHECK(big.err.find("ended FAILED: collect sink: result exceeds 1048576 bytes "
                     "(collect.max-bytes)")
        != std::string::npos);
}

TEST_CASE("a single 32 MB line into a collect sink fails the job, memory "
          "bounded") {
  temp_dir dir;
  auto input = dir.write("line.txt", std::string(32 << 20, 'x') + "\n");
  auto spec = dir.write("line.json", R"({
    "name": "line",
    "vertices": [
      {"id": "lines", "operator": "text_file", "params": {"path": ")" + input + R"(",
        "max_line_length": 67108864}},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "lines", "to": "out", "partitioning": "rebalance"}]})");
  auto r = run_weir({"run", spec, "-Dcollect.max-bytes=8m"}, std::chrono::minutes(1));
  MESSAGE("peak RSS " << r.max_rss_kb << " KiB");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("collect sink: result exceeds 8388608 bytes "
                   "(collect.max-bytes)")
        != std::string::npos);
  CHECK(r.max_rss_kb < 512 * 1024);
}
