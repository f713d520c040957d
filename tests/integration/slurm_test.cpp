// Workers on demand from Slurm (resourcemanager.backend: slurm,
// docs/deployment.md § Slurm): a real one-node Slurm of the test's own
// (munged on a private socket and key, slurmctld, slurmd) runs an
// application cluster's taskmanagers as batch jobs.
#include <doctest/doctest.h>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "process.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

/// Whether `done()` holds before `deadline` (polled every 50 ms).
template <class Predicate>
bool within(std::chrono::seconds deadline, Predicate done) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until)
      return false;
    std::this_thread::sleep_for(50ms); // polling Slurm, with a deadline
  }
  return true;
}

/// `argv` run with `/bin/sh -c 'exec ... >FILE 2>&1'`: a daemon whose output
/// goes to a file (nobody reads its pipes while the test runs), its pid the
/// daemon's own.
std::vector<std::string> logged(const std::vector<std::string>& argv,
                                const std::string& file) {
  std::string line = "exec";
  for (auto& a : argv)
    line += " '" + a + "'";
  return {"/bin/sh", "-c", line + " >'" + file + "' 2>&1"};
}

/// A one-node Slurm cluster of this test's own in a temporary directory:
/// munged on a private socket with its own key, slurmctld and slurmd in the
/// foreground, SLURM_CONF pointing at its slurm.conf for every process the
/// test starts. `problem` says why there is none (Slurm's packages are
/// missing): the test is then skipped.
class one_node_slurm {
public:
  std::string problem;
  std::string conf;

