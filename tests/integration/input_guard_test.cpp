// Input that used to crash, hang or be misread: numbers beyond a double,
// files that are not regular files, values outside their key's range. Each
// is one line on stderr and exit code 2, at once.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "refusal.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

constexpr const char* collect_spec = R"({
  "name": "c",
  "vertices": [
    {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 3}},
    {"id": "out", "operator": "collect"}],
  "edges": [{"from": "numbers", "to": "out"}]})";

} // namespace

TEST_CASE("a number beyond a double in a spec names its line and column") {
  temp_dir dir;
  auto spec = dir.write("job.json", "{\"name\": \"c\",\n \"parallelism\": 1e400}");
  expect_refused({"run", spec},
                 spec + ":2:21: number overflow parsing '1e400'");
}

TEST_CASE("a directory, FIFO or device as spec, --config or -s is refused "
          "without reading it") {
  temp_dir dir;
  auto spec = dir.write("job.json", collect_spec);
  auto fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  expect_refused({"run", "--config", dir.path(), spec},
                 "weir run: " + dir.path() + ": cannot read the configuration "
                 "file: not a regular file (a directory)");
  expect_refused({"run", "--config", fifo, spec},
                 "weir run: " + fifo + ": cannot read the configuration file: "
                 "not a regular file (a FIFO)");
  expect_refused({"run", "--config", "/dev/zero", spec},
                 "weir run: /dev/zero: cannot read the configuration file: not "
                 "a regular file (a character device)");
  expect_refused({"run", fifo},
                 fifo + ": cannot read file: not a regular file (a FIFO)");
  expect_refused({"run", "/dev/zero"}, "/dev/zero: cannot read file: not a "
                                       "regular file (a character device)");
  expect_refused({"run", "-s", fifo, spec},
                 "weir run: -s: " + fifo + ": not a regular file (a FIFO)");
  expect_refused({"savepoint", "-d", "/dev/zero"},
                 "weir savepoint: -d: /dev/zero: not a regular file (a "
                 "character device)");
}

TEST_CASE("configuration values outside their key's range name key and range") {
  temp_dir dir;
  auto spec = dir.write("job.json", collect_spec);
  expect_refused({"run", "-Dtaskmanager.numberOfTaskSlots=4294967297", spec},
                 "weir run: -Dtaskmanager.numberOfTaskSlots=4294967297: key "
                 "'taskmanager.numberOfTaskSlots': expected a value in [1, "
                 "32768], got '4294967297'");
  expect_refused({"run", "-Dheartbeat.timeout=99999999999999999999h", spec},
                 "weir run: -Dheartbeat.timeout=99999999999999999999h: key "
                 "'heartbeat.timeout': expected a value in [1 ms, 8760 h], got "
                 "'99999999999999999999h'");
  auto yaml = dir.write("weir.yaml", "restart-strategy.fixed-delay.attempts: "
                                     "-1\n");
  expect_refused({"run", "--config", yaml, spec},
                 "weir run: " + yaml + ":1: key "
                 "'restart-strategy.fixed-delay.attempts': expected a value in "
                 "[0, 2147483647], got '-1'");
  expect_refused({"jobmanager", "--port", "99999", "--state-dir",
                  dir.file("state")},
                 "weir jobmanager: --port 99999: key 'jobmanager.rpc.port': "
                 "expected a value in [0, 65535], got '99999'");
}

