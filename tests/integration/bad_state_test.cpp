// Bad state directories through the real binary: a corrupt record is
// reported by key and skipped while the rest recovers; a state directory that
// cannot be used (missing and not creatable, a file, read-only), one of
// another cluster id, and a full disk each give one clear line and exit code
// 3, and nothing already stored is lost.
//
// The mount-based cases (read-only file systems, a small tmpfs for the full
// disk) need root; they are skipped with a visible message otherwise.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "messages/errors.hpp"
#include "job_specs.hpp"
#include "process.hpp"
#include "storage/checkpoint_store.hpp"
#include "storage/detail/job_result_codec.hpp"
#include "storage/finish_job.hpp"
#include "storage/job_graph_store.hpp"
#include "storage/job_result_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/temporary_files.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

std::string weir_bin() {
  auto* bin = std::getenv("WEIR_BIN");
  return bin != nullptr ? bin : "build/cli/weir";
}

/// `text` with the characters that mean something in a regex escaped.
std::string regex_quoted(const std::string& text) {
  static const std::regex special{R"([.^$|()\[\]{}*+?\\])"};
  return std::regex_replace(text, special, R"(\$&)");
}

/// The event of a log line, without its "<timestamp> jobmanager: " prefix.
std::string event_of(const std::string& line) {
  static const std::string tag = " jobmanager: ";
  auto at = line.find(tag);
  return at == std::string::npos ? line : line.substr(at + tag.size());
}

/// The job id printed by `weir run` ("" when none).
std::string job_id_in(const std::string& err) {
  std::smatch m;
  if (std::regex_search(err, m,
                        std::regex{"submitted with JobID ([0-9a-f]{32})"}))
    return m[1];
  return {};
}

/// A mount that is undone (lazily) on destruction. Needs root.
class mount_point {
public:
  /// A tmpfs of `size` (e.g. "2m") on the directory `target`.
  static std::unique_ptr<mount_point> tmpfs(const std::string& target,
                                            const std::string& size,
                                            bool read_only,
                                            std::string& problem) {
    unsigned long flags = read_only ? MS_RDONLY : 0;
    auto data = "size=" + size;
    if (::mount("tmpfs", target.c_str(), "tmpfs", flags, data.c_str()) != 0) {
      problem = std::string{"mount -t tmpfs: "} + std::strerror(errno);
      return nullptr;
    }
    return std::unique_ptr<mount_point>{new mount_point(target)};
  }

  /// `source` visible read-only at the directory `target`.
  static std::unique_ptr<mount_point> read_only_bind(const std::string& source,
                                                     const std::string& target,
                                                     std::string& problem) {
    if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr)
        != 0) {
      problem = std::string{"mount --bind: "} + std::strerror(errno);
      return nullptr;
    }
    std::unique_ptr<mount_point> result{new mount_point(target)};
    if (::mount(nullptr, target.c_str(), nullptr,
                MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr)
        != 0) {
      problem = std::string{"mount -o remount,bind,ro: "}
                + std::strerror(errno);
      return nullptr;
    }
    return result;
  }

  ~mount_point() {
    ::umount2(target_.c_str(), MNT_DETACH);
  }

  mount_point(const mount_point&) = delete;
  mount_point& operator=(const mount_point&) = delete;

private:
  explicit mount_point(std::string target) : target_(std::move(target)) {
    // nop
  }

  std::string target_;
};

/// Whether the mount-based cases can run; says why not otherwise.
bool can_mount() {
  if (geteuid() != 0) {
    MESSAGE("SKIPPED: mounting a read-only file system or a small tmpfs "
            "needs root");
    return false;
  }
  return true;
}

std::string make_dir(const std::string& path) {
  std::filesystem::create_directories(path);
  return path;
}

/// Writes zeros to `path` until the file system is full; returns the errno
/// of the write that failed (ENOSPC expected).
int fill_up(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  std::vector<char> block(64 * 1024, 0);
  int err = 0;
  for (;;) {
    auto n = ::write(fd, block.data(), block.size());
    if (n < 0) {
      err = errno;
      break;
    }
  }
  ::close(fd);
  return err;
}

/// A `weir jobmanager` on a free port and one `weir taskmanager`, with the
/// same extra flags (say, a cluster id); both stopped with SIGTERM on
/// destruction.
struct session {
  std::unique_ptr<running_process> jobmanager;
  std::unique_ptr<running_process> worker;
  /// The RPC port's address (the worker's) and the REST API's (clients').
  std::string address;
  std::string rest;
  std::vector<std::string> extra;

