// Chaos: a session cluster of real processes (one jobmanager, three
// taskmanagers with two slots each) runs a stream of bounded jobs with known
// answers (paced generator sums and counts into files or `collect`, word
// counts into part files, sequence sums) while a seeded driver, every
// 2.2–3 s, SIGKILLs a random taskmanager (and starts it again under the same
// --id) or SIGSTOPs one for 2 s (beyond heartbeat.timeout) and SIGCONTs it,
// and once SIGKILLs the jobmanager and starts it again on the same state
// directory and port. Every 1.5–2.5 s it also rescales a running keyed
// count with an exactly-once sink in place (`weir rescale`, 2 <-> 1). A quiet prelude first hangs the worker that writes
// one job's output file, so that the check of restart causes below has a
// verdict that does not depend on timing.
//
// Verdict: every job ends FINISHED exactly once (`weir list -a`, and one
// FINISHED line over the event logs of all jobmanager incarnations), its
// results are exact, no `.inprogress` file is left, every fault was detected,
// and every restart of a job was caused by an injected fault (never by one
// attempt of a job disturbing another). The summary line gives detection
// and recovery times.
//
// WEIR_CHAOS_SEED overrides the seed (printed), WEIR_CHAOS_SECONDS the length
// of the chaos phase (default 60), WEIR_CHAOS_LOG_DIR keeps every process's
// log there.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "process.hpp"
#include "reference.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

using sys_clock = std::chrono::system_clock;
using steady = std::chrono::steady_clock;
using ms = std::chrono::milliseconds;

/// How long a hung taskmanager stays stopped: well beyond heartbeat.timeout
/// (1 s here), so that the jobmanager declares it lost.
constexpr auto stop_duration = 2000ms;
/// Every process of the cluster detects a hung peer after 1 s rather than
/// the default 3 s, so that the fault schedule (a fault every 2.2–3 s, a
/// stop of 2 s) stays as dense as it was designed.
constexpr const char* heartbeat_interval_flag = "-Dheartbeat.interval=200 ms";
constexpr const char* heartbeat_timeout_flag = "-Dheartbeat.timeout=1 s";
/// Jobs that may run (or wait for slots) at once: 3 workers x 2 slots fit
/// three jobs of parallelism 2.
constexpr size_t jobs_in_flight = 3;
/// Every job restarts on any failure, practically forever, after 50 ms.
constexpr const char* restart_config
  = R"("config": {"restart-strategy.type": "fixed-delay",
       "restart-strategy.fixed-delay.attempts": 1000,
       "restart-strategy.fixed-delay.delay": "50 ms"},)";

std::string weir_bin() {
  return std::getenv("WEIR_BIN");
}

long env_long(const char* name, long fallback) {
  auto* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtol(v, nullptr, 0) : fallback;
}

/// Reads whatever a process wrote so far (its pipes must not fill up while
/// the test does other things). A process whose output is closed (it exited)
/// returns at once: the result says whether it did.
bool pump_and_check_exited(running_process& p) {
  // wait_for_stderr polls until less than 1 ms of the slice is left, unless
  // both pipes are closed: then it returns at once.
  constexpr auto slice = 5ms;
  auto t0 = steady::now();
  p.wait_for_stderr("\x01never printed\x02", slice);
  return steady::now() - t0 < slice - 2ms;
}

template <class Duration>
int64_t to_ms(Duration d) {
  return std::chrono::duration_cast<ms>(d).count();
}

/// A timestamp truncated to milliseconds, as the event log prints them.
sys_clock::time_point floor_ms(sys_clock::time_point t) {
  return std::chrono::time_point_cast<ms>(t);
}

/// One line of an event log: "2024-05-01T10:00:00.123Z component: text".
struct log_line {
  sys_clock::time_point at;
  std::string text;
};

std::vector<log_line> parse_log(const std::string& log) {
  std::vector<log_line> out;
  for (auto& line : lines_of(log)) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, milli = 0;
    char z = 0;
    if (std::sscanf(line.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d,
                    &h, &mi, &s, &milli, &z)
          != 8
        || z != 'Z')
      continue;
    std::tm t{};
    t.tm_year = y - 1900;
    t.tm_mon = mo - 1;
    t.tm_mday = d;
    t.tm_hour = h;
    t.tm_min = mi;
    t.tm_sec = s;
    auto at = sys_clock::from_time_t(timegm(&t)) + ms{milli};
    auto colon = line.find(": ");
    out.push_back(log_line{at, colon == std::string::npos
                                 ? line
                                 : line.substr(colon + 2)});
  }
  return out;
}

/// min/median/max of samples in ms, JSON-ish.
std::string stats(std::vector<int64_t> xs) {
  if (xs.empty())
    return "{\"n\": 0}";
  std::sort(xs.begin(), xs.end());
  return fmt::format("{{\"n\": {}, \"min\": {}, \"median\": {}, \"max\": {}}}",
                     xs.size(), xs.front(), xs[xs.size() / 2], xs.back());
}

// -- the jobs -----------------------------------------------------------------

