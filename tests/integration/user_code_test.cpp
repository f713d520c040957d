// User code: operators from shared libraries shipped with --libjars, on the
// embedded cluster and on session clusters (the blob store, -b, the
// optimized path, recovery after a master crash), and clear errors for
// libraries that cannot be used.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

/// examples/data/sample.txt in capitals, line by line.
std::string shouted_sample() {
  auto text = read_file("examples/data/sample.txt");
  for (auto& c : text)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

/// Files named `name` anywhere under `dir`.
std::vector<std::string> find_files(const std::string& dir,
                                    const std::string& name) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto i = fs::recursive_directory_iterator(dir, ec);
       !ec && i != fs::recursive_directory_iterator(); i.increment(ec))
    if (i->path().filename() == name)
      found.push_back(i->path().string());
  return found;
}

/// generator (`count` records, paced) → the example library's top_n (3) →
/// collect: the result is the three largest numbers.
std::string top_spec(const temp_dir& dir, int count, int rate) {
  return dir.write("top.json", fmt::format(R"({{
    "name": "top",
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": {}, "keys": 7}}}},
      {{"id": "best", "operator": "top_n", "params": {{"n": "3"}}}},
      {{"id": "out", "operator": "collect"}}],
    "edges": [{{"from": "events", "to": "best", "partitioning": "rebalance"}},
              {{"from": "best", "to": "out", "partitioning": "forward"}}]}})",
                                           count, rate));
}

std::string top_result(int count) {
  std::string out;
  for (int i = count - 1; i >= count - 3; --i)
    out += fmt::format("key-{}\t{}\n", i % 7, i);
  return out;
}

} // namespace

TEST_CASE("a JSON job uses operators of a --libjars library (embedded)") {
  auto r = run_weir({"run", "examples/user_code/upper.json", "--libjars",
                     example_ops()});
  CHECK(r.exit_code == 0);
  CHECK(r.out == shouted_sample());
}

TEST_CASE("libraries that cannot be used are refused with the file and "
          "symbol") {
  temp_dir dir;
  auto spec = "examples/user_code/upper.json";
  auto missing = run_weir({"run", spec, "--libjars", dir.file("nope.so")});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == fmt::format("weir run: --libjars: '{}' is not a readable "
                                   "file\n",
                                   dir.file("nope.so")));
  auto garbage = dir.write("garbage.so", "not an ELF file");
  auto bad_elf = run_weir({"run", spec, "--libjars", garbage});
  CHECK(bad_elf.exit_code == 2);
  CHECK(bad_elf.err.find(fmt::format("weir run: --libjars: cannot load library "
                                     "'{}': ",
                                     garbage))
        == 0);
  auto not_weir = run_weir({"run", spec, "--libjars", test_plugin("not_weir")});
  CHECK(not_weir.exit_code == 2);
  CHECK(not_weir.err
        == fmt::format("weir run: --libjars: library '{}' has no symbol "
                       "'weir_plugin_api_version': it is not a weir library (it "
                       "must use WEIR_PLUGIN)\n",
                       test_plugin("not_weir")));
  auto old = run_weir({"run", spec, "--libjars", test_plugin("bad_version")});
  CHECK(old.exit_code == 2);
  CHECK(old.err == fmt::format("weir run: --libjars: library '{}' was built "
                               "against weir API version 0, this weir has "
                               "version 7 (weir_plugin_api_version)\n",
                               test_plugin("bad_version")));
  // dlerror's mangled name, demangled.
  auto undefined = run_weir({"run", spec, "--libjars", test_plugin("undefined")});
  CHECK(undefined.exit_code == 2);
  CHECK(undefined.err
        == fmt::format("weir run: --libjars: cannot load library '{}': {}: "
                       "undefined symbol: weir::test_only::missing_function(int)\n",
                       test_plugin("undefined"), test_plugin("undefined")));
  auto clash = run_weir({"run", spec, "--libjars",
                         example_ops() + "," + test_plugin("clash")});
  CHECK(clash.exit_code == 2);
  CHECK(clash.err == fmt::format("weir run: --libjars: library '{}' registers "
                                 "operator 'upper', which library '{}' "
                                 "registers too\n",
                                 test_plugin("clash"), example_ops()));
  // Without the library the operator is unknown.
  auto unknown = run_weir({"run", spec});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown operator 'upper'") != std::string::npos);
}