  explicit session(const std::string& state_dir,
                   std::vector<std::string> flags = {})
    : extra(std::move(flags)) {
    std::vector<std::string> cmd{weir_bin(),    "jobmanager", "--port", "0",
                                 "--state-dir", state_dir, any_rest_port};
    cmd.insert(cmd.end(), extra.begin(), extra.end());
    jobmanager = std::make_unique<running_process>(cmd);
    address = listening_address(*jobmanager);
    REQUIRE_MESSAGE(!address.empty(), jobmanager->stderr_so_far());
    rest = rest_address(*jobmanager);
    std::vector<std::string> tm{weir_bin(), "taskmanager", "-m", address,
                                "--slots", "2", "--id", "tm-1"};
    tm.insert(tm.end(), extra.begin(), extra.end());
    worker = std::make_unique<running_process>(tm);
    REQUIRE(jobmanager->wait_for_stderr("TaskExecutor tm-1 registered", 30s));
  }

  ~session() {
    stop();
  }

  /// Stops both processes; the jobmanager's exit code (0 after SIGTERM, -1
  /// when it died of a signal).
  int stop() {
    if (!jobmanager)
      return -1;
    worker->signal(SIGTERM);
    worker->finish(30s);
    jobmanager->signal(SIGTERM);
    auto code = jobmanager->finish(30s).exit_code;
    jobmanager.reset();
    return code;
  }

  process_result client(std::vector<std::string> args) {
    args.insert(args.begin() + 1, {"-m", rest});
    args.insert(args.end(), extra.begin(), extra.end());
    return run_weir(args, 60s);
  }
};

/// Runs `weir jobmanager` on `state_dir` expecting it to refuse to start.
process_result refused_jobmanager(const std::string& state_dir,
                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"jobmanager", "--port", "0", "--state-dir",
                                state_dir};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_weir(args, 30s);
}

/// Checks that `weir jobmanager` and `weir run` on `state_dir` both exit 3
/// with one line: `<problem>` after their prefixes.
void check_refused(const std::string& state_dir, const std::string& problem) {
  auto jm = refused_jobmanager(state_dir);
  CHECK(jm.exit_code == 3);
  auto jm_lines = lines_of(jm.err);
  REQUIRE(jm_lines.size() == 1);
  CHECK(event_of(jm_lines[0])
        == "cannot open the state directory: " + problem);
  auto run = run_weir({"run", "examples/collect.json", "--to", "6",
                       "--state-dir", state_dir},
                      60s);
  CHECK(run.exit_code == 3);
  CHECK(run.out.empty());
  CHECK(run.err == "weir run: cannot start the local cluster: " + problem
                     + "\n");
}

} // namespace

TEST_CASE("a corrupt job-graph record is reported by key and the rest "
          "recover") {
  temp_dir dir;
  auto state = dir.file("state");
  auto unfinished = evens_graph(100);
  auto corrupt_key = std::string(32, 'f');
  {
    auto kv = storage::open_rocksdb_store(state);
    REQUIRE(kv);
    REQUIRE_FALSE(storage::job_graph_store{**kv}.put(unfinished));
    REQUIRE_FALSE((*kv)->put(storage::column::job_graphs, corrupt_key,
                             "{not json", storage::durability::synced));
    REQUIRE_FALSE((*kv)->put(storage::column::job_graphs, "not-a-job-id",
                             "{}", storage::durability::synced));
  }
  {
    session s{state};
    CHECK(s.jobmanager->wait_for_stderr(
      "(evens) switched from RUNNING to FINISHED", 60s));
    auto& log = s.jobmanager->stderr_so_far();
    CHECK(log.find("weir: recovery skipped a record: job_graphs/" + corrupt_key
                   + ": invalid JSON at byte 3\n")
          != std::string::npos);
    CHECK(log.find("weir: recovery skipped a record: job_graphs/not-a-job-id: "
                   "key is not a job id\n")
          != std::string::npos);
    // The job whose graph is damaged fails alone, its cause in the list.
    CHECK(log.find("weir: job " + corrupt_key + " cannot be recovered: "
                   "job_graphs/" + corrupt_key + ": invalid JSON at byte 3\n")
          != std::string::npos);
    auto failed = s.client({"status", corrupt_key});
    CHECK(failed.out.find("FAILED") != std::string::npos);
    CHECK(failed.out.find("the stored job graph cannot be read: job_graphs/"
                          + corrupt_key + ": invalid JSON at byte 3")
          != std::string::npos);
    CHECK(log.find("job " + unfinished.id.to_string() + " (evens) recovered")
          != std::string::npos);
    // The subtasks' FINISHED comes before the Dispatcher has the result:
    // wait for the result itself.
    auto waited = s.client({"wait", unfinished.id.to_string()});
    INFO("weir wait said: " << waited.err);
    CHECK(waited.exit_code == 0);
    auto list = s.client({"list", "-a"});
    CHECK(list.exit_code == 0);
    CHECK(list.out.find(" : " + unfinished.id.to_string()
                        + " : evens (FINISHED) ")
          != std::string::npos);
    CHECK(s.stop() == 0);
  }
  // The recovered job has a clean result; the skipped records are still
  // there for an operator to look at (recovery never deletes them).
  auto kv = storage::open_rocksdb_store(state);
  REQUIRE(kv);
  auto entry = storage::job_result_store{**kv}.get(unfinished.id);
  REQUIRE(entry);
  REQUIRE(entry->has_value());
  CHECK((*entry)->result.state == job_state::finished);
  CHECK(row_count((*entry)->result.collected) == 50);
  CHECK_FALSE((*entry)->dirty);
  auto bad = (*kv)->get(storage::column::job_graphs, corrupt_key);
  REQUIRE(bad);
  CHECK(*bad == std::optional<std::string>{"{not json"});
  // Its FAILED result is stored (clean): the next start does not try again.
  auto failed = storage::job_result_store{**kv}.get(*job_id::parse(corrupt_key));
  REQUIRE(failed);
  REQUIRE(failed->has_value());
  CHECK((*failed)->result.state == job_state::failed);
  CHECK_FALSE((*failed)->dirty);
  kv->reset();
  session again{state};
  auto list = again.client({"list", "-a"});
  CHECK(list.out.find(" : " + corrupt_key + " : (unreadable) (FAILED) ")
        != std::string::npos);
  CHECK(again.jobmanager->stderr_so_far().find("cannot be recovered")
        == std::string::npos);
  CHECK(again.stop() == 0);
}

