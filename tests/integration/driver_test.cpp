// Driver mode: a user's driver program runs as a job inside a cluster that
// the CLI creates for it (and that is gone when it ends) or in a session;
// the application rules (driver failure, daemon jobs) and the seed's
// option table.
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

std::string test_drivers() {
  return test_plugin("drivers");
}

/// Points TMPDIR (where application clusters live) at a test directory for
/// the lifetime of the object.
struct scoped_tmpdir : scoped_env {
  explicit scoped_tmpdir(const std::string& dir) : scoped_env("TMPDIR", dir) {}
};

/// The n most frequent words of examples/data/sample.txt as the built-in
/// word count computes them, "word<TAB>count" lines, most frequent first.
std::string top_words(int n) {
  auto r = run_weir({"run", "examples/wordcount.json"});
  REQUIRE(r.exit_code == 0);
  std::vector<std::pair<std::string, long>> counts;
  for (auto& line : lines_of(r.out)) {
    auto tab = line.find('\t');
    counts.emplace_back(line.substr(0, tab), std::stol(line.substr(tab + 1)));
  }
  std::sort(counts.begin(), counts.end(), [](auto& a, auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::string out;
  for (int i = 0; i < n && i < static_cast<int>(counts.size()); ++i)
    out += fmt::format("{}\t{}\n", counts[i].first, counts[i].second);
  return out;
}

} // namespace

TEST_CASE("a driver runs two dependent jobs in a cluster created for it") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  auto r = run_weir({"run", "-D", "-c", "top_words", "--libjars",
                     example_ops(), example_driver(),
                     "examples/data/sample.txt", "5"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == top_words(5));
  CHECK(r.err.find("Application cluster listening on 127.0.0.1:")
        != std::string::npos);
  // Every process of the application is gone, and so is its directory.
  CHECK(processes_mentioning(tmp.path()).empty());
  CHECK(fs::is_empty(tmp.path()));
}

TEST_CASE("a failing driver takes its jobs down; the exit code is 1") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  auto r = run_weir({"run", "-D", "-c", "fails_after_submitting",
                     test_drivers()});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("driver 'fails_after_submitting' failed: boom")
        != std::string::npos);
  CHECK(processes_mentioning(tmp.path()).empty());
  // The logs stay for a failed application; they say the long job was
  // cancelled because its application ended.
  std::string log;
  for (auto& e : fs::recursive_directory_iterator(tmp.path()))
    if (e.path().filename() == "jobmanager.log")
      log = read_file(e.path().string());
  CHECK(std::regex_search(log, std::regex{R"(job \w+ \(long\) is cancelled: its application is ending)"}));
  CHECK(std::regex_search(log, std::regex{R"(job \w+ \(long\) CANCELED)"}));
  CHECK(log.find("the application failed; shutting down") != std::string::npos);
  // A driver that throws is not run again: its exception ends it at once.
  CHECK(log.find("restarts in") == std::string::npos);
  CHECK(r.err.find("restart 1") == std::string::npos);
}

TEST_CASE("a driver's return value is weir run's exit status") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  auto r = run_weir({"run", "-D", "-c", "returns_status", test_drivers(),
                     "7"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 7);
  CHECK(r.out == "0\t500500\n"); // what it printed before it returned
  CHECK(std::regex_search(r.err, std::regex{R"(Job with JobID \w+ ended FAILED: driver -> output \(1/1\): driver 'returns_status' returned 7\n)"}));
  CHECK(processes_mentioning(tmp.path()).empty());
  // Not an exit status: weir's own "the application failed".
  auto odd = run_weir({"run", "-D", "-c", "returns_status", test_drivers(),
                       "300"});
  CHECK(odd.exit_code == 1);
  CHECK(odd.err.find("weir: the driver returned 300, which is not an exit "
                     "status (1..255): exiting with 1\n")
        != std::string::npos);
}

TEST_CASE("a driver's return value in a session: attached, and weir wait for "
          "a detached one") {
  one_worker_cluster c;
  auto attached = run_weir({"run", "-D", "-m", c.rest, "-c",
                            "returns_status", test_drivers(), "9"});
  CHECK(attached.exit_code == 9);
  auto detached = run_weir({"run", "-D", "-d", "-m", c.rest, "-c",
                            "returns_status", test_drivers(), "5"});
  REQUIRE(detached.exit_code == 0);
  auto app = lines_of(detached.out).back();
  auto wait = run_weir({"wait", "-m", c.rest, app});
  CHECK(wait.exit_code == 5);
  CHECK(wait.err.find("driver 'returns_status' returned 5\n")
        != std::string::npos);
  auto status = run_weir({"status", "-m", c.rest, app});
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("Cause: driver -> output (1/1): driver "
                        "'returns_status' returned 5\n")
        != std::string::npos);
}

