#pragma once

// Session-cluster fixtures shared by the integration tests.

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "process.hpp"

namespace weir::test {

using namespace std::chrono_literals;

/// A jobmanager (extra flags `flags`) on a fresh state directory with one
/// registered taskmanager "worker" of 2 slots (extra flags `worker_flags`).
struct one_worker_cluster {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  std::unique_ptr<running_process> master;
  std::unique_ptr<running_process> worker;
  /// The RPC port's address (workers') and the REST API's (clients').
  std::string address;
  std::string rest;

  explicit one_worker_cluster(std::vector<std::string> flags = {},
                              std::vector<std::string> worker_flags = {}) {
    std::vector<std::string> argv{weir, "jobmanager", "--port", "0",
                                  "--state-dir", dir.file("state"),
                                  any_rest_port};
    argv.insert(argv.end(), flags.begin(), flags.end());
    master = std::make_unique<running_process>(argv);
    address = listening_address(*master);
    REQUIRE_FALSE(address.empty());
    rest = rest_address(*master);
    std::vector<std::string> w{weir,    "taskmanager", "-m",    address,
                               "--slots", "2",         "--id", "worker"};
    w.insert(w.end(), worker_flags.begin(), worker_flags.end());
    worker = std::make_unique<running_process>(w);
    REQUIRE(master->wait_for_stderr("TaskExecutor worker registered", 30s));
  }
};

/// A jobmanager on a free port (extra flags `jobmanager_flags`) plus
/// workers (extra flags `worker_flags`); every process is stopped when the
/// cluster goes out of scope, also when a check failed.
struct session_cluster {
  temp_dir dir;
  std::unique_ptr<running_process> jobmanager;
  std::vector<std::unique_ptr<running_process>> workers;
  std::vector<std::string> worker_flags;
  /// The RPC port's address (workers') and the REST API's (clients').
  std::string address;
  std::string rest;

  explicit session_cluster(std::vector<std::string> jobmanager_flags = {},
                           std::vector<std::string> worker_extra = {})
    : worker_flags(std::move(worker_extra)) {
    std::vector<std::string> cmd{std::getenv("WEIR_BIN"), "jobmanager",
                                 "--port", "0", "--state-dir",
                                 dir.file("state"), any_rest_port};
    cmd.insert(cmd.end(), jobmanager_flags.begin(), jobmanager_flags.end());
    jobmanager = std::make_unique<running_process>(cmd);
    address = listening_address(*jobmanager);
    REQUIRE_FALSE(address.empty());
    rest = rest_address(*jobmanager);
  }

  ~session_cluster() {
    for (auto& w : workers)
      w->signal(SIGTERM);
    for (auto& w : workers)
      w->finish(30s);
    jobmanager->signal(SIGTERM);
    jobmanager->finish(30s);
  }

  /// Starts a worker; with `wait`, returns once the jobmanager logged it.
  void add_worker(const std::string& id, int slots, bool wait = true) {
    std::vector<std::string> cmd{std::getenv("WEIR_BIN"), "taskmanager", "-m",
                                 address, "--slots", std::to_string(slots),
                                 "--id", id};
    cmd.insert(cmd.end(), worker_flags.begin(), worker_flags.end());
    workers.push_back(std::make_unique<running_process>(cmd));
    if (wait)
      REQUIRE(jobmanager->wait_for_stderr(
        fmt::format("TaskExecutor {} registered with {} slots", id, slots),
        30s));
  }

  /// `weir ACTION -m REST ARGS... EXTRA...`
  process_result client(std::vector<std::string> args,
                        const std::vector<std::string>& extra = {}) {
    args.insert(args.begin() + 1, {"-m", rest});
    args.insert(args.end(), extra.begin(), extra.end());
    return run_weir(args, 60s);
  }
};

/// A jobmanager on state directory `state` (first on a free port) that a
/// test kills with SIGKILL and starts again on the same port and state.
struct restartable_jobmanager {
  std::string weir = std::getenv("WEIR_BIN");
  std::string state;
  std::vector<std::string> flags;
  /// The RPC port's address (workers') and the REST API's (clients'),
  /// both kept across restarts.
  std::string address;
  std::string rest;
  std::string port = "0";
  std::string rest_port = "0";
  std::unique_ptr<running_process> proc;