  one_node_slurm() {
    if (::geteuid() != 0) {
      // munged runs as its own user, slurmd as root.
      problem = "a Slurm of the test's own needs root";
      return;
    }
    for (auto name : {"munged", "mungekey", "slurmctld", "slurmd", "sbatch",
                      "squeue", "scancel", "sinfo", "setpriv"})
      if (program(name).empty()) {
        problem = fmt::format("'{}' is missing (Debian's slurm-wlm and munge "
                              "packages: scripts/bootstrap installs them)",
                              name);
        return;
      }
    auto* munge = ::getpwnam("munge");
    if (munge == nullptr) {
      problem = "there is no user 'munge' (Debian's munge package)";
      return;
    }
    // munged, running as munge, must traverse the directory.
    fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_read
                                   | fs::perms::group_exec
                                   | fs::perms::others_read
                                   | fs::perms::others_exec);
    start_munged(munge->pw_uid, munge->pw_gid);
    write_conf();
    env_ = std::make_unique<scoped_env>("SLURM_CONF", conf);
    ctld_ = std::make_unique<running_process>(
      logged({program("slurmctld"), "-D", "-f", conf}, dir_.file("ctld.out")));
    slurmd_ = std::make_unique<running_process>(
      logged({program("slurmd"), "-D", "-f", conf}, dir_.file("d.out")));
    // Ready when the node is idle.
    auto idle = within(60s, [&] {
      auto r = run_process({program("sinfo"), "-h", "-o", "%T"}, 10s);
      return r.exit_code == 0 && r.out == "idle\n";
    });
    REQUIRE_MESSAGE(idle, "the Slurm node did not become idle:\n"
                            << read_file(dir_.file("ctld.out"))
                            << read_file(dir_.file("d.out")));
  }

  ~one_node_slurm() {
    if (!problem.empty())
      return;
    // Whatever a failed test left: cancelled, and gone before slurmd stops.
    auto active = [&] {
      return lines_of(
        run_process({program("squeue"), "--noheader", "-o", "%i"}, 10s).out);
    };
    if (auto left = active(); !left.empty()) {
      std::vector<std::string> cancel{program("scancel")};
      cancel.insert(cancel.end(), left.begin(), left.end());
      run_process(cancel, 10s);
      within(30s, [&] { return active().empty(); });
    }
    for (auto* p : {slurmd_.get(), ctld_.get(), munged_.get()})
      if (p != nullptr) {
        p->signal(SIGTERM);
        p->finish(30s);
      }
    // slurmstepd and the processes of jobs outlive slurmd: every process
    // started with this cluster's SLURM_CONF goes.
    kill_processes_with_env("SLURM_CONF=" + conf);
  }

  bool ready() const { return problem.empty(); }

  /// `squeue --noheader ARGS` (jobs in every active state by default);
  /// stdout.
  std::string squeue(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{program("squeue"), "--noheader"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_process(argv, 30s);
    REQUIRE_MESSAGE(r.exit_code == 0, "squeue: " << r.err);
    return r.out;
  }

  /// "NAME|STATE" of every job Slurm still knows, ended ones included.
  std::vector<std::string> all_jobs() const {
    return sorted_lines(squeue({"--states=all", "-o", "%j|%T"}));
  }

  /// Whether no job is pending, running or completing.
  bool idle() const { return squeue({"-o", "%i"}).empty(); }

  std::string program(const std::string& name) const {
    for (auto dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
      auto path = fmt::format("{}/{}", dir, name);
      if (::access(path.c_str(), X_OK) == 0)
        return path;
    }
    return on_path(name);
  }

private:
  temp_dir dir_;
  std::unique_ptr<scoped_env> env_;
  std::unique_ptr<running_process> munged_, ctld_, slurmd_;

  /// munged as user munge, its key and state in munge/ (0700), its socket
  /// in run/ (0755, as munged wants it).
  void start_munged(uid_t uid, gid_t gid) {
    auto state = dir_.file("munge"), run = dir_.file("run");
    fs::create_directories(state);
    fs::create_directories(run);
    auto key = state + "/munge.key";
    auto made = run_process({program("mungekey"), "-c", "-k", key}, 30s);
    REQUIRE_MESSAGE(made.exit_code == 0, "mungekey: " << made.err);
    for (auto& p : {state, run, key})
      REQUIRE(::chown(p.c_str(), uid, gid) == 0);
    ::chmod(state.c_str(), 0700);
    ::chmod(run.c_str(), 0755);
    socket_ = run + "/munge.sock";
    munged_ = std::make_unique<running_process>(logged(
      {program("setpriv"), "--reuid=munge", "--regid=munge", "--init-groups",
       program("munged"), "--foreground", "--socket=" + socket_,
       "--key-file=" + key, "--pid-file=" + run + "/munged.pid",
       "--log-file=" + state + "/munged.log",
       "--seed-file=" + state + "/munged.seed"},
      dir_.file("munged.out")));
    REQUIRE_MESSAGE(within(30s, [&] { return exists(socket_); }),
                    "munged did not start: "
                      << read_file(dir_.file("munged.out")));
  }

  /// slurm.conf: this host as the one node with half its memory, free
  /// ports, state under the directory. The node declares at least 4 CPUs
  /// (config_overrides: slurmd takes the configuration's word): a driver's
  /// worker and a job of parallelism 2 take 3 one-CPU worker jobs, more than
  /// a 2-core machine has.
  void write_conf() {
    char host[256] = "localhost";
    ::gethostname(host, sizeof(host) - 1);
    std::string node = host;
    node = node.substr(0, node.find('.'));
    auto cpus = std::max(4L, ::sysconf(_SC_NPROCESSORS_ONLN));
    auto memory_mb = ::sysconf(_SC_PHYS_PAGES) / 1024 * ::sysconf(_SC_PAGESIZE)
                     / 1024 / 2;
    auto ctld_port = free_port(), d_port = free_port();
    REQUIRE(ctld_port != 0);
    REQUIRE(d_port != 0);
    fs::create_directories(dir_.file("state"));
    fs::create_directories(dir_.file("spool"));
    conf = dir_.write("slurm.conf", fmt::format(R"(ClusterName=weirtest
SlurmctldHost={node}
SlurmUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/ctld.pid
SlurmdPidFile={dir}/d.pid
SlurmctldLogFile={dir}/ctld.log
SlurmdLogFile={dir}/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
KillWait=5
SlurmdParameters=config_overrides
NodeName={node} CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
)",
                                                fmt::arg("node", node),
                                                fmt::arg("ctld_port", ctld_port),
                                                fmt::arg("d_port", d_port),
                                                fmt::arg("socket", socket_),
                                                fmt::arg("dir", dir_.path()),
                                                fmt::arg("cpus", cpus),
                                                fmt::arg("memory", memory_mb)));
  }

  /// SIGKILL to every process (but this one) whose environment has
  /// `entry`.
  static void kill_processes_with_env(const std::string& entry) {
    std::error_code ec;
    for (auto& e : fs::directory_iterator("/proc", ec)) {
      auto name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos
          || std::stoi(name) == ::getpid())
        continue;
      auto env = read_file((e.path() / "environ").string());
      std::replace(env.begin(), env.end(), '\0', '\n');
      if (("\n" + env).find("\n" + entry + "\n") != std::string::npos)
        ::kill(std::stoi(name), SIGKILL);
    }
  }

  std::string socket_;
};

