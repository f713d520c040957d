// Inputs that cannot be opened or that block (FIFOs, user code that never
// returns): the job fails or is cancelled, the process that runs it stays
// up or ends within seconds when told to.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

constexpr const char* count_spec = R"({
  "name": "counts", "params": {"input": ""},
  "vertices": [
    {"id": "lines", "operator": "text_file", "params": {"path": "${input}"}},
    {"id": "words", "operator": "flat_map", "params": {"function": "tokenize"}},
    {"id": "counts", "operator": "count"},
    {"id": "out", "operator": "collect", "parallelism": 1}],
  "edges": [
    {"from": "lines", "to": "words", "partitioning": "forward"},
    {"from": "words", "to": "counts", "partitioning": "hash"},
    {"from": "counts", "to": "out", "partitioning": "rebalance"}]})";

/// Opens the FIFO for writing once a reader has it open (polled, with a
/// deadline); -1 when none came.
int writer_once_read(const std::string& fifo) {
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0)
      return fd;
    REQUIRE(errno == ENXIO); // no reader yet
    std::this_thread::sleep_for(10ms); // polling, with a deadline
  }
  return -1;
}

/// Runs `weir run` on `args` and stops it with SIGTERM once `ready` holds;
/// the result and how long it took to end after the signal.
template <class Ready>
std::pair<process_result, std::chrono::milliseconds>
terminate_when(const std::vector<std::string>& args, Ready ready) {
  std::vector<std::string> argv{std::getenv("WEIR_BIN")};
  argv.insert(argv.end(), args.begin(), args.end());
  running_process weir{argv};
  REQUIRE(weir.wait_for_stderr("Job has been submitted with JobID ", 30s));
  ready(weir);
  auto signalled = std::chrono::steady_clock::now();
  weir.signal(SIGTERM);
  auto r = weir.finish(60s);
  return {r, std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now() - signalled)};
}

} // namespace

TEST_CASE("SIGTERM cancels a job reading a FIFO nobody writes to") {
  temp_dir dir;
  auto spec = dir.write("job.json", count_spec);
  auto fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  int writer = -1;
  auto [r, took] = terminate_when({"run", spec, "--input", fifo},
                                  [&](running_process&) {
                                    // The source has the FIFO open and
                                    // waits for data that never comes.
                                    writer = writer_once_read(fifo);
                                    REQUIRE(writer >= 0);
                                  });
  ::close(writer);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ended CANCELED: job was canceled") != std::string::npos);
  CHECK(took < 10s); // the stop deadline would end it at 10 s, uncancelled
}

TEST_CASE("a FIFO, a device and a /proc file are read as one stream") {
  temp_dir dir;
  auto spec = dir.write("job.json", count_spec);
  auto fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer{[&] {
    int fd = writer_once_read(fifo);
    std::string text = "to be or\nnot to be\n";
    CHECK(::write(fd, text.data(), text.size()) == ssize_t(text.size()));
    ::close(fd);
  }};
  auto r = run_weir({"run", "-p", "2", spec, "--input", fifo}, 60s);
  writer.join();
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(r.out)
        == std::vector<std::string>{"be\t2", "not\t1", "or\t1", "to\t2"});
  // Size 0: splitting by size would read nothing.
  auto proc = run_weir({"run", "-p", "2", spec, "--input", "/proc/self/status"});
  CHECK(proc.exit_code == 0);
  CHECK(proc.out.find("\nname\t1\n") != std::string::npos);
  // No newline ever: a clear failure, not a process that grows.
  auto zero = run_weir({"run", spec, "--input", "/dev/zero"});
  CHECK(zero.exit_code == 1);
  CHECK(zero.err.find("a line of '/dev/zero' (starting at byte 0) is longer "
                      "than 16777216 bytes (parameter 'max_line_length')")
        != std::string::npos);
  CHECK(zero.max_rss_kb < 512 * 1024);
}

TEST_CASE("SIGTERM ends weir run within seconds even when user code hangs") {
  temp_dir dir;
  auto spec = dir.write("job.json", R"({
    "name": "stuck",
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 10}},
      {"id": "hang", "operator": "stuck"},
      {"id": "out", "operator": "discard"}],
    "edges": [{"from": "numbers", "to": "hang", "partitioning": "forward"},
              {"from": "hang", "to": "out", "partitioning": "forward"}]})");
  auto [r, took] = terminate_when(
    {"run", spec, "--libjars", test_plugin("drivers")},
    [](running_process& weir) {
      REQUIRE(weir.wait_for_stderr("stuck in user code", 30s));
    });
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("weir run: still running 10000 ms after the stop signal; "
                   "exiting")
        != std::string::npos);
  CHECK(took < 20s);
}

TEST_CASE("an input the worker cannot open fails the job, not the worker") {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  running_process master{{weir, "jobmanager", "--port", "0", "--state-dir",
                          dir.file("state"), any_rest_port}};
  auto address = listening_address(master);
  REQUIRE_FALSE(address.empty());
  auto rest = rest_address(master);
  // The worker runs "on another host": in a mount namespace of its own where
  // an empty file system hides the directory of the client's input.
  auto data_dir = dir.file("data");
  std::filesystem::create_directory(data_dir);
  auto input = dir.write("data/in.txt", "a b a\n");
  auto hidden = [&](const std::string& then) {
    return std::vector<std::string>{
      "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh",
      "-c", "mount -t tmpfs none '" + data_dir + "' && " + then};
  };
  auto probe = run_process(hidden("true"), 30s);
  if (probe.exit_code != 0) {
    MESSAGE("SKIPPED: cannot make a mount namespace (needs root): "
            << probe.err);
    return;
  }
  running_process worker{hidden("exec '" + weir + "' taskmanager -m "
                                + address + " --slots 2 --id worker")};
  REQUIRE(master.wait_for_stderr("TaskExecutor worker registered", 30s));
  auto spec = dir.write("job.json", count_spec);
  for (int i = 0; i < 10; ++i) {
    CAPTURE(i);
    auto r = run_weir({"run", "-m", rest, "-p", std::to_string(1 + i % 2),
                       "-Drestart-strategy.type=none", spec, "--input", input},
                      60s);
    INFO("weir run said: " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("ended FAILED: lines -> words (") != std::string::npos);
    CHECK(r.err.find("cannot open '" + input + "': No such file or directory")
          != std::string::npos);
  }
  // The worker is still there and takes the next job at once.
  auto ok = run_weir({"run", "-m", rest, spec, "--input",
                      source_path("examples/data/sample.txt")}, 60s);
  CHECK(ok.exit_code == 0);
  CHECK_FALSE(ok.out.empty());
  CHECK_FALSE(master.wait_for_stderr("TaskExecutor worker lost", 500ms));
}
