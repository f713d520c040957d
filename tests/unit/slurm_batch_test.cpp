// The Slurm backend's plain logic: a worker request as sbatch arguments,
// squeue's output as ended workers, the commands' checks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "os/command.hpp"
#include "actors/resource_manager/slurm_batch.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

worker_request request(const std::string& id, int32_t slots,
                       resource_profile slot = {}) {
  return worker_request{"10.0.0.1:6123", resource_id{id}, slots, slot};
}

const std::vector<std::string> argv{"/opt/weir/bin/weir", "taskmanager", "-m",
                                    "10.0.0.1:6123", "--id", "worker-1"};

} // namespace

TEST_CASE("a worker request without a profile: one job of one task, the "
          "defaults per slot, no partition, account or time limit") {
  slurm_workers jobs{slurm_options{}, "weir-app-7-ab"};
  auto args = jobs.sbatch_arguments(request("worker-1", 2), "/tmp/a/logs", argv);
  CHECK(args
        == std::vector<std::string>{
          "--parsable", "--job-name=weir-app-7-ab.worker-1",
          "--output=/tmp/a/logs/worker-1.slurm-%j.out", "--nodes=1",
          "--ntasks=1", "--cpus-per-task=2", "--mem=2048M", "--no-requeue",
          "--wrap=exec '/opt/weir/bin/weir' 'taskmanager' '-m' "
          "'10.0.0.1:6123' '--id' 'worker-1'"});
}

TEST_CASE("a profile's cores and memory times the slots; the keys' values "
          "in order, extra arguments last") {
  slurm_options o;
  o.partition = "batch";
  o.account = "proj";
  o.time_limit = 90s; // rounds up to 2 minutes
  o.cpus_per_slot = 4;
  o.memory_per_slot_mb = 512;
  o.extra_args = split_words("  --qos=high\t--constraint=ssd ");
  slurm_workers jobs{o, "c"};
  resource_profile p;
  p.cpu_cores = 1.5;
  p.heap_mb = 100;
  p.direct_mb = 20;
  p.native_mb = 8;
  auto w = request("worker-3", 3, p);
  CHECK(jobs.cpus(w) == 5); // 4.5 rounded up
  CHECK(jobs.memory_mb(w) == 1536); // 128 per slot: raised to 512
  auto args = jobs.sbatch_arguments(w, "/l", {"weir"});
  CHECK(std::vector<std::string>(args.begin() + 5, args.end())
        == std::vector<std::string>{"--cpus-per-task=5", "--mem=1536M",
                                    "--no-requeue", "--partition=batch",
                                    "--account=proj", "--time=2",
                                    "--qos=high", "--constraint=ssd",
                                    "--wrap=exec 'weir'"});
  // Without a profile: the keys' amounts per slot.
  CHECK(jobs.cpus(request("w", 3)) == 12);
  CHECK(jobs.memory_mb(request("w", 3)) == 1536);
  // Exactly one minute stays one; a whole profile's cores are not rounded.
  o.time_limit = 60s;
  p.cpu_cores = 2;
  auto exact = slurm_workers{o, "c"}.sbatch_arguments(request("w", 1, p), "/l",
                                                      {"weir"});
  CHECK(std::find(exact.begin(), exact.end(), "--time=1") != exact.end());
  CHECK(std::find(exact.begin(), exact.end(), "--cpus-per-task=2")
        != exact.end());
}

TEST_CASE("the job script quotes every word for the shell") {
  CHECK(shell_command({"a b", "it's", "$HOME", ""})
        == R"('a b' 'it'\''s' '$HOME' '')");
  CHECK(split_words("") == std::vector<std::string>{});
}

TEST_CASE("sbatch --parsable output: the job id, with or without a cluster") {
  slurm_workers jobs{slurm_options{}, "c"};
  CHECK(jobs.submitted(resource_id{"worker-1"}, "42\n") == "42");
  CHECK(jobs.submitted(resource_id{"worker-2"}, "43;cluster2\n") == "43");
  // A warning before the id is not the id.
  CHECK(jobs.submitted(resource_id{"worker-3"},
                       "sbatch: warning: something\n44\n")
        == "44");
  CHECK(jobs.submitted(resource_id{"worker-4"}, "") == "");
  CHECK(jobs.submitted(resource_id{"worker-4"}, "Submitted batch job 45\n")
        == "");
  CHECK(jobs.job_ids() == std::vector<std::string>{"42", "43", "44"});
  CHECK(jobs.job_of(resource_id{"worker-2"}) == "43");
  CHECK(jobs.job_of(resource_id{"worker-4"}) == "");
}

TEST_CASE("squeue asks by the jobs' names, in every state") {
  slurm_workers jobs{slurm_options{}, "app"};
  CHECK(jobs.squeue_arguments().empty());
  jobs.submitted(resource_id{"worker-1"}, "7");
  jobs.submitted(resource_id{"worker-2"}, "8");
  CHECK(jobs.squeue_arguments()
        == std::vector<std::string>{"--noheader", "--all", "--states=all",
                                    "--format=%i|%T",
                                    "--name=app.worker-1,app.worker-2"});
}