TEST_CASE("a state directory that cannot be created or is a file: one line, "
          "exit 3") {
  temp_dir dir;
  auto file = dir.write("plain-file", "x");
  SUBCASE("its parent is a regular file") {
    check_refused(file + "/state",
                  file + "/state: cannot create directory: Not a directory");
  }
  SUBCASE("it is a regular file") {
    check_refused(file, file + ": cannot create directory: Not a directory");
    CHECK(read_file(file) == "x");
  }
}

TEST_CASE("a state directory on a read-only file system: one line, exit 3, "
          "nothing lost") {
  if (!can_mount())
    return;
  temp_dir dir;
  // A fresh read-only tmpfs, or nothing (with a visible SKIPPED message)
  // where this machine cannot mount one.
  auto read_only_tmpfs = [](const std::string& at) {
    std::string problem;
    auto m = mount_point::tmpfs(at, "1m", true, problem);
    if (!m)
      MESSAGE("SKIPPED: " << problem);
    return m;
  };
  SUBCASE("missing, under a read-only mount") {
    auto ro = make_dir(dir.file("ro"));
    auto m = read_only_tmpfs(ro);
    if (!m)
      return;
    check_refused(ro + "/a/state", ro + "/a/state: cannot create directory: "
                                        "Read-only file system");
  }
  SUBCASE("an empty directory on a read-only mount") {
    auto ro = make_dir(dir.file("ro"));
    auto m = read_only_tmpfs(ro);
    if (!m)
      return;
    check_refused(ro, ro + ": cannot open store: IO error: While open a file "
                           "for appending: "
                        + ro + "/LOG: Read-only file system");
  }
  SUBCASE("a state directory with a finished job, mounted read-only") {
    // rocksdb_store_locked() must not take the unwritable LOCK file for
    // another leader's: the jobmanager would wait as a standby forever.
    auto state = dir.file("state");
    auto first = run_weir({"run", "examples/collect.json", "--to", "6",
                           "--state-dir", state});
    REQUIRE(first.exit_code == 0);
    auto id = job_id_in(first.err);
    REQUIRE_FALSE(id.empty());
    auto ro = make_dir(dir.file("ro"));
    std::string problem;
    auto m = mount_point::read_only_bind(state, ro, problem);
    if (!m) {
      MESSAGE("SKIPPED: " << problem);
      return;
    }
    // RocksDB first moves the old info LOG aside: LOG.old.<microseconds>.
    auto expected
      = regex_quoted(ro)
        + ": cannot open store: IO error: While renaming a file to "
        + regex_quoted(ro) + "/LOG\\.old\\.[0-9]+: " + regex_quoted(ro)
        + "/LOG: Read-only file system";
    auto jm = refused_jobmanager(ro);
    CHECK(jm.exit_code == 3);
    auto jm_lines = lines_of(jm.err);
    REQUIRE(jm_lines.size() == 1);
    CHECK_MESSAGE(std::regex_match(event_of(jm_lines[0]),
                                   std::regex{"cannot open the state "
                                              "directory: "
                                              + expected}),
                  jm_lines[0]);
    auto run = run_weir({"run", "examples/collect.json", "--to", "6",
                         "--state-dir", ro});
    CHECK(run.exit_code == 3);
    CHECK(run.out.empty());
    CHECK_MESSAGE(std::regex_match(run.err,
                                   std::regex{"weir run: cannot start the "
                                              "local cluster: "
                                              + expected + "\n"}),
                  run.err);
    m.reset();
    // Writable again: the finished job is still there.
    auto kv = storage::open_rocksdb_store(state);
    REQUIRE(kv);
    auto results = storage::job_result_store{**kv}.load_all();
    REQUIRE(results);
    CHECK(results->problems.empty());
    REQUIRE(results->entries.size() == 1);
    CHECK(results->entries[0].result.id.to_string() == id);
    CHECK(results->entries[0].result.state == job_state::finished);
  }
}