  restartable_jobmanager(std::string state_dir, std::vector<std::string> extra = {})
    : state(std::move(state_dir)), flags(std::move(extra)) {
    start();
    address = listening_address(*proc);
    REQUIRE_FALSE(address.empty());
    port = address.substr(address.find(':') + 1);
    rest = rest_address(*proc);
    REQUIRE_FALSE(rest.empty());
    rest_port = rest.substr(rest.find(':') + 1);
  }

  running_process& operator*() { return *proc; }
  running_process* operator->() { return proc.get(); }

  void kill() {
    proc->signal(SIGKILL);
    proc->finish(30s);
  }

  /// A new jobmanager on the same port and state directory, listening.
  void restart() {
    start();
    REQUIRE(listening_address(*proc) == address);
    REQUIRE(rest_address(*proc) == rest);
  }

private:
  void start() {
    std::vector<std::string> argv{weir, "jobmanager", "--port", port,
                                  "--state-dir", state,
                                  "-Drest.port=" + rest_port};
    argv.insert(argv.end(), flags.begin(), flags.end());
    proc = std::make_unique<running_process>(argv);
  }
};

/// `weir stop` of job `id` with a savepoint into `dir`: the savepoint's
/// path it printed.
inline std::string stop_with_savepoint(const std::string& rest,
                                       const std::string& id,
                                       const std::string& dir) {
  auto stopped = run_weir({"stop", "-m", rest, id, "--savepointPath", dir});
  INFO("weir stop said: " << stopped.err);
  REQUIRE(stopped.exit_code == 0);
  const std::string prefix = "Savepoint completed. Path: ";
  auto at = stopped.out.find(prefix);
  REQUIRE(at != std::string::npos);
  auto path = stopped.out.substr(at + prefix.size());
  return path.substr(0, path.find('\n'));
}

/// The lines of every file in an exactly-once sink's directory, sorted;
/// every file must be committed (nothing pending or in progress).
inline std::vector<std::string> committed_lines(const std::string& dir) {
  std::string all;
  for (auto& entry : std::filesystem::directory_iterator(dir)) {
    CHECK(entry.path().filename().string().rfind("part-", 0) == 0);
    all += read_file(entry.path().string());
  }
  return sorted_lines(all);
}

/// What a generator of `count` records over `keys` keys writes, sorted.
inline std::vector<std::string> generated_lines(int count, int keys) {
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i)
    lines.push_back(fmt::format("key-{}\t{}", i % keys, i));
  std::sort(lines.begin(), lines.end());
  return lines;
}

/// A jobmanager that a test kills and starts again on its state directory,
/// with one registered taskmanager "tm-1" of 2 slots.
struct restartable_cluster {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  restartable_jobmanager master{dir.file("state")};
  running_process worker{{weir, "taskmanager", "-m", master.address, "--slots",
                          "2", "--id", "tm-1"}};

  restartable_cluster() {
    REQUIRE(master->wait_for_stderr("TaskExecutor tm-1 registered", 30s));
  }
};

/// numbers 1..500000 → collect: a result of megabytes, more than the
/// socket buffers of a connection hold.
inline std::string large_result_spec(const temp_dir& dir) {
  return dir.write("large.json", R"({
    "name": "large",
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 500000}},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "numbers", "to": "out", "partitioning": "forward"}]})");
}

/// Runs the large job with a client that stops reading while the job's
/// result is stored (that takes seconds); returns once the jobmanager sent
/// it the result, which then waits in the connection. The jobmanager's
/// heartbeat.timeout must outlast the test: it keeps the silent client's
/// connection.
inline std::unique_ptr<running_process>
client_not_reading(running_process& master, const std::string& address,
                   const temp_dir& dir) {
  auto client = std::make_unique<running_process>(std::vector<std::string>{
    std::getenv("WEIR_BIN"), "run", "-m", address, large_result_spec(dir)});
  // By now the client asks for the result (it did so right after the
  // submission); the answer leaves once the result is stored.
  REQUIRE(master.wait_for_stderr("(large) switched from RUNNING to FINISHED",
                                 60s));
  client->signal(SIGSTOP);
  REQUIRE(master.wait_for_stderr("(large) FINISHED\n", 60s));
  // A request through the same connection layer after the result: by its
  // answer, the result has been written towards the client.
  CHECK(run_weir({"list", "-m", address}, 60s).exit_code == 0);
  return client;
}

} // namespace weir::test