TEST_CASE("int64 overflow in a built-in operator fails the job, naming it") {
  temp_dir dir;
  auto spec = dir.write("job.json", R"({
    "name": "overflow", "parallelism": 1,
    "vertices": [
      {"id": "numbers", "operator": "sequence",
       "params": {"from": 9223372036854775806, "to": 9223372036854775807}},
      {"id": "one_key", "operator": "map",
       "params": {"function": "key_mod", "modulus": 1}},
      {"id": "total", "operator": "sum"},
      {"id": "out", "operator": "collect"}],
    "edges": [
      {"from": "numbers", "to": "one_key"},
      {"from": "one_key", "to": "total", "partitioning": "hash"},
      {"from": "total", "to": "out"}]})");
  auto r = run_weir({"run", spec}, 60s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("ended FAILED: ") != std::string::npos);
  CHECK(r.err.find("sum: int64 overflow at key '0'") != std::string::npos);
  auto square = dir.write("square.json", R"({
    "name": "square", "vertices": [
      {"id": "numbers", "operator": "sequence",
       "params": {"from": 4294967296, "to": 4294967296}},
      {"id": "squared", "operator": "map", "params": {"function": "square"}},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "numbers", "to": "squared"},
              {"from": "squared", "to": "out"}]})");
  r = run_weir({"run", square}, 60s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("square: int64 overflow at value 4294967296")
        != std::string::npos);
}

TEST_CASE("relative paths with -m are the client's: made absolute before "
          "submission") {
  one_worker_cluster cluster; // its worker runs in the source root
  temp_dir client;            // the client runs here
  client.write("in.txt", "b a b\n");
  auto spec = source_path("examples/wordcount.json");
  auto command = fmt::format("cd '{}' && exec '{}' run -m {} '{}' --input "
                             "in.txt --output out.txt",
                             client.path(), cluster.weir, cluster.rest,
                             spec);
  auto r = run_process({"/bin/sh", "-c", command}, 60s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(read_file(client.file("out.txt")) == "a\t1\nb\t2\n");
  CHECK_FALSE(exists(source_path("out.txt")));
}

TEST_CASE("an output that is the input, by any name, is refused") {
  temp_dir dir;
  auto spec = source_path("examples/wordcount.json");
  auto input = dir.write("in.txt", "b a b\n");
  auto refused = [&](const std::string& output, const std::string& message) {
    expect_refused({"run", spec, "--input", input, "--output", output},
                   spec + ": vertices[3] ('out'): parameter 'path': " + message);
    CHECK(read_file(input) == "b a b\n");
  };
  refused(input, "'" + input + "' is the input of vertices[0] ('lines') ('"
                   + input + "'); writing it would replace the input");
  REQUIRE(::symlink(input.c_str(), dir.file("link").c_str()) == 0);
  REQUIRE(::link(input.c_str(), dir.file("hard").c_str()) == 0);
  for (auto& other : {dir.file("link"), dir.file("hard"),
                      dir.path() + "/./in.txt"})
    refused(other, "'" + other + "' is the input of vertices[0] "
                   "('lines') ('" + input + "'); writing it would replace the "
                   "input");
  refused(dir.path(), "the input of vertices[0] ('lines') ('" + input
                        + "') lies inside the output directory '" + dir.path()
                        + "'; writing it could replace the input");
}

TEST_CASE("an output that is a device or a FIFO is refused and stays what it "
          "was") {
  // The sink renames a new file over its output: over /dev/null that
  // replaced the device with a regular file, for every process on the host.
  temp_dir dir;
  auto spec = source_path("examples/wordcount.json");
  auto input = dir.write("in.txt", "b a b\n");
  auto fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto tail = ": a file sink writes a new file and renames it over its output, "
              "which would replace it (write to a file, or use the discard "
              "sink to drop rows)";
  expect_refused({"run", spec, "--input", input, "--output", "/dev/null"},
                 spec + ": vertices[3] ('out'): parameter 'path': '/dev/null' "
                        "is a character device" + tail);
  expect_refused({"run", spec, "--input", input, "--output", fifo},
                 spec + ": vertices[3] ('out'): parameter 'path': '" + fifo
                   + "' is a FIFO" + tail);
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("a 10 MB job name is refused in one short line") {
  temp_dir dir;
  auto spec = dir.write("job.json", R"({"name": ")" + std::string(10 << 20, 'n')
                                      + R"(", "vertices": []})");
  expect_refused({"run", spec},
                 spec + ": name: 10485760 bytes, more than the 256 allowed");
}