TEST_CASE("a session's workers use a library where it is, or fetch it with "
          "-b") {
  temp_dir roots;
  one_worker_cluster c{{}, {"-Dtaskmanager.state.local.root-dirs=" + roots.path()}};
  // The worker sees the library at the client's path: nothing is fetched
  // (it copies it into its cache, where libraries are named by content).
  auto direct = run_weir({"run", "-m", c.rest,
                          "examples/user_code/upper.json", "--libjars",
                          example_ops()});
  CHECK(direct.exit_code == 0);
  CHECK(direct.out == shouted_sample());
  REQUIRE(c.worker->wait_for_stderr("using " + example_ops()
                                      + " where the client had it", 30s));
  CHECK(c.worker->stderr_so_far().find("fetched") == std::string::npos);
  auto cached = find_files(roots.path(), "libweir_example_ops.so");
  REQUIRE(cached.size() == 1);
  CHECK(read_file(cached[0]) == read_file(example_ops()));
  // -b: shipped through the blob store (the cache is cleared first).
  fs::remove_all(fs::path{cached[0]}.parent_path());
  auto shipped = run_weir({"run", "-m", c.rest, "-b",
                           "examples/user_code/upper.json", "--libjars",
                           example_ops()});
  CHECK(shipped.exit_code == 0);
  CHECK(shipped.out == shouted_sample());
  REQUIRE(c.worker->wait_for_stderr("fetched libweir_example_ops.so (", 30s));
  cached = find_files(roots.path(), "libweir_example_ops.so");
  REQUIRE(cached.size() == 1);
  CHECK(read_file(cached[0]) == read_file(example_ops()));
  // An attached file is found by name (a text_file source cannot use it,
  // but its blob travels and is cached the same way).
  auto input = c.dir.write("words.txt", "a b\n");
  auto with_file = run_weir({"run", "-m", c.rest, "-b",
                             "examples/user_code/upper.json", "--libjars",
                             example_ops(), "--file", input});
  CHECK(with_file.exit_code == 0);
  CHECK(find_files(roots.path(), "words.txt").size() == 1);
}

TEST_CASE("a job's libraries are recovered with it after a master crash") {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  restartable_jobmanager master{dir.file("state")};
  auto& address = master.address;
  auto& rest = master.rest;
  auto first = std::make_unique<running_process>(std::vector<std::string>{
    weir, "taskmanager", "-m", address, "--id", "tm-1",
    "-Dtaskmanager.state.local.root-dirs=" + dir.file("first")});
  REQUIRE(master->wait_for_stderr("TaskExecutor tm-1 registered", 30s));
  auto spec = top_spec(dir, 4000, 1000); // about 4 s
  auto submitted = run_weir({"run", "-m", rest, "-d", "-b", spec,
                             "--libjars", example_ops()});
  REQUIRE(submitted.exit_code == 0);
  auto id = lines_of(submitted.out).back();
  REQUIRE(master->wait_for_stderr("(top) switched from CREATED to RUNNING", 30s));
  // The master and its only worker die; a new worker has no cache.
  master.kill();
  first->signal(SIGKILL);
  first->finish(30s);
  master.restart();
  REQUIRE(master->wait_for_stderr("job " + id + " (top) recovered", 30s));
  running_process second{{weir, "taskmanager", "-m", address, "--id", "tm-2",
                          "-Dtaskmanager.state.local.root-dirs="
                            + dir.file("second")}};
  auto waited = run_weir({"wait", "-m", rest, id}, 60s);
  CHECK(waited.exit_code == 0);
  CHECK(waited.out == top_result(4000));
  CHECK(find_files(dir.file("second"), "libweir_example_ops.so").size() == 1);
}