TEST_CASE("weir's flags after the driver library go to the driver, with a "
          "warning") {
  one_worker_cluster c;
  auto r = run_weir({"run", "-D", "-m", c.rest, "-c", "echo_args",
                     test_drivers(), "--libjars", "x.so", "-p", "2",
                     "-Dkey=v", "--detached", "--help", "plain"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "arg: --libjars\narg: x.so\narg: -p\narg: 2\narg: -Dkey=v\n"
                 "arg: --detached\narg: --help\narg: plain\n");
  auto warnings = std::string{};
  for (auto& line : lines_of(r.err))
    if (line.find("warning") != std::string::npos)
      warnings += line + "\n";
  auto warning = [](const std::string& flag) {
    return "weir run: warning: '" + flag
           + "' after the driver library is passed to the driver as an "
             "argument; put weir's options before DRIVER.so\n";
  };
  CHECK(warnings
        == warning("--libjars") + warning("-p") + warning("-Dkey=v")
             + warning("--detached"));
}

TEST_CASE("an endless daemon job does not keep an application's cluster "
          "alive") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  auto r = run_weir({"run", "-D", "-c", "daemon_and_work", test_drivers()});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0\t500500\n");
  CHECK(processes_mentioning(tmp.path()).empty());
  CHECK(fs::is_empty(tmp.path()));
}

TEST_CASE("a daemon job does not keep an application alive (session)") {
  one_worker_cluster c;
  // Slots for the driver, the daemon job and the bounded job.
  running_process more{{c.weir, "taskmanager", "-m", c.address, "--slots",
                        "2", "--id", "more"}};
  REQUIRE(c.master->wait_for_stderr("TaskExecutor more registered", 30s));
  auto r = run_weir({"run", "-D", "-m", c.rest, "-c", "daemon_and_work",
                     test_drivers()});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0\t500500\n");
  REQUIRE(c.master->wait_for_stderr(" ended FINISHED", 30s));
  auto list = run_weir({"list", "-m", c.rest, "-a"});
  CHECK(list.out.find(" : endless daemon (CANCELED) ") != std::string::npos);
  CHECK(list.out.find(" : sum (FINISHED) ") != std::string::npos);
  CHECK(list.out.find(" : driver daemon_and_work (FINISHED) ")
        != std::string::npos);
}

TEST_CASE("a detached application: the driver's slot profile, workers on "
          "demand, idle ones stopped, status while it lives") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  auto go = tmp.file("go");
  auto r = run_weir({"run", "-D", "-d", "-Dhm", "64", "-Dc", "1", "-Ddm",
                     "16", "-Dnm", "8",
                     "-Dresourcemanager.taskmanager-timeout=200 ms", "-c",
                     "wait_for_file", test_drivers(), go});
  REQUIRE(r.exit_code == 0);
  auto app = lines_of(r.out).back();
  std::smatch m;
  REQUIRE(std::regex_search(r.err, m, std::regex{R"(listening on (\S+) \(logs in (\S+)\))"}));
  auto logs = m[2].str();
  REQUIRE(std::regex_search(r.err, m, std::regex{R"(REST API at (\S+))"}));
  auto address = m[1].str();
  auto log = [&] { return read_file(logs + "/jobmanager.log"); };
  auto wait_for_log = [&](const std::string& text) {
    return eventually([&] { return log().find(text) != std::string::npos; });
  };
  // The driver's worker got the driver's profile; the sum job's worker came
  // later, on demand, and went once idle.
  CHECK(wait_for_log("started worker worker-1 (pid "));
  CHECK(log().find("--id worker-1 --slots 1 --cpu-cores 1 --memory 64 "
                   "--direct-memory 16 --native-memory 8")
        != std::string::npos);
  CHECK(wait_for_log("starting worker worker-2 with 1 slot(s)"));
  CHECK(wait_for_log("stopping worker worker-2: idle for 200 ms"));
  auto status = run_weir({"status", "-m", address, app});
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("Slot profile: cpu=1 heap=64MB direct=16MB native=8MB")
        != std::string::npos);
  CHECK(status.out.find("worker-1") != std::string::npos);
  auto list = run_weir({"list", "-m", address});
  CHECK(list.out.find(" : driver wait_for_file (RUNNING) ")
        != std::string::npos);
  // Let the driver end: the cluster goes with its application; a detached
  // application leaves its logs.
  std::ofstream{go}.put('\n');
  CHECK(wait_for_log("the application finished; shutting down"));
  CHECK(eventually([&] { return processes_mentioning(tmp.path()).empty(); }));
  CHECK(log().find("application " + app + " ended FINISHED")
        != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path{logs}.parent_path() / "state"));
}