/// Skips the test (visibly) when the machine has no Slurm.
#define REQUIRE_SLURM(slurm)                                                   \
  if (!(slurm).ready()) {                                                      \
    MESSAGE("SKIPPED: " << (slurm).problem);                                   \
    return;                                                                    \
  }

std::string test_drivers() {
  return test_plugin("drivers");
}

/// The jobmanager.log of the one application cluster under `tmp` ("" while
/// there is none).
std::string app_log(const temp_dir& tmp) {
  std::error_code ec;
  for (auto& e : fs::directory_iterator(tmp.path(), ec))
    if (e.path().filename().string().rfind("weir-app-", 0) == 0)
      return read_file((e.path() / "logs" / "jobmanager.log").string());
  return {};
}

/// The Slurm job id the log names for `worker` ("" when none).
std::string slurm_job_of(const std::string& log, const std::string& worker) {
  std::smatch m;
  if (std::regex_search(log, m, std::regex{"started worker " + worker
                                           + R"( \(Slurm job (\d+)\))"}))
    return m[1];
  return {};
}

/// The configuration every case's application cluster gets: Slurm workers
/// of 256 MB (two fit the test's node with room to spare).
std::vector<std::string> slurm_flags() {
  return {"-Dresourcemanager.backend=slurm",
          "-Dresourcemanager.slurm.memory-per-slot=256m",
          "-Dresourcemanager.slurm.poll-interval=200 ms"};
}

/// weir run ARGS in driver mode with slurm_flags().
std::vector<std::string> run_args(const std::vector<std::string>& more) {
  std::vector<std::string> args{"run", "-D"};
  auto flags = slurm_flags();
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

/// The same with the weir binary first (a running_process's argv).
std::vector<std::string> run_argv(const std::vector<std::string>& more) {
  auto args = run_args(more);
  args.insert(args.begin(), std::getenv("WEIR_BIN"));
  return args;
}

/// Whether every job Slurm knows ended and its name is one of this
/// application's workers.
bool all_ended(const std::vector<std::string>& jobs) {
  static const std::regex ended{R"(weir-app-\d+-[0-9a-f]+\.worker-\d+\|(CANCELLED|COMPLETED))"};
  return !jobs.empty() && std::all_of(jobs.begin(), jobs.end(), [](auto& j) {
    return std::regex_match(j, ended);
  });
}

} // namespace

TEST_CASE("a driver's workers come from Slurm: exact results, and no job is "
          "left") {
  one_node_slurm slurm;
  REQUIRE_SLURM(slurm);
  temp_dir tmp;
  scoped_env env{"TMPDIR", tmp.path()};
  auto r = run_weir(run_args({"-c", "top_words", "--libjars", example_ops(),
                              example_driver(),
                              source_path("examples/data/sample.txt"), "3"}),
                    180s);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "the\t8\nhe\t5\nand\t4\n");
  // Its workers were Slurm jobs; none is left.
  CHECK(within(30s, [&] { return slurm.idle(); }));
  auto jobs = slurm.all_jobs();
  INFO("Slurm's jobs: " << fmt::format("{}", fmt::join(jobs, ", ")));
  CHECK(all_ended(jobs));
  CHECK(std::any_of(jobs.begin(), jobs.end(), [](auto& j) {
    return j.find(".worker-1|") != std::string::npos;
  }));
  CHECK(processes_mentioning(tmp.path()).empty());
}