TEST_CASE("-C/--classpath loads libraries from each node's own path") {
  auto dir = std::filesystem::path{example_ops()}.parent_path().string();
  auto r = run_weir({"run", "examples/user_code/upper.json", "-C", dir});
  CHECK(r.exit_code == 0);
  CHECK(r.out == shouted_sample());
  auto missing = run_weir({"run", "examples/user_code/upper.json", "--libjars",
                           example_ops(), "-C", "/nonexistent/libs"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("-C/--classpath '/nonexistent/libs' does not exist "
                         "on TaskExecutor taskexecutor-0")
        != std::string::npos);
}

// --- declared parameters, the operator context, keyed state -----------------

namespace {

/// text_file `input` → `op` with `params` (a JSON object) → collect.
std::string one_operator_spec(const temp_dir& dir, const std::string& input,
                              const std::string& op,
                              const std::string& params) {
  return dir.write(op + ".json", fmt::format(R"({{
    "name": "{}",
    "vertices": [
      {{"id": "lines", "operator": "text_file", "params": {{"path": "{}"}}}},
      {{"id": "op", "operator": "{}", "params": {}}},
      {{"id": "out", "operator": "collect"}}],
    "edges": [{{"from": "lines", "to": "op", "partitioning": "forward"}},
              {{"from": "op", "to": "out", "partitioning": "forward"}}]}})",
                                             op, input, op, params));
}

/// The lines of examples/data/sample.txt of at least `min` bytes.
std::string sample_lines_longer_than(size_t min) {
  std::string out;
  for (auto& line : lines_of(read_file("examples/data/sample.txt")))
    if (line.size() >= min)
      out += line + "\n";
  return out;
}

/// The snippets of `text`: "// [snippet: NAME]" up to "// [end snippet]"
/// in code, or the fenced block after "<!-- snippet: NAME -->" in
/// Markdown, by name.
std::map<std::string, std::string> snippets(const std::string& text,
                                            bool markdown) {
  std::map<std::string, std::string> out;
  std::string name;
  bool in_block = false;
  for (auto& line : lines_of(text)) {
    auto trimmed = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (markdown) {
      if (trimmed.rfind("<!-- snippet: ", 0) == 0)
        name = trimmed.substr(14, trimmed.size() - 14 - 4);
      else if (!name.empty() && trimmed.rfind("```", 0) == 0) {
        if (in_block)
          name.clear();
        in_block = !in_block;
      } else if (in_block)
        out[name] += line + "\n";
    } else if (trimmed.rfind("// [snippet: ", 0) == 0) {
      name = trimmed.substr(13, trimmed.size() - 14);
      out[name];
    } else if (trimmed == "// [end snippet]") {
      name.clear();
    } else if (!name.empty()) {
      out[name] += line + "\n";
    }
  }
  return out;
}

} // namespace

TEST_CASE("a user operator gets its declared parameters typed") {
  temp_dir dir;
  auto spec = one_operator_spec(dir, "examples/data/sample.txt",
                                "longer_than", R"({"min": 40})");
  auto r = run_weir({"run", spec, "--libjars", example_ops()});
  CHECK(r.exit_code == 0);
  CHECK(r.out == sample_lines_longer_than(40));
  // Defaults, and every type (test plugin `where`).
  auto input = dir.write("in.txt", "a\nb\n");
  auto defaults = run_weir({"run", one_operator_spec(dir, input, "where", "{}"),
                            "--libjars", test_plugin("attempts")});
  CHECK(defaults.exit_code == 0);
  CHECK(defaults.out == "0/1 attempt 0 3.000000 false: a\n"
                        "0/1 attempt 0 3.000000 false: b\n");
  auto given = run_weir(
    {"run",
     one_operator_spec(dir, input, "where",
                       R"({"prefix": "at ", "scale": 0.25, "flag": true})"),
     "--libjars", test_plugin("attempts")});
  CHECK(given.exit_code == 0);
  CHECK(given.out == "at 0/1 attempt 0 0.500000 true: a\n"
                     "at 0/1 attempt 0 0.500000 true: b\n");
}