/// A submitted job and how to check its result.
struct job {
  std::string id;
  std::string name;
  std::string kind;
  std::string spec;                 ///< path of its spec file
  std::vector<std::string> expected; ///< sorted result lines
  std::string output;               ///< text_file sink path ("" = collect)
  bool output_is_dir = false;       ///< sink parallelism 2: part-0, part-1
  bool exactly_once = false;        ///< committed part files in `output`
  int parallelism = 2;              ///< as last rescaled
  bool submitted = false;           ///< the jobmanager acknowledged it
  std::string state;                ///< last state seen in `weir list`
};

/// generator (`count` records, 1000/s per subtask, `keys` keys) → `agg`
/// (sum or count) → `sink` (p = 1).
std::string paced_spec(const std::string& name, int64_t count, int64_t keys,
                       const std::string& agg, const std::string& output) {
  auto sink = output.empty()
                ? std::string{R"("operator": "collect")"}
                : fmt::format(R"("operator": "text_file", "params": {{"path": "{}"}})",
                              output);
  return fmt::format(R"({{
    "name": "{}", "parallelism": 2, {}
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": 1000, "keys": {}}}}},
      {{"id": "agg", "operator": "{}"}},
      {{"id": "out", {}, "parallelism": 1}}],
    "edges": [
      {{"from": "events", "to": "agg", "partitioning": "hash"}},
      {{"from": "agg", "to": "out", "partitioning": "rebalance"}}]}})",
                     name, restart_config, count, keys, agg, sink);
}

/// generator (`count` records, 1000/s per subtask, `keys` keys) → count →
/// exactly-once text_file directory, all at parallelism 2, a checkpoint
/// every 200 ms: a job `weir rescale` may rescale while it runs.
std::string rescaled_spec(const std::string& name, int64_t count,
                          int64_t keys, const std::string& output) {
  return fmt::format(R"({{
    "name": "{}", "parallelism": 2,
    "config": {{"restart-strategy.type": "fixed-delay",
       "restart-strategy.fixed-delay.attempts": 1000,
       "restart-strategy.fixed-delay.delay": "50 ms",
       "execution.checkpointing.interval": "200 ms"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": 1000, "keys": {}}}}},
      {{"id": "agg", "operator": "count"}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}", "delivery": "exactly-once"}}}}],
    "edges": [
      {{"from": "events", "to": "agg", "partitioning": "hash"}},
      {{"from": "agg", "to": "out", "partitioning": "forward"}}]}})",
                     name, count, keys, output);
}

/// The lines of the committed part files of an exactly-once sink's
/// directory (none while it has none).
std::string committed_text(const std::string& dir) {
  std::string all;
  std::error_code ec;
  for (std::filesystem::directory_iterator i{dir, ec}, end; !ec && i != end;
       i.increment(ec))
    if (i->path().filename().string().rfind("part-", 0) == 0)
      all += read_file(i->path().string());
  return all;
}

/// What differs between a job's lines and the expected ones: how many
/// are missing and how many extra, and the first few of each.
std::string differences(const std::vector<std::string>& got,
                        const std::vector<std::string>& expected) {
  std::vector<std::string> missing;
  std::vector<std::string> extra;
  std::set_difference(expected.begin(), expected.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  auto first = [](const std::vector<std::string>& xs) {
    std::string out;
    for (size_t i = 0; i < xs.size() && i < 5; ++i)
      out += (i ? " | " : "") + xs[i];
    return out;
  };
  return fmt::format("{} lines, {} expected; {} missing ({}), {} extra ({})",
                     got.size(), expected.size(), missing.size(),
                     first(missing), extra.size(), first(extra));
}

/// The files in `dir` (or `dir` itself), with their sizes.
std::string listing(const std::string& dir) {
  std::string out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return dir + " (" + std::to_string(std::filesystem::file_size(dir, ec))
           + " bytes)";
  for (std::filesystem::directory_iterator i{dir, ec}, end; !ec && i != end;
       i.increment(ec))
    out += (out.empty() ? "" : ", ") + i->path().filename().string() + " ("
           + std::to_string(i->file_size(ec)) + ")";
  return out;
}

/// The generator's record i has key "key-<i mod keys>" and value i.
std::vector<std::string> expected_paced(int64_t count, int64_t keys,
                                        bool sum) {
  std::map<std::string, int64_t> m;
  for (int64_t i = 0; i < count; ++i)
    m[fmt::format("key-{}", i % keys)] += sum ? i : 1;
  return as_lines(m);
}

/// numbers 1..n → key mod 13 → sum → text_file (p = 1).
std::string sum_spec(const std::string& name, int64_t n,
                     const std::string& output) {
  return fmt::format(R"({{
    "name": "{}", "parallelism": 2, {}
    "vertices": [
      {{"id": "numbers", "operator": "sequence", "params": {{"from": 1, "to": {}}}}},
      {{"id": "keyed", "operator": "map", "params": {{"function": "key_mod", "modulus": 13}}}},
      {{"id": "sums", "operator": "sum"}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}"}}, "parallelism": 1}}],
    "edges": [
      {{"from": "numbers", "to": "keyed", "partitioning": "forward"}},
      {{"from": "keyed", "to": "sums", "partitioning": "hash"}},
      {{"from": "sums", "to": "out", "partitioning": "rebalance"}}]}})",
                     name, restart_config, n, output);
}

