// User code: operators from shared libraries shipped with --libjars, on the
// embedded cluster and on session clusters (the blob store, -b, the
// optimized path, recovery after a master crash), and clear errors for
// libraries that cannot be used.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

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
                               "version 3 (weir_plugin_api_version)\n",
                               test_plugin("bad_version")));
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
  auto direct = run_weir({"run", "-m", c.address,
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
  auto shipped = run_weir({"run", "-m", c.address, "-b",
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
  auto with_file = run_weir({"run", "-m", c.address, "-b",
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
  auto first = std::make_unique<running_process>(std::vector<std::string>{
    weir, "taskmanager", "-m", address, "--id", "tm-1",
    "-Dtaskmanager.state.local.root-dirs=" + dir.file("first")});
  REQUIRE(master->wait_for_stderr("TaskExecutor tm-1 registered", 30s));
  auto spec = top_spec(dir, 4000, 1000); // about 4 s
  auto submitted = run_weir({"run", "-m", address, "-d", "-b", spec,
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
  auto waited = run_weir({"wait", "-m", address, id}, 60s);
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