// storage::claim_state_dir, as called by run_jobmanager and `weir run`.
TEST_CASE("a state directory of another cluster id is refused, and kept") {
  temp_dir dir;
  auto state = dir.file("state");
  std::string id;
  {
    session s{state, {"-Dhigh-availability.cluster-id=a"}};
    auto r = s.client({"run", "examples/collect.json", "--to", "6"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "2\n4\n6\n");
    id = job_id_in(r.err);
    REQUIRE_FALSE(id.empty());
    CHECK(s.stop() == 0);
  }
  auto refusal
    = state + " belongs to cluster 'a', not 'b' (high-availability.cluster-id)";
  auto jm = refused_jobmanager(state, {"-Dhigh-availability.cluster-id=b"});
  CHECK(jm.exit_code == 3);
  auto jm_lines = lines_of(jm.err);
  REQUIRE(jm_lines.size() == 1);
  CHECK(event_of(jm_lines[0]) == "cannot open the state directory: " + refusal);
  auto run = run_weir({"run", "examples/collect.json", "--to", "6",
                       "--state-dir", state,
                       "-Dhigh-availability.cluster-id=b"});
  CHECK(run.exit_code == 3);
  CHECK(run.out.empty());
  CHECK(run.err == "weir run: cannot start the local cluster: " + refusal
                     + "\n");
  // Without the key, the cluster id is "default".
  auto plain = run_weir({"run", "examples/collect.json", "--to", "6",
                         "--state-dir", state});
  CHECK(plain.exit_code == 3);
  CHECK(plain.err == "weir run: cannot start the local cluster: " + state
                       + " belongs to cluster 'a', not 'default' "
                         "(high-availability.cluster-id)\n");
  // The owner finds its finished job.
  session s{state, {"-Dhigh-availability.cluster-id=a"}};
  auto list = s.client({"list", "-a"});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find(" : " + id + " : collect (FINISHED) ")
        != std::string::npos);
  CHECK(s.stop() == 0);
}