TEST_CASE("weir info --libjars lists a library's operators with their "
          "declared parameters, and its drivers") {
  auto r = run_weir({"info", "--libjars", example_ops()});
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind(fmt::format("Library {}\n", example_ops()), 0) == 0);
  CHECK(r.out.find("Operator longer_than (transform)\n"
                   "  min (int64, required): shortest length kept\n")
        != std::string::npos);
  CHECK(r.out.find("Operator known_words (transform)\n"
                   "  list (string, required): attached file (--file), one "
                   "word a line\n"
                   "  invert (bool, default false): keep the records not in "
                   "the list\n")
        != std::string::npos);
  CHECK(r.out.find("Operator running_count (transform)\n"
                   "  threshold (int64, default 1): smallest count emitted\n")
        != std::string::npos);
  CHECK(r.out.find("Operator upper (transform)\n  parameters: none "
                   "declared\n")
        != std::string::npos);
  // Built-in operators are not the library's.
  CHECK(r.out.find("Operator sequence") == std::string::npos);
  auto drivers = run_weir({"info", "--libjars", example_driver()});
  CHECK(drivers.exit_code == 0);
  CHECK(drivers.out.find("Driver top_words (weir run -D -c top_words "
                         "LIBRARY)\n")
        != std::string::npos);
  auto nothing = run_weir({"info"});
  CHECK(nothing.exit_code == 2);
  CHECK(nothing.err == "weir info: missing job spec, or --libjars LIB to "
                       "list a library's operators (see weir info --help)\n");
}

TEST_CASE("bad parameters of user operators are refused before anything "
          "runs, as the built-ins' are") {
  temp_dir dir;
  auto check = [&](const std::string& op, const std::string& params,
                   const std::string& problem) {
    auto spec = one_operator_spec(dir, "examples/data/sample.txt", op, params);
    auto line = fmt::format("{}: vertices[1] ('op'): {}\n", spec, problem);
    for (std::string action : {"info", "run"}) {
      auto r = run_weir({action, spec, "--libjars", example_ops()});
      INFO(action << " " << op << " " << params);
      CHECK(r.exit_code == 2);
      CHECK(r.err == line);
      CHECK(r.out == "");
    }
  };
  check("longer_than", R"({"min": 3, "max": 9})",
        "parameter 'max': unknown parameter of operator 'longer_than' "
        "(known: min)");
  check("longer_than", "{}", "parameter 'min': missing");
  check("longer_than", R"({"min": "three"})",
        "parameter 'min': 'three' is not an integer");
  check("known_words", R"({"list": "w.txt", "invert": "yes"})",
        "parameter 'invert': 'yes' is neither true nor false");
  check("upper", R"({"mode": "loud"})",
        "parameter 'mode': unknown parameter of operator 'upper' (known: "
        "none)");
  auto number = run_weir(
    {"info", one_operator_spec(dir, "examples/data/sample.txt", "where",
                               R"({"scale": "1.5x"})"),
     "--libjars", test_plugin("attempts")});
  CHECK(number.exit_code == 2);
  CHECK(number.err.find(": vertices[1] ('op'): parameter 'scale': '1.5x' is "
                        "not a number\n")
        != std::string::npos);
  // Good parameters: the plan.
  auto ok = run_weir({"info",
                      one_operator_spec(dir, "examples/data/sample.txt",
                                        "longer_than", R"({"min": 3})"),
                      "--libjars", example_ops()});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("\n  op     transform  longer_than  parallelism 1  "
                    "min=3\n")
        != std::string::npos);
}