TEST_CASE("a detached application's driver output is in its logs/stdout.txt") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  auto r = run_weir({"run", "-D", "-d", "-c", "top_words", "--libjars",
                     std::getenv("WEIR_EXAMPLE_OPS"),
                     std::getenv("WEIR_EXAMPLE_DRIVER"),
                     source_path("examples/data/sample.txt"), "3"});
  REQUIRE(r.exit_code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.err, m,
                            std::regex{R"(listening on (\S+) \(logs in (\S+)\))"}));
  auto logs = m[2].str();
  CHECK(r.err.find("the driver's output goes to " + logs + "/stdout.txt")
        != std::string::npos);
  // The cluster ends with the application; what the driver printed stays.
  CHECK(eventually([&] { return processes_mentioning(tmp.path()).empty(); }));
  CHECK(read_file(logs + "/stdout.txt") == "the\t8\nhe\t5\nand\t4\n");
}

TEST_CASE("-s and -n apply to the jobs a driver submits") {
  one_worker_cluster c;
  running_process more{{c.weir, "taskmanager", "-m", c.address, "--slots",
                        "2", "--id", "more"}};
  REQUIRE(c.master->wait_for_stderr("TaskExecutor more registered", 30s));
  auto spec = [&](const std::string& name, int count, int rate,
                  const std::string& sink) {
    return c.dir.write(name + ".json", fmt::format(R"({{
      "name": "{}", "config": {{"execution.checkpointing.interval": "100 ms"}},
      "vertices": [
        {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": {}, "keys": 3}}}},
        {{"id": "counts", "operator": "count"}},
        {{"id": "{}", "operator": "{}"}}],
      "edges": [{{"from": "events", "to": "counts", "partitioning": "hash"}},
                {{"from": "counts", "to": "{}", "partitioning": "forward"}}]}})",
                                                   name, count, rate, sink,
                                                   sink, sink));
  };
  auto submitted = run_weir({"run", "-m", c.rest, "-d",
                             spec("endless", -1, 1000, "discard")});
  REQUIRE(submitted.exit_code == 0);
  auto id = lines_of(submitted.out).back();
  REQUIRE(c.master->wait_for_stderr("(endless) completed checkpoint 2 ", 30s));
  auto sp = run_weir({"stop", "-m", c.rest, id, "--savepointPath",
                      c.dir.file("savepoints")});
  REQUIRE(sp.exit_code == 0);
  auto path = sp.out.substr(sp.out.find("Path: ") + 6);
  path = path.substr(0, path.find('\n'));
  // The bounded job (3000 records) has a collect sink where the savepoint
  // has a discard one: -n skips nothing here but is passed on; the counts
  // go on from the savepoint and end exact.
  auto r = run_weir({"run", "-D", "-m", c.rest, "-s", path, "-n", "-c",
                     "run_spec", test_drivers(),
                     spec("bounded", 3000, 0, "collect")});
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(r.out)
        == std::vector<std::string>{"key-0\t1000", "key-1\t1000",
                                    "key-2\t1000"});
  CHECK(c.master->wait_for_stderr("(bounded) starts from savepoint " + path,
                                  30s));
}

TEST_CASE("an attached client streams what a driver prints while it runs") {
  one_worker_cluster c;
  temp_dir tmp;
  auto go = tmp.file("go");
  running_process run{{c.weir, "run", "-D", "-m", c.rest, "-c",
                       "wait_for_file", test_drivers(), go}};
  // Printed after its first job, while it still waits for `go`.
  REQUIRE(run.wait_for_stdout("0\t500500\n", 30s));
  std::ofstream{go}.put('\n');
  auto r = run.finish(30s);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0\t500500\ndone\n"); // each line once
}

TEST_CASE("driver options are read as the seed's table writes them") {
  auto lib = test_drivers();
  auto ambiguous = run_weir({"run", "-D", "-Dhm=512", "-c", "x", lib});
  CHECK(ambiguous.exit_code == 2);
  CHECK(ambiguous.err
        == "weir run: '-Dhm=512' is ambiguous: it reads as the configuration "
           "property 'hm=512'; for the driver's resources write -Dhm 512 or "
           "--driverheapmemory 512\n");
  auto neither = run_weir({"run", "-D", "-Dxyz", "-c", "x", lib});
  CHECK(neither.exit_code == 2);
  CHECK(neither.err == "weir run: '-Dxyz' is neither -D (driver mode), "
                       "-Dhm/-Ddm/-Dc/-Dnm VALUE (the driver's resources) nor "
                       "-Dkey=value (a configuration property)\n");
  auto no_value = run_weir({"run", "-D", "-Dc", "-c", "x", lib});
  CHECK(no_value.exit_code == 2);
  CHECK(no_value.err == "weir run: -Dc needs a value (-Dc VALUE, the same as "
                        "--drivercpus VALUE)\n");
  auto mod = run_weir({"run", "-D", "--mod", "job.py"});
  CHECK(mod.exit_code == 2);
  CHECK(mod.err.find("weir run: --mod runs a Python module as the driver; "
                     "weir is a C++ runtime")
        == 0);
  auto yarn = run_weir({"run", "-D", "-yid", "application_1", "-c", "x", lib});
  CHECK(yarn.exit_code == 2);
  CHECK(yarn.err.find("weir run: -yid is a YARN option") == 0);
  auto no_class = run_weir({"run", "-D", lib});
  CHECK(no_class.exit_code == 2);
  CHECK(no_class.err.find("weir run: driver mode needs -c/--class NAME") == 0);
  auto unknown = run_weir({"run", "-D", "-c", "nope", lib});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err
        == fmt::format("weir run: -c/--class: no driver 'nope' in '{}' or the "
                       "--libjars libraries (known: daemon_and_work, "
                       "echo_args, fails_after_submitting, returns_status, "
                       "run_spec, wait_for_file, waits_on_endless)\n",
                       lib));
  auto no_library = run_weir({"run", "-D", "-c", "x"});
  CHECK(no_library.exit_code == 2);
  CHECK(no_library.err.find("weir run: driver mode needs the driver's library")
        == 0);
}