// weir's own RocksDB info logger (storage/rocksdb_store.cpp): with RocksDB
// 7.8's, the jobmanager aborts on the second write to its info LOG after
// the disk filled up.
TEST_CASE("a full disk: submissions fail with one line, the jobmanager serves "
          "on, nothing stored is lost") {
  if (!can_mount())
    return;
  temp_dir dir;
  auto disk = make_dir(dir.file("disk"));
  std::string problem;
  auto m = mount_point::tmpfs(disk, "2m", false, problem);
  if (!m) {
    MESSAGE("SKIPPED: " << problem);
    return;
  }
  auto state = disk + "/state";
  auto filler = disk + "/filler";
  // A job graph larger than a memory page: storing it needs new space
  // (30 vertices with ids of 200 bytes; names may not be longer than 256).
  std::string vertices, edges, previous = "numbers";
  for (int i = 0; i < 30; ++i) {
    auto id = "pad" + std::to_string(i) + std::string(200, 'x');
    vertices += R"({"id": ")" + id
                + R"(", "operator": "map", "params": {"function": "identity"}},)";
    edges += R"({"from": ")" + previous + R"(", "to": ")" + id + R"("},)";
    previous = id;
  }
  auto big = dir.write("big.json", R"({"name": "big",
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 4}},
      )" + vertices + R"(
      {"id": "result", "operator": "collect"}],
    "edges": [)" + edges + R"({"from": ")" + previous
                                     + R"(", "to": "result"}]})");
  std::string first;
  {
    session s{state};
    auto ok = s.client({"run", "examples/collect.json", "--to", "6"});
    REQUIRE(ok.exit_code == 0);
    CHECK(ok.out == "2\n4\n6\n");
    first = job_id_in(ok.err);
    REQUIRE_FALSE(first.empty());
    REQUIRE(fill_up(filler) == ENOSPC);
    auto full = std::regex{
      "weir run: job rejected: could not store the job: " + regex_quoted(state)
      + ": put job_graphs/[0-9a-f]{32}: IO error: No space left on device: "
        "While appending to file: "
      // The write-ahead log, or a table file when the flush after the first
      // job's result (in the background) was the write that hit the limit.
      + regex_quoted(state)
      + "/[0-9]+\\.(log|sst): No space left on device\n"};
    auto rejected = s.client({"run", big});
    CHECK(rejected.exit_code == 3);
    CHECK(rejected.out.empty());
    CHECK_MESSAGE(std::regex_match(rejected.err, full), rejected.err);
    // RocksDB stops writing after the failed write (a hard background
    // error): a small job is refused the same way, however little it needs.
    auto small = s.client({"run", "examples/collect.json", "--to", "6"});
    CHECK(small.exit_code == 3);
    CHECK_MESSAGE(std::regex_match(small.err, full), small.err);
    // The jobmanager serves on and still knows the first job.
    auto list = s.client({"list", "-a"});
    CHECK(list.exit_code == 0);
    CHECK(list.out.find(" : " + first + " : collect (FINISHED) ")
          != std::string::npos);
    CHECK(list.out.find(" : big (") == std::string::npos);
    std::filesystem::remove(filler);
    CHECK(s.stop() == 0); // -1 if it died of a signal (SIGABRT)
  }
  {
    // Space again and a restart: the first job is there, and the store
    // takes new jobs.
    session s{state};
    auto list = s.client({"list", "-a"});
    CHECK(list.exit_code == 0);
    CHECK(list.out.find(" : " + first + " : collect (FINISHED) ")
          != std::string::npos);
    auto again = s.client({"run", "examples/collect.json", "--to", "4"});
    CHECK(again.exit_code == 0);
    CHECK(again.out == "2\n4\n");
    CHECK(s.stop() == 0);
  }
  // Nothing is corrupt: every record reads, no job is left half stored.
  auto kv = storage::open_rocksdb_store(state);
  REQUIRE(kv);
  auto graphs = storage::job_graph_store{**kv}.load_all();
  REQUIRE(graphs);
  CHECK(graphs->problems.empty());
  CHECK(graphs->graphs.empty());
  auto results = storage::job_result_store{**kv}.load_all();
  REQUIRE(results);
  CHECK(results->problems.empty());
  REQUIRE(results->entries.size() == 2);
  for (auto& e : results->entries) {
    CHECK(e.result.state == job_state::finished);
    CHECK_FALSE(e.dirty);
  }
}

namespace {

/// Overwrites the first `what` in the file at `path` with as many 'X' (a
/// few flipped bytes in the middle of it); false when `what` is not there.
bool damage(const std::string& path, const std::string& what) {
  auto bytes = read_file(path);
  auto at = bytes.find(what);
  if (at == std::string::npos)
    return false;
  bytes.replace(at, what.size(), std::string(what.size(), 'X'));
  std::ofstream{path, std::ios::binary | std::ios::trunc} << bytes;
  return true;
}

/// The files of `dir` whose names end with `suffix`.
std::vector<std::string> files_ending(const std::string& dir,
                                      const std::string& suffix) {
  std::vector<std::string> found;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    auto name = e.path().filename().string();
    if (name.size() > suffix.size()
        && name.compare(name.size() - suffix.size(), suffix.size(), suffix)
             == 0)
      found.push_back(e.path().string());
  }
  return found;
}

/// Stores `g` and then its result as the Dispatcher does (graph, dirty
/// result, then one batch: graph removed, result clean).
/// Stores `g` and its end with finish_job's writes, which stay in the
/// write-ahead log (the jobmanager's store flushes them into a table file
/// next): the log these tests damage, as an older weir, or a crash before
/// the flush, leaves it.
void store_ended(storage::kv_store& kv, const job_graph& g, job_state s) {
  REQUIRE_FALSE(storage::job_graph_store{kv}.put(g));
  job_result r;
  r.id = g.id;
  r.name = g.name;
  r.state = s;
  auto key = g.id.to_string();
  REQUIRE_FALSE(kv.put(storage::column::job_results, key,
                       storage::detail::encode_job_result(r, true),
                       storage::durability::synced));
  storage::write_batch done;
  done.remove(storage::column::job_graphs, key);
  done.put(storage::column::job_results, key,
           storage::detail::encode_job_result(r, false));
  REQUIRE_FALSE(kv.write(done, storage::durability::synced));
}

} // namespace