std::vector<std::string> expected_sums(int64_t n) {
  std::map<std::string, int64_t> sums;
  for (int64_t i = 1; i <= n; ++i)
    sums[std::to_string(i % 13)] += i;
  return as_lines(sums);
}

/// Word count over `input` at parallelism 2 into a directory of two part
/// files.
std::string wordcount_spec(const std::string& name, const std::string& input,
                           const std::string& output) {
  return fmt::format(R"({{
    "name": "{}", "parallelism": 2, {}
    "vertices": [
      {{"id": "lines", "operator": "text_file", "params": {{"path": "{}"}}}},
      {{"id": "words", "operator": "flat_map", "params": {{"function": "tokenize"}}}},
      {{"id": "counts", "operator": "count"}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}"}}}}],
    "edges": [
      {{"from": "lines", "to": "words", "partitioning": "forward"}},
      {{"from": "words", "to": "counts", "partitioning": "hash"}},
      {{"from": "counts", "to": "out", "partitioning": "forward"}}]}})",
                     name, restart_config, input, output);
}

// -- the cluster --------------------------------------------------------------

struct fault {
  std::string kind; ///< "kill", "stop" or "jm-kill"
  std::string tm;   ///< taskmanager id ("" for the jobmanager)
  sys_clock::time_point at;
  std::optional<sys_clock::time_point> resumed; ///< SIGCONT of a stop
};

struct taskmanager {
  std::string id;
  std::unique_ptr<running_process> proc;
  std::string old_logs; ///< stderr of earlier incarnations
  bool stopped = false;
  steady::time_point resume_at;
  /// Up once the jobmanager logged its registration at or after this time.
  sys_clock::time_point registered_after;
  int self_exits = 0;
  int reconnects_after_stop = 0;
};

struct chaos_cluster {
  temp_dir dir;
  std::string state;
  /// The jobmanager's RPC address and port (workers'), and its REST API's
  /// address and port (clients'); both kept across restarts.
  std::string address;
  std::string port;
  std::string rest;
  std::string rest_port = "0";
  std::unique_ptr<running_process> jm;
  std::string old_jm_logs; ///< stderr of earlier jobmanager incarnations
  std::vector<taskmanager> tms;
  int jm_self_exits = 0;

  chaos_cluster() : state(dir.file("state")) {
  }

  ~chaos_cluster() {
    for (auto& tm : tms)
      if (tm.proc) {
        tm.proc->signal(SIGCONT);
        tm.proc->signal(SIGTERM);
      }
    for (auto& tm : tms)
      if (tm.proc)
        tm.proc->finish(10s);
    if (jm) {
      jm->signal(SIGTERM);
      jm->finish(10s);
    }
    // Also after a failed REQUIRE: the logs are what explains it.
    if (auto* keep = std::getenv("WEIR_CHAOS_LOG_DIR"); keep != nullptr && *keep) {
      std::error_code ec;
      std::filesystem::create_directories(keep, ec);
      keep_file(keep, "jobmanager.log", all_jm_logs());
      for (auto& tm : tms)
        keep_file(keep, tm.id + ".log", tm_log(tm));
    }
  }