TEST_CASE("cancelling a driver that waits for its job cancels the job "
          "(session)") {
  one_worker_cluster c; // two slots: the driver and its endless job
  auto submitted = run_weir({"run", "-D", "-d", "-m", c.rest, "-c",
                             "waits_on_endless", test_drivers()});
  REQUIRE(submitted.exit_code == 0);
  auto app = lines_of(submitted.out).back();
  REQUIRE(c.master->wait_for_stderr(
    "(endless) switched from CREATED to RUNNING", 30s));
  auto cancel = run_weir({"cancel", "-m", c.rest, app});
  CHECK(cancel.exit_code == 0);
  CHECK(c.master->wait_for_stderr(
    "(endless) is cancelled: its application's driver is cancelled", 30s));
  CHECK(c.master->wait_for_stderr("(endless) CANCELED", 30s));
  CHECK(c.master->wait_for_stderr(
    fmt::format("job {} (driver waits_on_endless) CANCELED", app), 30s));
  // Nothing it tried to submit after the wait ran.
  auto list = run_weir({"list", "-m", c.rest, "-a"});
  CHECK(list.out.find("after the wait") == std::string::npos);
  CHECK(list.out.find(" : endless (CANCELED) ") != std::string::npos);
}

TEST_CASE("SIGTERM to an attached driver client cancels the application; its "
          "cluster ends with it") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  running_process weir{{std::getenv("WEIR_BIN"), "run", "-D", "-c",
                        "waits_on_endless", test_drivers()}};
  REQUIRE(weir.wait_for_stdout("waiting for ", 60s));
  weir.signal(SIGTERM);
  auto r = weir.finish(30s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ended CANCELED") != std::string::npos);
  CHECK(eventually([&] { return processes_mentioning(tmp.path()).empty(); }));
}

TEST_CASE("an application cluster does not outlive its killed client") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  running_process weir{{std::getenv("WEIR_BIN"), "run", "-D", "-c",
                        "waits_on_endless", test_drivers()}};
  REQUIRE(weir.wait_for_stdout("waiting for ", 60s));
  REQUIRE_FALSE(processes_mentioning(tmp.path()).empty());
  weir.signal(SIGKILL);
  weir.finish(30s);
  // Its jobmanager gets SIGTERM and stops its workers.
  CHECK(eventually([&] { return processes_mentioning(tmp.path()).empty(); }));
}

TEST_CASE("the workers of an application cluster do not outlive its killed "
          "jobmanager") {
  temp_dir tmp;
  scoped_tmpdir env{tmp.path()};
  running_process weir{{std::getenv("WEIR_BIN"), "run", "-D", "-c",
                        "waits_on_endless", test_drivers()}};
  REQUIRE(weir.wait_for_stdout("waiting for ", 60s));
  auto found = processes_mentioning(tmp.path());
  auto jobmanager = std::find_if(found.begin(), found.end(), [](auto& p) {
    return p.find(" jobmanager ") != std::string::npos;
  });
  REQUIRE(jobmanager != found.end());
  REQUIRE(std::any_of(found.begin(), found.end(), [](auto& p) {
    return p.find(" taskmanager ") != std::string::npos;
  }));
  ::kill(std::stoi(*jobmanager), SIGKILL);
  // Nothing can stop the workers in order; the kernel tells them (SIGTERM).
  CHECK(eventually([&] {
    auto left = processes_mentioning(tmp.path());
    return std::none_of(left.begin(), left.end(), [](auto& p) {
      return p.find(" taskmanager ") != std::string::npos;
    });
  }));
  auto r = weir.finish(30s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 3);
}