TEST_CASE("bytes flipped in the middle of the write-ahead log: the "
          "jobmanager refuses to start naming the file; repair-state drops "
          "the damaged record alone and says what it held") {
  temp_dir dir;
  auto state = dir.file("state");
  auto running = evens_graph(10);
  auto canceled = evens_graph(10);
  canceled.name = "canceled-job";
  auto finished = evens_graph(10);
  finished.name = "finished-job";
  {
    auto kv = storage::open_rocksdb_store(state);
    REQUIRE(kv);
    REQUIRE_FALSE(storage::job_graph_store{**kv}.put(running));
    store_ended(**kv, canceled, job_state::canceled);
    store_ended(**kv, finished, job_state::finished);
  }
  auto logs = files_ending(state, ".log");
  REQUIRE(logs.size() == 1);
  auto wal = logs[0];
  // The first record naming the canceled job's result: its dirty result.
  REQUIRE(damage(wal, "\"CANCELED\""));
  auto damaged = read_file(wal);

  // Before: the jobmanager started without a word, the canceled job ran
  // again and the finished one was gone.
  auto refused = refused_jobmanager(state);
  CHECK(refused.exit_code == 3);
  auto lines = lines_of(refused.err);
  REQUIRE(lines.size() == 1);
  auto expected = std::regex{
    "cannot open the state directory: " + regex_quoted(state)
    + ": damaged write-ahead log " + regex_quoted(wal)
    + ": the record at byte [0-9]+ \\([0-9]+ bytes\\): checksum mismatch; "
      "weir repair-state --state-dir "
    + regex_quoted(state) + " drops what is damaged and reports it"};
  CHECK_MESSAGE(std::regex_match(event_of(lines[0]), expected), lines[0]);

  auto said = "put job_results/" + canceled.id.to_string()
              + " (a later write of it is kept)";
  auto dry = run_weir({"repair-state", "--state-dir", state, "--dry-run"},
                      60s);
  CHECK(dry.exit_code == 0);
  CHECK_MESSAGE(dry.out.find(state + ": would drop 1 damaged write-ahead log "
                                     "record:\n  " + wal + " bytes ")
                  != std::string::npos,
                dry.out);
  CHECK(dry.out.find(said) != std::string::npos);
  CHECK(read_file(wal) == damaged); // a dry run changes nothing

  auto repaired = run_weir({"repair-state", "--state-dir", state}, 60s);
  CHECK(repaired.exit_code == 0);
  CHECK_MESSAGE(repaired.out.find(state + ": dropped 1 damaged write-ahead "
                                          "log record:\n")
                  != std::string::npos,
                repaired.out);
  CHECK(repaired.out.find(said) != std::string::npos);
  CHECK(repaired.out.find("The damaged files are kept unchanged in " + state
                          + "/lost.\n")
        != std::string::npos);
  CHECK(std::filesystem::exists(state + "/lost/"
                                + std::filesystem::path{wal}.filename()
                                    .string()));
  auto again = run_weir({"repair-state", "--state-dir", state}, 60s);
  CHECK(again.exit_code == 0);
  CHECK(again.out == state + ": nothing is damaged\n");

  // Everything but the damaged record is there, the records after it too.
  auto kv = storage::open_rocksdb_store(state);
  REQUIRE(kv);
  auto graphs = storage::job_graph_store{**kv}.load_all();
  REQUIRE(graphs);
  REQUIRE(graphs->graphs.size() == 1);
  CHECK(graphs->graphs[0].id == running.id);
  for (auto* g : {&canceled, &finished}) {
    auto entry = storage::job_result_store{**kv}.get(g->id);
    REQUIRE(entry);
    REQUIRE(entry->has_value());
    CHECK((*entry)->result.state
          == (g == &canceled ? job_state::canceled : job_state::finished));
    CHECK_FALSE((*entry)->dirty);
  }
}

TEST_CASE("a damaged table file of job_results: one line naming it, exit 3, "
          "no restart loop") {
  temp_dir dir;
  auto state = dir.file("state");
  auto finished = evens_graph(10);
  {
    auto kv = storage::open_rocksdb_store(state);
    REQUIRE(kv);
    store_ended(**kv, finished, job_state::finished);
  }
  {
    // Opening again writes the log's records to table files.
    auto kv = storage::open_rocksdb_store(state);
    REQUIRE(kv);
  }
  auto tables = files_ending(state, ".sst");
  REQUIRE_FALSE(tables.empty());
  for (auto& t : tables) {
    // A few bytes of the first data block.
    std::fstream f{t, std::ios::binary | std::ios::in | std::ios::out};
    f.seekp(10);
    f.write("XXXX", 4);
  }
  auto refused = refused_jobmanager(state);
  CHECK(refused.exit_code == 3);
  auto lines = lines_of(refused.err);
  REQUIRE_MESSAGE(lines.size() == 1, refused.err);
  auto expected = std::regex{
    "cannot open the state directory: " + regex_quoted(state)
    + ": cannot open store: Corruption: block checksum mismatch: .* in "
    + regex_quoted(state)
    + "/[0-9]+\\.sst offset [0-9]+ size [0-9]+; a damaged table file: "
      "restore the state directory from a backup"};
  CHECK_MESSAGE(std::regex_match(event_of(lines[0]), expected), lines[0]);
}