  static void keep_file(const std::string& dir, const std::string& name,
                        const std::string& text) {
    if (auto* f = std::fopen((dir + "/" + name).c_str(), "w")) {
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
  }

  std::string jm_log() const {
    return jm ? jm->stderr_so_far() : std::string{};
  }

  std::string all_jm_logs() const {
    return old_jm_logs + jm_log();
  }

  std::string tm_log(const taskmanager& tm) const {
    return tm.old_logs + (tm.proc ? tm.proc->stderr_so_far() : "");
  }

  /// Starts a jobmanager on `port` ("0": any); retries while the port is
  /// still busy. Returns false when none came up within the deadline.
  bool start_jobmanager(const std::string& on_port) {
    auto until = steady::now() + 30s;
    while (steady::now() < until) {
      jm = std::make_unique<running_process>(std::vector<std::string>{
        weir_bin(), "jobmanager", "--port", on_port, "--state-dir", state,
        heartbeat_interval_flag, heartbeat_timeout_flag,
        "-Drest.port=" + rest_port});
      auto a = listening_address(*jm, 15s);
      if (!a.empty()) {
        address = a;
        port = a.substr(a.find(':') + 1);
        rest = rest_address(*jm, 1s);
        rest_port = rest.substr(rest.find(':') + 1);
        return true;
      }
      // It exited (say, the port was busy): keep its log, try again after a
      // short back-off (a retry schedule, not a wait for a condition).
      jm->signal(SIGKILL);
      old_jm_logs += jm->finish(10s).err;
      jm.reset();
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }

  void start_taskmanager(taskmanager& tm) {
    tm.proc = std::make_unique<running_process>(std::vector<std::string>{
      weir_bin(), "taskmanager", "-m", address, "--slots", "2", "--id", tm.id,
      heartbeat_interval_flag, heartbeat_timeout_flag});
  }

  /// Whether the current jobmanager logged `tm`'s registration since it was
  /// last hit.
  bool registered(const taskmanager& tm) const {
    if (tm.stopped || !tm.proc)
      return false;
    auto needle = "TaskExecutor " + tm.id + " registered";
    for (auto& l : parse_log(jm_log()))
      if (l.at >= floor_ms(tm.registered_after)
          && l.text.compare(0, needle.size(), needle) == 0)
        return true;
    return false;
  }

  /// Pumps every process's output; restarts a process that exited by itself.
  void pump() {
    if (jm && pump_and_check_exited(*jm)) {
      auto r = jm->finish(10s);
      ++jm_self_exits;
      FAIL_CHECK("the jobmanager exited by itself with code " << r.exit_code);
      old_jm_logs += r.err;
      REQUIRE(start_jobmanager(port));
    }
    for (auto& tm : tms) {
      if (!tm.proc || tm.stopped)
        continue;
      if (pump_and_check_exited(*tm.proc)) {
        auto r = tm.proc->finish(10s);
        ++tm.self_exits;
        MESSAGE("taskmanager " << tm.id << " exited by itself (code "
                << r.exit_code << "); starting it again");
        tm.old_logs += r.err;
        tm.registered_after = sys_clock::now();
        start_taskmanager(tm);
      }
    }
  }

  /// A `weir` client call against the current jobmanager.
  process_result client(std::vector<std::string> args,
                        std::chrono::milliseconds deadline = 30s) {
    args.insert(args.begin() + 1, {"-m", rest});
    return run_weir(args, deadline);
  }
};

/// Parses `weir list -a`: job id → states seen (normally exactly one).
std::map<std::string, std::vector<std::string>> parse_list(const std::string& out) {
  static const std::regex line{R"( : ([0-9a-f]{32}) : (.*) \(([A-Z]+)\) )"};
  std::map<std::string, std::vector<std::string>> result;
  for (auto& l : lines_of(out)) {
    std::smatch m;
    if (std::regex_search(l, m, line))
      result[m[1]].push_back(m[3]);
  }
  return result;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

/// The lines of `text` that contain `needle`.
std::string grep_lines(const std::string& text, const std::string& needle) {
  std::string out;
  for (auto& l : lines_of(text))
    if (l.find(needle) != std::string::npos)
      out += l + "\n";
  return out;
}

/// Whether a job's restart cause is an injected fault: a lost worker, a
/// subtask that lost its peer (or its worker the data connection to the
/// peer's) or died with it, a deployment or cancellation
/// cut short by a worker going away. Anything else (an operator's I/O error,
/// say) means attempts of a job got in each other's way.
bool caused_by_a_fault(const std::string& cause) {
  for (auto* known : {"TaskExecutor ", "lost the connection to a peer subtask",
                      "lost the data connection to taskmanager ",
                      "subtask terminated unexpectedly", "deployment failed",
                      "a subtask was canceled outside the JobMaster",
                      "a subtask could not be adopted"})
    if (cause.compare(0, std::strlen(known), known) == 0
        || cause.find("): " + std::string{known}) != std::string::npos)
      return true;
  return false;
}

/// The files under `dir` whose names end with ".inprogress".
std::vector<std::string> in_progress_files(const std::string& dir) {
  std::vector<std::string> found;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    auto p = e.path().string();
    if (p.size() > 11 && p.compare(p.size() - 11, 11, ".inprogress") == 0)
      found.push_back(p);
  }
  return found;
}

} // namespace

TEST_CASE("chaos: killed and hung workers, a killed master, exact results") {
  auto seed = static_cast<uint32_t>(env_long("WEIR_CHAOS_SEED", 20240607));
  auto chaos_length = std::chrono::seconds{env_long("WEIR_CHAOS_SECONDS", 60)};
  fmt::print(stderr, "chaos: seed {} (WEIR_CHAOS_SEED), {} s of faults\n", seed,
             chaos_length.count());
  // Two streams from the seed: the jobs, and the fault schedule (so that
  // how many jobs a run gets through does not change its faults).
  std::mt19937 rng{seed};
  std::mt19937 fault_rng{seed ^ 0x5eedfa17u};
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>{lo, hi}(rng);
  };
  auto fault_uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>{lo, hi}(fault_rng);
  };

  chaos_cluster c;
  REQUIRE(c.start_jobmanager("0"));
  for (int i = 1; i <= 3; ++i) {
    c.tms.push_back(taskmanager{});
    c.tms.back().id = fmt::format("tm{}", i);
    c.tms.back().registered_after = sys_clock::now();
    c.start_taskmanager(c.tms.back());
  }
  for (auto& tm : c.tms)
    REQUIRE(c.jm->wait_for_stderr("TaskExecutor " + tm.id + " registered", 30s));

  // Inputs of the word counts, and where all outputs go.
  auto out_dir = c.dir.file("out");
  std::filesystem::create_directory(out_dir);
  std::vector<std::pair<std::string, std::vector<std::string>>> texts;
  for (uint32_t t = 0; t < 3; ++t) {
    auto text = random_text(seed + t, 40000);
    texts.emplace_back(c.dir.write(fmt::format("text-{}.txt", t), text),
                       as_lines(reference_word_counts(text)));
  }

  // The next job of the stream, drawn from the seed.
  std::vector<job> jobs;
  auto make_job = [&] {
    job j;
    auto index = jobs.size();
    j.id = fmt::format("{:08x}{:08x}{:08x}{:08x}", rng(), rng(), rng(),
                       static_cast<uint32_t>(index + 1));
    auto pick = uniform(0, 99);
    if (index % 4 == 1) {
      // Every fourth job: one the driver rescales while it runs (longer,
      // so that it runs when a rescale is due).
      auto count = uniform(8000, 14000);
      auto keys = uniform(3, 17);
      j.kind = "rescaled-count";
      j.name = fmt::format("rescaled-count-{}", index);
      j.output = fmt::format("{}/{}", out_dir, j.name);
      j.exactly_once = true;
      j.spec = c.dir.write(j.name + ".json",
                           rescaled_spec(j.name, count, keys, j.output));
      j.expected = expected_paced(count, keys, false);
    } else if (pick < 35) {
      auto count = uniform(3000, 7000);
      auto keys = uniform(3, 17);
      j.kind = "paced-sum";
      j.name = fmt::format("paced-sum-{}", index);
      j.output = fmt::format("{}/{}.txt", out_dir, j.name);
      j.spec = c.dir.write(j.name + ".json",
                           paced_spec(j.name, count, keys, "sum", j.output));
      j.expected = expected_paced(count, keys, true);
    } else if (pick < 70) {
      auto count = uniform(3000, 7000);
      auto keys = uniform(3, 17);
      j.kind = "paced-count";
      j.name = fmt::format("paced-count-{}", index);
      j.spec = c.dir.write(j.name + ".json",
                           paced_spec(j.name, count, keys, "count", ""));
      j.expected = expected_paced(count, keys, false);
    } else if (pick < 85) {
      auto& [input, counts] = texts[static_cast<size_t>(uniform(0, 2))];
      j.kind = "wordcount";
      j.name = fmt::format("wordcount-{}", index);
      j.output = fmt::format("{}/{}", out_dir, j.name);
      j.output_is_dir = true;
      j.spec = c.dir.write(j.name + ".json",
                           wordcount_spec(j.name, input, j.output));
      j.expected = counts;
    } else {
      auto n = uniform(1000000, 3000000);
      j.kind = "sum";
      j.name = fmt::format("sum-{}", index);
      j.output = fmt::format("{}/{}.txt", out_dir, j.name);
      j.spec = c.dir.write(j.name + ".json", sum_spec(j.name, n, j.output));
      j.expected = expected_sums(n);
    }
    jobs.push_back(std::move(j));
  };

  // Submits (again, with the same id: idempotent) a job not yet
  // acknowledged; false while the jobmanager is unreachable.
  auto submit = [&](job& j) {
    auto r = c.client({"run", "-d", "--jobid", j.id, j.spec});
    if (r.exit_code == 0) {
      CHECK(r.out == j.id + "\n");
      j.submitted = true;
      return true;
    }
    // 3: the master is down or restarting; anything else is a test bug.
    if (r.exit_code != 3)
      FAIL_CHECK("weir run -d " << j.name << " exited " << r.exit_code << ": "
                 << r.err);
    return false;
  };

  // Refreshes every job's state from `weir list -a`; false while the
  // jobmanager is unreachable.
  auto refresh = [&] {
    auto r = c.client({"list", "-a"});
    if (r.exit_code != 0)
      return false;
    auto seen = parse_list(r.out);
    for (auto& j : jobs)
      if (auto i = seen.find(j.id); i != seen.end())
        j.state = i->second.back();
    return true;
  };
  auto terminal = [](const std::string& s) {
    return s == "FINISHED" || s == "FAILED" || s == "CANCELED";
  };
  auto unfinished = [&] {
    size_t n = 0;
    for (auto& j : jobs)
      n += !terminal(j.state) ? 1 : 0;
    return n;
  };
  auto resubmit_pending = [&] {
    for (auto& j : jobs)
      if (!j.submitted && !submit(j))
        return;
  };

  std::vector<fault> faults;
  int tm_kills = 0;
  int tm_stops = 0;
  int jm_kills = 0;
  std::optional<int64_t> jm_back_ms;     // kill → new jobmanager listening
  std::optional<int64_t> jm_workers_ms;  // kill → all workers registered again
  std::optional<sys_clock::time_point> jm_killed_at;
  bool jm_recovering = false;

  auto resume_due = [&] {
    for (auto& tm : c.tms) {
      if (!tm.stopped || steady::now() < tm.resume_at)
        continue;
      tm.proc->signal(SIGCONT);
      tm.stopped = false;
      tm.registered_after = sys_clock::now();
      for (auto& f : faults)
        if (f.kind == "stop" && f.tm == tm.id && !f.resumed)
          f.resumed = tm.registered_after;
    }
  };

  auto kill_jobmanager = [&] {
    ++jm_kills;
    auto at = sys_clock::now();
    faults.push_back(fault{"jm-kill", "", at, std::nullopt});
    jm_killed_at = at;
    c.jm->signal(SIGKILL);
    c.old_jm_logs += c.jm->finish(10s).err;
    c.jm.reset();
    REQUIRE(c.start_jobmanager(c.port));
    jm_back_ms = to_ms(sys_clock::now() - at);
    // Workers register again by themselves (-m ADDR); they count as up once
    // the new jobmanager logged them.
    for (auto& tm : c.tms)
      tm.registered_after = std::max(tm.registered_after, at);
    jm_recovering = true;
  };

  // In-place rescales of running exactly-once keyed counts, 2 <-> 1 (a
  // rescale to 1 always fits the slots the job holds). Refusals (exit 3:
  // not running yet, being deployed, a fault under way, no free slot) are
  // part of the game; a rescale that was done is checked by its results.
  std::mt19937 rescale_rng{seed ^ 0x7e5ca1e5u};
  int rescales_done = 0;
  int rescales_refused = 0;
  auto rescale_a_job = [&] {
    std::vector<job*> running;
    for (auto& j : jobs)
      if (j.kind == "rescaled-count" && j.state == "RUNNING")
        running.push_back(&j);
    if (running.empty())
      return;
    auto& j = *running[std::uniform_int_distribution<size_t>{
      0, running.size() - 1}(rescale_rng)];
    auto to = j.parallelism == 2 ? 1 : 2;
    auto r = c.client({"rescale", j.id, "-p", std::to_string(to)}, 60s);
    if (r.exit_code == 0) {
      CHECK(r.out.find(fmt::format("runs at parallelism {}.", to))
            != std::string::npos);
      j.parallelism = to;
      ++rescales_done;
    } else {
      // 3: refused or failed, the job runs on; anything else is a bug.
      CHECK_MESSAGE(r.exit_code == 3, "weir rescale " << j.name << ": " << r.err);
      ++rescales_refused;
    }
  };

  auto hit_taskmanager = [&] {
    std::vector<taskmanager*> up;
    for (auto& tm : c.tms)
      if (c.registered(tm))
        up.push_back(&tm);
    if (up.empty())
      return;
    auto& tm = *up[static_cast<size_t>(
      fault_uniform(0, static_cast<int64_t>(up.size()) - 1))];
    auto at = sys_clock::now();
    if (fault_uniform(0, 1) == 0) {
      ++tm_kills;
      faults.push_back(fault{"kill", tm.id, at, std::nullopt});
      tm.proc->signal(SIGKILL);
      tm.old_logs += tm.proc->finish(10s).err;
      tm.registered_after = at;
      c.start_taskmanager(tm); // the same --id
    } else {
      ++tm_stops;
      faults.push_back(fault{"stop", tm.id, at, std::nullopt});
      tm.proc->signal(SIGSTOP);
      tm.stopped = true;
      tm.resume_at = steady::now() + stop_duration;
      tm.registered_after = at;
    }
  };

  // -- the prelude: one hung worker, one job, a quiet cluster ------------------
  // A long paced job writes its file on one worker; that worker hangs for
  // 2 s. The job restarts once on the other workers, and when the hung
  // worker wakes up, what is left of the old attempt there (canceled as soon
  // as it sees the master gone) must not disturb the new attempt's file.
  // This is the chaos below in a form whose verdict never depends on timing.
  {
    job j;
    j.id = fmt::format("{:08x}{:08x}{:08x}{:08x}", rng(), rng(), rng(), 0u);
    j.kind = "paced-sum";
    j.name = "hung-sink";
    j.output = fmt::format("{}/{}.txt", out_dir, j.name);
    j.spec = c.dir.write(j.name + ".json",
                         paced_spec(j.name, 12000, 7, "sum", j.output));
    j.expected = expected_paced(12000, 7, true);
    jobs.push_back(j);
    REQUIRE(submit(jobs.back()));
    // Wait (with a deadline) until its sink runs and has records to write.
    static const std::regex sink_line{R"(\n  out +1/1  RUNNING +(tm[0-9]+)\n)"};
    std::string where;
    auto until = steady::now() + 30s;
    while (where.empty() && steady::now() < until) {
      c.pump();
      auto st = c.client({"status", j.id});
      std::smatch m;
      if (std::regex_search(st.out, m, sink_line)
          && st.out.find("Records: 0 in") == std::string::npos)
        where = m[1];
    }
    REQUIRE_FALSE(where.empty());
    auto& tm = *std::find_if(c.tms.begin(), c.tms.end(),
                             [&](auto& t) { return t.id == where; });
    REQUIRE(exists(j.output + ".inprogress"));
    ++tm_stops;
    faults.push_back(fault{"stop", tm.id, sys_clock::now(), std::nullopt});
    tm.proc->signal(SIGSTOP);
    tm.stopped = true;
    tm.resume_at = steady::now() + stop_duration;
    tm.registered_after = faults.back().at;
    REQUIRE(c.jm->wait_for_stderr("TaskExecutor " + tm.id + " lost", 30s));
    // Until the scheduled SIGCONT (the fault schedule), pumping output.
    while (tm.stopped) {
      c.pump();
      resume_due();
      std::this_thread::sleep_for(20ms);
    }
    // Until the job has ended (polled with a deadline).
    until = steady::now() + 60s;
    while (!terminal(jobs.back().state) && steady::now() < until) {
      c.pump();
      refresh();
      c.jm->wait_for_stderr("\x01never printed\x02", 200ms); // poll interval
    }
    auto tag = "job " + j.id + " (" + j.name + ") ";
    auto log = c.jm_log();
    INFO("the job's restarts: " << grep_lines(log, tag + "restarts in "));
    CHECK(jobs.back().state == "FINISHED");
    CHECK(count_of(log, tag + "restarts in ") == 1);
    CHECK(count_of(log, tag + "restarts in 50 ms after: TaskExecutor " + tm.id
                          + " lost")
          == 1);
  }

  // -- the chaos phase ----------------------------------------------------------
  auto start = steady::now();
  auto chaos_end = start + chaos_length;
  auto jm_kill_after = start + chaos_length * 2 / 5;
  auto next_fault = start + ms{fault_uniform(1500, 2500)};
  auto next_rescale = start + ms{1500};
  auto next_refresh = start;
  while (steady::now() < chaos_end) {
    c.pump();
    resume_due();
    auto now = steady::now();
    if (jm_recovering) {
      bool all = std::all_of(c.tms.begin(), c.tms.end(),
                             [&](auto& tm) { return c.registered(tm); });
      if (all) {
        jm_recovering = false;
        jm_workers_ms = to_ms(sys_clock::now() - *jm_killed_at);
      } else if (now - start > chaos_length + 30s) {
        FAIL("the workers did not register with the restarted jobmanager");
      }
    }
    if (now >= next_fault && !jm_recovering) {
      bool any_stopped = std::any_of(c.tms.begin(), c.tms.end(),
                                     [](auto& tm) { return tm.stopped; });
      if (jm_kills == 0 && now >= jm_kill_after && !any_stopped)
        kill_jobmanager();
      else
        hit_taskmanager();
      // The fault schedule: the next fault 2.2–3 s from now (a hung worker
      // is resumed 2 s after it was stopped, before the next fault).
      next_fault = steady::now() + ms{fault_uniform(2200, 3000)};
    }
    if (now >= next_rescale && !jm_recovering) {
      rescale_a_job();
      next_rescale = steady::now()
                     + ms{std::uniform_int_distribution<int64_t>{1500, 2500}(
                       rescale_rng)};
    }
    if (now >= next_refresh) {
      resubmit_pending();
      if (refresh())
        while (unfinished() < jobs_in_flight) {
          make_job();
          if (!submit(jobs.back()))
            break;
        }
      next_refresh = steady::now() + 500ms;
    }
    // Pacing of the driver loop itself (output is pumped meanwhile).
    std::this_thread::sleep_for(20ms);
  }

  // -- the drain phase: no more faults, every job must finish ------------------
  auto drain_until = steady::now() + 60s;
  while (std::any_of(c.tms.begin(), c.tms.end(), [](auto& tm) { return tm.stopped; })
         && steady::now() < drain_until) {
    c.pump();
    resume_due();
    std::this_thread::sleep_for(20ms); // until the scheduled SIGCONT
  }
  bool settled = false;
  while (!settled && steady::now() < drain_until) {
    c.pump();
    resubmit_pending();
    if (refresh()) {
      settled = std::all_of(jobs.begin(), jobs.end(),
                            [&](auto& j) { return terminal(j.state); });
    }
    if (!settled)
      c.jm->wait_for_stderr("\x01never printed\x02", 300ms); // poll interval
  }
  if (jm_recovering
      && std::all_of(c.tms.begin(), c.tms.end(),
                     [&](auto& tm) { return c.registered(tm); }))
    jm_workers_ms = to_ms(sys_clock::now() - *jm_killed_at);
  auto elapsed = to_ms(steady::now() - start);

  // -- the verdict ----------------------------------------------------------------
  auto list = c.client({"list", "-a"});
  REQUIRE(list.exit_code == 0);
  auto listed = parse_list(list.out);
  auto logs = c.all_jm_logs();
  int wrong = 0;
  for (auto& j : jobs) {
    INFO("job " << j.name << " (" << j.kind << ") " << j.id);
    CHECK(j.submitted);
    auto seen = listed[j.id];
    if (seen != std::vector<std::string>{"FINISHED"}) {
      // What is left of it, for the failure message.
      auto st = c.client({"status", j.id});
      INFO("weir status: " << st.out << st.err);
      INFO("its events:\n" << grep_lines(c.all_jm_logs(), j.id));
      CHECK(seen == std::vector<std::string>{"FINISHED"});
    }
    CHECK(seen.size() == 1);
    // Ran to its end once: one FINISHED in the event logs of all masters,
    // one submission, no other outcome.
    auto tag = "job " + j.id + " (" + j.name + ") ";
    CHECK(count_of(logs, tag + "FINISHED\n") <= 1);
    CHECK(count_of(logs, tag + "submitted\n") <= 1);
    CHECK(count_of(logs, tag + "FAILED") == 0);
    CHECK(count_of(logs, tag + "CANCELED") == 0);
    std::vector<std::string> got;
    if (j.output.empty()) {
      auto r = c.client({"wait", j.id});
      CHECK(r.exit_code == 0);
      got = sorted_lines(r.out);
    } else if (j.exactly_once) {
      got = sorted_lines(committed_text(j.output));
    } else if (j.output_is_dir) {
      got = sorted_lines(read_file(j.output + "/part-0")
                         + read_file(j.output + "/part-1"));
    } else {
      got = sorted_lines(read_file(j.output));
    }
    CHECK_MESSAGE(got == j.expected,
                  j.name << ": " << differences(got, j.expected)
                         << (j.output.empty() ? "" : "; files: ")
                         << (j.output.empty() ? "" : listing(j.output)));
    wrong += got != j.expected ? 1 : 0;
  }
  CHECK(in_progress_files(out_dir).empty());
  // Attempts of a job must not get in each other's way: every restart has
  // an injected fault as its cause.
  std::string odd_restarts;
  static const std::regex restart_cause{R"(restarts in [0-9]+ ms after: (.*))"};
  for (auto& l : lines_of(logs)) {
    std::smatch m;
    if (std::regex_search(l, m, restart_cause) && !caused_by_a_fault(m[1]))
      odd_restarts += l + "\n";
  }
  {
    INFO("restarts not caused by an injected fault:\n" << odd_restarts);
    CHECK(odd_restarts.empty());
  }
  CHECK(c.jm_self_exits == 0);

  // -- the numbers ----------------------------------------------------------------
  auto events = parse_log(logs);
  std::vector<int64_t> detect_kill, detect_stop, recovery_kill, recovery_stop;
  int undetected = 0;
  for (size_t f = 0; f < faults.size(); ++f) {
    auto& x = faults[f];
    if (x.kind == "jm-kill")
      continue;
    auto from = floor_ms(x.at);
    auto window_end = x.at + 15s;
    for (size_t g = f + 1; g < faults.size(); ++g)
      if (faults[g].tm == x.tm) {
        window_end = std::min(window_end, faults[g].at);
        break;
      }
    auto lost = "TaskExecutor " + x.tm + " lost";
    std::optional<sys_clock::time_point> detected;
    for (auto& l : events)
      if (l.at >= from && l.at < window_end
          && l.text.compare(0, lost.size(), lost) == 0) {
        detected = l.at;
        break;
      }
    if (!detected) {
      ++undetected;
      continue;
    }
    (x.kind == "kill" ? detect_kill : detect_stop)
      .push_back(to_ms(*detected - x.at));
    // Recovery: from the signal to "switched from RESTARTING to RUNNING"
    // (rescheduled) of each job that logged "restarts in" between this
    // fault and the next one.
    auto next_any = x.at + 15s;
    if (f + 1 < faults.size())
      next_any = std::min(next_any, faults[f + 1].at);
    static const std::regex restarts{
      R"(^job ([0-9a-f]{32}) \(.*\) restarts in [0-9]+ ms after: (.*))"};
    for (size_t i = 0; i < events.size(); ++i) {
      auto& l = events[i];
      std::smatch m;
      if (l.at < from || l.at >= next_any || !std::regex_search(l.text, m, restarts)
          || !caused_by_a_fault(m[2]))
        continue;
      auto back = "job " + std::string{m[1]} + " (";
      for (size_t k = i + 1; k < events.size(); ++k)
        if (events[k].text.compare(0, back.size(), back) == 0
            && events[k].text.find("switched from RESTARTING to RUNNING")
                 != std::string::npos) {
          (x.kind == "kill" ? recovery_kill : recovery_stop)
            .push_back(to_ms(events[k].at - x.at));
          break;
        }
    }
  }
  int self_exits = 0;
  int reconnects = 0;
  for (auto& tm : c.tms) {
    self_exits += tm.self_exits;
    reconnects += static_cast<int>(
      count_of(c.tm_log(tm), "lost the jobmanager; reconnecting"));
  }
  size_t restarts_total = count_of(logs, " restarts in ");
  auto summary = fmt::format(
    "{{\"seed\": {}, \"elapsed_ms\": {}, \"jobs\": {}, \"wrong_results\": {}, "
    "\"tm_kills\": {}, \"tm_stops\": {}, \"jm_kills\": {}, "
    "\"job_restarts\": {}, \"tm_self_exits\": {}, \"tm_reconnects\": {}, "
    "\"undetected_faults\": {}, \"detect_kill_ms\": {}, \"detect_stop_ms\": {}, "
    "\"recovery_kill_ms\": {}, \"recovery_stop_ms\": {}, \"odd_restarts\": {}, "
    "\"jm_back_ms\": {}, \"jm_workers_back_ms\": {}, "
    "\"rescales\": {}, \"rescales_refused\": {}}}",
    seed, elapsed, jobs.size(), wrong, tm_kills, tm_stops, jm_kills,
    restarts_total, self_exits, reconnects, undetected, stats(detect_kill),
    stats(detect_stop), stats(recovery_kill), stats(recovery_stop),
    count_of(odd_restarts, "\n"), jm_back_ms.value_or(-1),
    jm_workers_ms.value_or(-1), rescales_done, rescales_refused);
  fmt::print(stderr, "chaos summary: {}\n", summary);
  MESSAGE("chaos summary: " << summary);
  CHECK(undetected == 0);
  CHECK(jm_kills == 1);
  CHECK(tm_kills + tm_stops >= chaos_length.count() / 6);
  CHECK(rescales_done >= 1);

  if (auto* keep = std::getenv("WEIR_CHAOS_LOG_DIR"); keep != nullptr && *keep) {
    std::filesystem::create_directories(keep);
    std::string index;
    for (auto& j : jobs)
      index += fmt::format("{} {} {} {}\n", j.id, j.name, j.state, j.spec);
    chaos_cluster::keep_file(keep, "jobs.txt", index);
    chaos_cluster::keep_file(keep, "list.txt", list.out);
  }
}