TEST_CASE("squeue output: ended, cancelled, preempted and vanished jobs are "
          "reported once; pending and running ones are kept") {
  slurm_workers jobs{slurm_options{}, "app"};
  for (int i = 1; i <= 7; ++i)
    jobs.submitted(resource_id{"worker-" + std::to_string(i)},
                   std::to_string(100 + i));
  auto ended = jobs.ended("101|PENDING\n102|RUNNING\n103|COMPLETED\n"
                          "104|CANCELLED\n  105|PREEMPTED  \n107|CONFIGURING\n"
                          "garbage\n");
  REQUIRE(ended.size() == 3 + 1);
  CHECK(ended[0].worker.value == "worker-3");
  CHECK(ended[0].state == "COMPLETED");
  CHECK(ended[1].worker.value == "worker-4");
  CHECK(ended[1].state == "CANCELLED");
  CHECK(ended[2].job_id == "105");
  CHECK(ended[2].state == "PREEMPTED");
  CHECK(ended[3].worker.value == "worker-6"); // squeue forgot it
  CHECK(ended[3].state == "VANISHED");
  CHECK(jobs.job_ids() == std::vector<std::string>{"101", "102", "107"});
  // Reported once; the rest as they end.
  auto later = jobs.ended("101|FAILED\n102|TIMEOUT\n107|NODE_FAIL\n");
  CHECK(later.size() == 3);
  CHECK(jobs.job_ids().empty());
  for (auto s : {"COMPLETING", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"})
    CHECK(slurm_workers::has_ended(s));
  for (auto s : {"PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING"})
    CHECK_FALSE(slurm_workers::has_ended(s));
}

TEST_CASE("a cancelled worker is forgotten: squeue no longer asks for it") {
  slurm_workers jobs{slurm_options{}, "app"};
  jobs.submitted(resource_id{"worker-1"}, "7");
  CHECK(jobs.forget(resource_id{"worker-1"}) == "7");
  CHECK(jobs.forget(resource_id{"worker-1"}) == "");
  CHECK(jobs.squeue_arguments().empty());
  CHECK(jobs.ended("").empty());
}

TEST_CASE("missing Slurm commands are named with the key to set") {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path()
             / ("weir-slurm-bin-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  slurm_options o;
  o.bin_dir = dir.string();
  CHECK(o.missing_commands()
        == "resourcemanager.slurm.bin-dir: no executable 'sbatch' in '"
             + dir.string() + "'");
  CHECK(o.command("squeue") == dir.string() + "/squeue");
  for (auto name : {"sbatch", "squeue", "scancel"}) {
    std::ofstream{dir / name} << "#!/bin/sh\n";
    fs::permissions(dir / name, fs::perms::owner_all);
  }
  CHECK(o.missing_commands() == "");
  fs::remove(dir / "scancel");
  CHECK(o.missing_commands()
        == "resourcemanager.slurm.bin-dir: no executable 'scancel' in '"
             + dir.string() + "'");
  fs::remove_all(dir);
  // On PATH: the key to set is named.
  slurm_options on_path;
  auto* old = std::getenv("PATH");
  std::string saved = old != nullptr ? old : "";
  setenv("PATH", "/nonexistent", 1);
  CHECK(on_path.missing_commands()
        == "resourcemanager.backend: slurm: no 'sbatch' on PATH (set "
           "resourcemanager.slurm.bin-dir to the directory of the Slurm "
           "commands)");
  setenv("PATH", saved.c_str(), 1);
}

TEST_CASE("sbatch arguments that would hide the jobs from weir are refused") {
  for (std::string arg : {"--job-name=x", "-Jx", "--array=1-4", "-a1",
                          "--clusters=c2", "-Mc2", "--wrap=true",
                          "--parsable"}) {
    slurm_options o;
    o.extra_args = {"--qos=high", arg};
    CHECK(o.missing_commands()
          == "resourcemanager.slurm.sbatch-args: '" + arg
               + "' would hide weir's worker jobs from it (it names, finds "
                 "and cancels them itself)");
  }
}

TEST_CASE("a command's output, exit code, a missing program and a deadline") {
  auto ok = os::run_command({"/bin/sh", "-c", "echo out; echo err >&2"}, 10s);
  CHECK(ok.ok());
  CHECK(ok.out == "out\n");
  CHECK(ok.err == "err\n");
  auto failed = os::run_command({"/bin/sh", "-c", "echo 'no partition' >&2; exit 1"},
                            10s);
  CHECK_FALSE(failed.ok());
  CHECK(failed.problem() == "it exited with code 1: no partition");
  auto missing = os::run_command({"/nonexistent/sbatch"}, 10s);
  CHECK_FALSE(missing.ok());
  CHECK(missing.problem() == "cannot run it: No such file or directory");
  auto slow = os::run_command({"/bin/sleep", "30"}, 100ms);
  CHECK(slow.timed_out);
  CHECK(slow.problem() == "it did not end in time (killed)");
  // A wrapper script past its deadline: killed with what it started (its
  // process group).
  auto wrapper = os::run_command({"/bin/sh", "-c", "sleep 30; true"}, 100ms);
  CHECK(wrapper.timed_out);
}

TEST_CASE("a command does not see the environment it must not") {
  ::setenv("SQUEUE_PARTITION", "hidden", 1);
  ::setenv("SQUEUE_ACCOUNT", "other", 1);
  auto env = os::run_command({"/bin/sh", "-c", "env | grep ^SQUEUE_ | sort"}, 10s,
                         {"SQUEUE_"});
  CHECK(env.out == "");
  auto kept = os::run_command({"/bin/sh", "-c", "echo $SQUEUE_ACCOUNT"}, 10s);
  CHECK(kept.out == "other\n");
  ::unsetenv("SQUEUE_PARTITION");
  ::unsetenv("SQUEUE_ACCOUNT");
}