TEST_CASE("a master killed or stopped while weir stop waits for its "
          "savepoint: the client ends at once with exit 3 and the hint") {
  temp_dir dir;
  auto state = dir.file("state");
  session s{state};
  // A sink (not chained to the source) that takes 5 s a batch: once the
  // source has sent a batch, a savepoint's barrier waits behind it.
  auto spec = dir.write("slow.json", R"({"name": "slow",
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 1000}},
      {"id": "out", "operator": "discard", "params": {"delay_ms": 5000}}],
    "edges": [{"from": "events", "to": "out", "partitioning": "rebalance"}]})");
  auto submitted = s.client({"run", "-d", spec});
  REQUIRE(submitted.exit_code == 0);
  auto id = lines_of(submitted.out).back();
  auto deadline = std::chrono::steady_clock::now() + 30s;
  bool sent = false;
  while (!sent && std::chrono::steady_clock::now() < deadline) {
    auto status = s.client({"status", id});
    sent = status.out.find("Records: ") != std::string::npos
           && status.out.find("Records: 0 in") == std::string::npos;
  }
  REQUIRE(sent);
  running_process client{{weir_bin(), "stop", "-m", s.rest, id,
                          "--savepointPath", dir.file("savepoints")}};
  // Printed once connected, just before the request goes out.
  REQUIRE(client.wait_for_stdout("Suspending job", 30s));
  SUBCASE("killed") {
    s.jobmanager->signal(SIGKILL);
  }
  SUBCASE("stopped") {
    s.jobmanager->signal(SIGSTOP);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto done = client.finish(60s);
  auto took = std::chrono::steady_clock::now() - t0;
  MESSAGE("the client ended after "
          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
          << " ms");
  CHECK(done.exit_code == 3);
  CHECK_MESSAGE(done.err.find("weir stop: cannot reach the jobmanager's REST "
                              "API at http://" + s.rest + ": ")
                  == 0,
                done.err);
  CHECK(done.err.find("a restarted jobmanager recovers the job: weir status "
                      "-m " + s.rest + " " + id + "\n")
        != std::string::npos);
  // The client polls the savepoint (3 s per answer); it used to wait for
  // 10 minutes.
  CHECK(took < 10s);
  s.jobmanager->signal(SIGCONT);
  s.jobmanager->signal(SIGKILL);
  s.jobmanager->finish(30s);
  s.jobmanager.reset();
  s.worker->signal(SIGKILL);
}

TEST_CASE("a savepoint's or checkpoint's temporary file left by a killed "
          "jobmanager is removed at the next start") {
  temp_dir dir;
  auto state = dir.file("state");
  std::filesystem::create_directories(dir.file("savepoints"));
  auto stale = dir.write("savepoints/savepoint-x-1.tmp", "half written");
  auto job = job_id::random();
  auto job_dir = state + "/checkpoints/" + job.to_string();
  std::string stale_checkpoint;
  {
    // What a jobmanager killed while writing leaves behind: a noted
    // savepoint file, a checkpoint file of a job with stored checkpoints.
    auto kv = storage::open_rocksdb_store(state);
    REQUIRE(kv);
    REQUIRE_FALSE(storage::temporary_files{**kv}.begin(stale));
    checkpoint_snapshot cp;
    cp.id = 1;
    REQUIRE(storage::checkpoint_store{**kv, state + "/checkpoints"}.put(job, cp,
                                                                      1));
    stale_checkpoint = job_dir + "/chk-2.tmp";
    std::ofstream{stale_checkpoint} << "half written";
  }
  session s{state};
  for (auto& f : {stale, stale_checkpoint}) {
    CHECK(s.jobmanager->wait_for_stderr("removed the temporary file " + f
                                          + " of a write that did not "
                                            "complete",
                                        30s));
    CHECK_FALSE(std::filesystem::exists(f));
  }
  CHECK(std::filesystem::exists(job_dir + "/chk-1"));
  CHECK(s.stop() == 0);
}

namespace {

/// Runs a collect job to its end on the embedded cluster with state
/// directory `state`; its id.
std::string finished_job(const std::string& state) {
  auto done = run_weir({"run", "examples/collect.json", "--to", "4",
                        "--state-dir", state},
                       60s);
  REQUIRE(done.exit_code == 0);
  auto id_at = done.err.find("JobID ");
  REQUIRE(id_at != std::string::npos);
  return done.err.substr(id_at + 6, 32);
}

/// The names of the files under `dir`, with their sizes.
std::map<std::string, uintmax_t> files_of(const std::string& dir) {
  std::map<std::string, uintmax_t> out;
  for (auto& e : std::filesystem::directory_iterator{dir})
    out[e.path().filename().string()]
      = e.is_regular_file() ? e.file_size() : 0;
  return out;
}

} // namespace