TEST_CASE("an idle worker's Slurm job ends after "
          "resourcemanager.taskmanager-timeout") {
  one_node_slurm slurm;
  REQUIRE_SLURM(slurm);
  temp_dir tmp;
  scoped_env env{"TMPDIR", tmp.path()};
  auto go = tmp.file("go");
  running_process run{
    run_argv({"-Dresourcemanager.taskmanager-timeout=500 ms", "-c",
              "wait_for_file", test_drivers(), go})};
  // The driver's first job ran on worker-2 (the driver holds worker-1).
  REQUIRE(run.wait_for_stdout("0\t500500\n", 120s));
  auto log = [&] { return app_log(tmp); };
  REQUIRE(eventually([&] {
    return log().find("stopping worker worker-2: idle for 500 ms") != std::string::npos;
  }));
  auto driver_job = slurm_job_of(log(), "worker-1");
  auto idle_job = slurm_job_of(log(), "worker-2");
  REQUIRE_FALSE(driver_job.empty());
  REQUIRE_FALSE(idle_job.empty());
  // The launcher logs it on its own thread, maybe in a poll just now.
  CHECK(eventually([&] {
    return log().find("cancelling worker worker-2 (Slurm job " + idle_job + ")")
           != std::string::npos;
  }));
  // The idle worker's job is gone; the driver's runs on.
  CHECK(within(30s, [&] {
    return slurm.squeue({"-o", "%i|%T"}) == driver_job + "|RUNNING\n";
  }));
  // The worker job was what weir asked for.
  CHECK(std::regex_search(
    log(), std::regex{R"(started worker worker-1 \(Slurm job \d+\): (\S+/)?sbatch --parsable --job-name=weir-app-\d+-[0-9a-f]+\.worker-1 --output=\S+/logs/worker-1\.slurm-%j\.out --nodes=1 --ntasks=1 --cpus-per-task=1 --mem=256M --no-requeue --wrap=exec '\S+/weir' 'taskmanager' '-m' '127\.0\.0\.1:\d+' '--id' 'worker-1' '--slots' '1' )"}));
  std::ofstream{go}.put('\n');
  auto r = run.finish(120s);
  CHECK_MESSAGE(r.exit_code == 0, r.err << "\napplication cluster's log:\n"
                                         << log());
  CHECK(r.out == "0\t500500\ndone\n");
  CHECK(within(30s, [&] { return slurm.idle(); }));
  CHECK(all_ended(slurm.all_jobs()));
}

TEST_CASE("scancel of a worker's Slurm job mid-run: the job restarts from "
          "its checkpoint, exactly once, and no Slurm job is left") {
  one_node_slurm slurm;
  REQUIRE_SLURM(slurm);
  temp_dir tmp;
  scoped_env env{"TMPDIR", tmp.path()};
  // About 6 s of paced input, checkpointed every 100 ms.
  auto spec = tmp.write("paced.json", R"({
    "name": "paced", "parallelism": 1,
    "config": {"execution.checkpointing.interval": "100 ms"},
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"count": 6000, "rate": 1000, "keys": 7}},
      {"id": "counts", "operator": "count"},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "events", "to": "counts", "partitioning": "hash"},
              {"from": "counts", "to": "out", "partitioning": "forward"}]})");
  running_process run{run_argv(
    {"-Drestart-strategy.type=fixed-delay",
     "-Drestart-strategy.fixed-delay.attempts=3",
     "-Drestart-strategy.fixed-delay.delay=50 ms", "-c", "run_spec",
     test_drivers(), spec})};
  auto log = [&] { return app_log(tmp); };
  // The paced job runs on worker-2 (the driver holds worker-1) and has a
  // checkpoint.
  REQUIRE(within(120s, [&] {
    return log().find("(paced) completed checkpoint 2 ") != std::string::npos;
  }));
  auto victim = slurm_job_of(log(), "worker-2");
  REQUIRE_FALSE(victim.empty());
  auto cancel = run_process({slurm.program("scancel"), victim}, 30s);
  REQUIRE(cancel.exit_code == 0);
  CHECK(eventually([&] {
    return log().find("TaskExecutor worker-2 lost") != std::string::npos;
  }));
  CHECK(eventually([&] {
    return log().find("worker worker-2 (Slurm job " + victim + ") ended: ")
           != std::string::npos;
  }));
  // Its successor resumes from the checkpoint on a new worker job (the
  // log goes with the application's directory once it succeeded).
  CHECK(eventually([&] {
    return log().find("(paced) resumes from checkpoint") != std::string::npos;
  }));
  auto r = run.finish(180s);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  std::vector<std::string> expected;
  for (int k = 0; k < 7; ++k)
    expected.push_back(fmt::format("key-{}\t{}", k, 6000 / 7 + (k < 6000 % 7 ? 1 : 0)));
  std::sort(expected.begin(), expected.end());
  CHECK(sorted_lines(r.out) == expected);
  CHECK(within(30s, [&] { return slurm.idle(); }));
  CHECK(all_ended(slurm.all_jobs()));
}