TEST_CASE("a user operator finds the job's attached files by name through "
          "its context") {
  temp_dir dir;
  auto input = dir.write("fruit.txt", "apple\nkiwi\nplum\nfig\n");
  auto list = dir.write("list.txt", "kiwi\nfig\n");
  auto known = run_weir({"run",
                         one_operator_spec(dir, input, "known_words",
                                           R"({"list": "list.txt"})"),
                         "--libjars", example_ops(), "--file", list});
  CHECK(known.exit_code == 0);
  CHECK(known.out == "kiwi\nfig\n");
  auto others = run_weir(
    {"run",
     one_operator_spec(dir, input, "known_words",
                       R"({"list": "list.txt", "invert": true})"),
     "--libjars", example_ops(), "--file", list});
  CHECK(others.exit_code == 0);
  CHECK(others.out == "apple\nplum\n");
  // Without the file, the operator fails naming it (no restarts).
  auto missing = run_weir({"run",
                           one_operator_spec(dir, input, "known_words",
                                             R"({"list": "list.txt"})"),
                           "--libjars", example_ops(),
                           "-Drestart-strategy.type=none"});
  CHECK(missing.exit_code == 1);
  auto err = lines_of(missing.err);
  REQUIRE(err.size() == 3);
  CHECK(err[1].substr(err[1].find(" ended "))
        == " ended FAILED: vertex 'op' (operator 'known_words', subtask 1/1): file "
           "'list.txt' is not attached to the job (none is; attach files "
           "with --file)");
}

TEST_CASE("keyed state in user code is restored after a failover, and the "
          "attempt number tells the attempts apart") {
  // generator (7000 records at 2000/s per subtask, 7 keys: 1000 each) →
  // fails on attempt 0 after 1500 records per subtask → hash → the
  // example's running_count (threshold 1000) → collect.
  one_worker_cluster c;
  auto spec = c.dir.write("running.json", R"({
    "name": "running", "parallelism": 2,
    "config": {"execution.checkpointing.interval": "200 ms",
               "restart-strategy.type": "fixed-delay",
               "restart-strategy.fixed-delay.attempts": 3,
               "restart-strategy.fixed-delay.delay": "50 ms"},
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"count": 7000, "rate": 2000, "keys": 7}},
      {"id": "flaky", "operator": "fail_first_attempt", "params": {"after": 1500}},
      {"id": "counts", "operator": "running_count", "params": {"threshold": 1000}},
      {"id": "out", "operator": "collect", "parallelism": 1}],
    "edges": [
      {"from": "events", "to": "flaky", "partitioning": "forward"},
      {"from": "flaky", "to": "counts", "partitioning": "hash"},
      {"from": "counts", "to": "out", "partitioning": "rebalance"}]})");
  auto r = run_weir({"run", "-m", c.rest, spec, "--libjars",
                     example_ops() + "," + test_plugin("attempts")},
                    120s);
  CHECK(r.exit_code == 0);
  std::string expected;
  for (int k = 0; k < 7; ++k)
    expected += fmt::format("key-{}\t1000\n", k);
  CHECK(sorted_lines(r.out) == lines_of(expected));
  REQUIRE(c.master->wait_for_stderr("(running) FINISHED", 30s));
  auto& log = c.master->stderr_so_far();
  CHECK(log.find("injected failure on attempt 0") != std::string::npos);
  CHECK(log.find("(running) resumes from checkpoint ") != std::string::npos);
}

TEST_CASE("docs/user-operators.md quotes examples/user_code/ops.cpp "
          "verbatim") {
  auto code = snippets(read_file("examples/user_code/ops.cpp"), false);
  auto doc = snippets(read_file("docs/user-operators.md"), true);
  CHECK(doc.size() >= 4);
  for (auto& [name, text] : doc) {
    INFO("snippet " << name);
    REQUIRE(code.count(name) == 1);
    CHECK(text == code[name]);
  }
}