TEST_CASE("a state directory without CURRENT is refused untouched, and "
          "repair-state salvages it with RocksDB's RepairDB") {
  temp_dir dir;
  auto state = dir.file("state");
  auto id = finished_job(state);
  std::filesystem::remove(state + "/CURRENT");
  auto before = files_of(state);
  auto problem = state + ": RocksDB's CURRENT file is missing, though the "
                         "store's other files are there";
  auto jm = refused_jobmanager(state);
  CHECK(jm.exit_code == 3);
  CHECK(jm.err.find(problem + "; nothing was changed: restore the state "
                              "directory from a backup, or salvage its table "
                              "files with weir repair-state --state-dir "
                    + state)
        != std::string::npos);
  CHECK(files_of(state) == before); // no new CURRENT, MANIFEST or LOG
  auto dry = run_weir({"repair-state", "--dry-run", "--state-dir", state}, 60s);
  CHECK(dry.exit_code == 0);
  CHECK(dry.out == state + ": RocksDB's CURRENT file is missing, though the "
                           "store's other files are there: would rebuild "
                           "CURRENT and the MANIFEST from the table files and "
                           "logs with RocksDB's RepairDB\n");
  CHECK(files_of(state) == before);
  auto fix = run_weir({"repair-state", "--state-dir", state}, 60s);
  CHECK(fix.exit_code == 0);
  CHECK(fix.out.find("rebuilt CURRENT and the MANIFEST") != std::string::npos);
  CHECK(std::filesystem::exists(state + "/lost"));
  // The finished job's result is back: it is not run again.
  session s{state};
  auto list = s.client({"list", "-a"});
  CHECK(list.out.find(" : " + id + " : collect (FINISHED) ")
        != std::string::npos);
  CHECK(s.stop() == 0);
}

TEST_CASE("a finished job's result outlives a lost write-ahead log") {
  temp_dir dir;
  auto state = dir.file("state");
  auto id = finished_job(state);
  for (auto& [name, size] : files_of(state))
    if (std::filesystem::path{name}.extension() == ".log")
      std::filesystem::remove(state + "/" + name);
  session s{state};
  auto list = s.client({"list", "-a"});
  CHECK(list.out.find(" : " + id + " : collect (FINISHED) ")
        != std::string::npos);
  CHECK(s.stop() == 0);
}

TEST_CASE("a damaged MANIFEST is named with what works: a backup or "
          "RocksDB's RepairDB, which repair-state runs") {
  temp_dir dir;
  auto state = dir.file("state");
  auto id = finished_job(state);
  std::string manifest;
  for (auto& [name, size] : files_of(state))
    if (name.rfind("MANIFEST-", 0) == 0)
      manifest = state + "/" + name;
  REQUIRE_FALSE(manifest.empty());
  {
    std::fstream f{manifest, std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(20);
    f.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
  }
  auto jm = refused_jobmanager(state);
  CHECK(jm.exit_code == 3);
  CHECK(jm.err.find("restore the state directory from a backup, or salvage "
                    "its table files with weir repair-state --state-dir "
                    + state)
        != std::string::npos);
  auto fix = run_weir({"repair-state", "--state-dir", state}, 60s);
  CHECK(fix.exit_code == 0);
  CHECK(fix.out.find("its MANIFEST is damaged: rebuilt CURRENT and the "
                     "MANIFEST")
        != std::string::npos);
  session s{state};
  auto list = s.client({"list", "-a"});
  CHECK(list.out.find(" : " + id + " : collect (FINISHED) ")
        != std::string::npos);
  CHECK(s.stop() == 0);
}

TEST_CASE("a canceled job stays canceled when the write-ahead log is cut at "
          "a record boundary") {
  temp_dir dir;
  auto state = dir.file("state");
  auto spec = dir.write("forever.json", R"({
    "name": "forever", "parallelism": 1,
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 100}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink"}]})");
  std::string id;
  {
    session s{state};
    auto run = s.client({"run", "-d", spec});
    REQUIRE(run.exit_code == 0);
    id = run.out.substr(0, 32);
    REQUIRE(s.client({"cancel", id}).exit_code == 0);
    REQUIRE(s.client({"wait", id}).exit_code == 1); // ends CANCELED
    CHECK(s.stop() == 0);
  }
  // Cut every log to nothing: a boundary, no checksum can tell.
  for (auto& [name, size] : files_of(state))
    if (std::filesystem::path{name}.extension() == ".log")
      std::filesystem::resize_file(state + "/" + name, 0);
  session again{state};
  auto status = again.client({"status", id});
  CHECK(status.out.find(" : forever (CANCELED) ") != std::string::npos);
  CHECK(again.jobmanager->stderr_so_far().find("(forever) recovered")
        == std::string::npos);
  CHECK(again.stop() == 0);
}