TEST_CASE("a Slurm worker whose application jobmanager was killed ends by "
          "itself (taskmanager.registration.timeout)") {
  one_node_slurm slurm;
  REQUIRE_SLURM(slurm);
  temp_dir tmp;
  scoped_env env{"TMPDIR", tmp.path()};
  running_process run{run_argv({"-Dtaskmanager.registration.timeout=2 s",
                                "-c", "waits_on_endless", test_drivers()})};
  REQUIRE(run.wait_for_stdout("waiting for ", 120s));
  auto found = processes_mentioning(tmp.path());
  auto jobmanager = std::find_if(found.begin(), found.end(), [](auto& p) {
    return p.find(" jobmanager ") != std::string::npos;
  });
  REQUIRE(jobmanager != found.end());
  // The driver's worker and the endless job's run.
  auto running = [&] {
    auto states = lines_of(slurm.squeue({"-o", "%T"}));
    return states.size() >= 2
           && std::all_of(states.begin(), states.end(),
                          [](auto& s) { return s == "RUNNING"; });
  };
  REQUIRE(within(60s, running));
  auto workers = lines_of(slurm.squeue({"-o", "%i"})).size();
  // Nothing cancels the jobs: their workers give up on their own.
  ::kill(std::stoi(*jobmanager), SIGKILL);
  run.finish(30s);
  CHECK(within(60s, [&] { return slurm.idle(); }));
  auto jobs = slurm.all_jobs();
  INFO("Slurm's jobs: " << fmt::format("{}", fmt::join(jobs, ", ")));
  CHECK(jobs.size() == workers);
  // They ended with the taskmanager's exit code 6: FAILED, not cancelled.
  for (auto& j : jobs)
    CHECK(j.substr(j.find('|')) == "|FAILED");
}

TEST_CASE("bad Slurm settings are refused before anything starts") {
  temp_dir tmp;
  scoped_env env{"TMPDIR", tmp.path()};
  auto lib = test_drivers();
  auto unknown = run_weir({"run", "-D", "-Dresourcemanager.backend=yarn", "-c",
                           "returns_status", lib, "0"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err
        == "weir run: -Dresourcemanager.backend=yarn: key "
           "'resourcemanager.backend': expected one of local, slurm, got "
           "'yarn'\n");
  // No sbatch where the key says: one line, no cluster, no hang.
  auto no_sbatch = run_weir({"run", "-D", "-Dresourcemanager.backend=slurm",
                             "-Dresourcemanager.slurm.bin-dir=" + tmp.path(),
                             "-c", "returns_status", lib, "0"},
                            60s);
  CHECK_FALSE(no_sbatch.timed_out);
  CHECK(no_sbatch.exit_code == 2);
  CHECK(no_sbatch.err
        == "weir run: resourcemanager.slurm.bin-dir: no executable 'sbatch' "
           "in '" + tmp.path() + "'\n");
  CHECK(processes_mentioning(tmp.path()).empty());
}
