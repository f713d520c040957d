// The FLIP-6 slot protocol between ResourceManager, TaskExecutors and a
// JobMaster, on CAF's deterministic scheduler.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "caf_doctest.hpp"

#include "actors/common/event_log.hpp"
#include "actors/resource_manager/resource_manager.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "actors/task_executor/task_executor_state.hpp"
#include "fakes.hpp"
#include "messages/errors.hpp"

using namespace weir;
using namespace weir::test;

namespace {

struct slot_fixture : actor_fixture {
  resource_manager_actor rm;
  job_master_actor jm;
  job_master_id leader = job_master_id::random();
  job_id job = job_id::random();

  slot_fixture() {
    rm = spawn_resource_manager(sys, {});
    jm = sys.spawn(fake_job_master);
    run();
  }

  std::vector<task_executor_actor> task_executors;

  ~slot_fixture() {
    caf::anon_send_exit(rm, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(jm, caf::exit_reason::user_shutdown);
    for (auto& te : task_executors)
      caf::anon_send_exit(te, caf::exit_reason::user_shutdown);
    run();
  }

  task_executor_actor add_task_executor(const std::string& name, int32_t slots) {
    task_executor_options opts;
    opts.helper_threads = false; // deterministic: no threads
    opts.id = resource_id{name};
    opts.slots = slots;
    auto te = spawn_task_executor(sys, opts, rm);
    task_executors.push_back(te);
    run();
    return te;
  }

  cluster_overview overview() {
    return request<cluster_overview>(rm, overview_atom_v);
  }

  std::vector<slot_request> requests(int n) {
    std::vector<slot_request> result;
    for (int i = 0; i < n; ++i)
      result.push_back(slot_request{allocation_id::random(), {}});
    return result;
  }

  /// A deployment into the one slot of a new TaskExecutor "te-1" (the
  /// last of task_executors), granted to JobMaster `leader`.
  task_deployment deployment_in_granted_slot() {
    add_task_executor("te-1", 1);
    auto reqs = requests(1);
    request<int32_t>(rm, request_atom_v, leader, job, jm, reqs);
    task_deployment d;
    d.job = job;
    d.alloc = reqs[0].alloc;
    return d;
  }

  fake_job_master_state& jm_state() {
    return deref<fake_job_master_impl>(jm).state;
  }
};

} // namespace

TEST_CASE_FIXTURE(slot_fixture, "TaskExecutors register their slots") {
  add_task_executor("te-1", 2);
  add_task_executor("te-2", 3);
  auto o = overview();
  CHECK(o.task_executors == 2);
  CHECK(o.slots_total == 5);
  CHECK(o.slots_free == 5);
}

TEST_CASE_FIXTURE(slot_fixture, "requested slots are offered to the JobMaster") {
  add_task_executor("te-1", 2);
  auto reqs = requests(2);
  auto pending = request<int32_t>(rm, request_atom_v, leader, job, jm, reqs);
  CHECK(pending == 0);
  REQUIRE(jm_state().offers.size() == 2);
  CHECK(jm_state().offers[0].alloc == reqs[0].alloc);
  CHECK(jm_state().offers[1].alloc == reqs[1].alloc);
  CHECK(jm_state().offered_by[0] == resource_id{"te-1"});
  CHECK(overview().slots_free == 0);
}

TEST_CASE_FIXTURE(slot_fixture, "requests wait until the cluster has room for all") {
  add_task_executor("te-1", 1);
  auto pending = request<int32_t>(rm, request_atom_v, leader, job, jm,
                                  requests(3));
  CHECK(pending == 3);
  CHECK(jm_state().offers.empty());
  add_task_executor("te-2", 2);
  CHECK(jm_state().offers.size() == 3);
  CHECK(overview().pending_requests == 0);
  auto& by = jm_state().offered_by;
  CHECK(std::count(by.begin(), by.end(), resource_id{"te-1"}) == 1);
  CHECK(std::count(by.begin(), by.end(), resource_id{"te-2"}) == 2);
}

TEST_CASE_FIXTURE(slot_fixture, "freed slots go back to the ResourceManager") {
  auto te = add_task_executor("te-1", 2);
  request<int32_t>(rm, request_atom_v, leader, job, jm, requests(2));
  CHECK(overview().slots_free == 0);
  self->send(te, free_atom_v, job);
  run();
  CHECK(overview().slots_free == 2);
}

TEST_CASE_FIXTURE(slot_fixture, "a second JobMaster for the same job is fenced off") {
  add_task_executor("te-1", 2);
  request<int32_t>(rm, request_atom_v, leader, job, jm, requests(1));
  auto err = error_of<int32_t>(*this, rm, request_atom_v, job_master_id::random(), job, jm,
                      requests(1));
  CHECK(err == make_error(errc::fencing_token_mismatch));
  CHECK(describe(err) == "job " + job.to_string()
                           + " already has another JobMaster");
}

TEST_CASE_FIXTURE(slot_fixture,
                  "the next JobMaster of a job is served once the last one ended") {
  auto te = add_task_executor("te-1", 1);
  request<int32_t>(rm, request_atom_v, leader, job, jm, requests(1));
  CHECK(jm_state().offers.size() == 1);
  // A new JobMaster asks before the ResourceManager saw the old one end.
  auto next = sys.spawn(fake_job_master);
  run();
  auto reply = self->request(rm, caf::infinite, request_atom_v,
                             job_master_id::random(), job, next, requests(1));
  run();
  CHECK(self->mailbox().empty()); // it waits for the old one's end
  caf::anon_send_exit(jm, caf::exit_reason::user_shutdown);
  run();
  bool answered = false;
  reply.receive([&](int32_t) { answered = true; }, [](caf::error&) {});
  CHECK(answered);
  // The old JobMaster's slot went back (its TaskExecutor watched it) and
  // was offered to the new one.
  CHECK(deref<fake_job_master_impl>(next).state.offers.size() == 1);
  caf::anon_send_exit(next, caf::exit_reason::user_shutdown);
  (void) te;
}

TEST_CASE_FIXTURE(slot_fixture,
                  "a refused grant is reported to the JobMaster") {
  auto te = sys.spawn(fake_task_executor, rm,
                      fake_task_executor_options{resource_id{"refusing"}, true});
  run();
  auto reqs = requests(1);
  request<int32_t>(rm, request_atom_v, leader, job, jm, reqs);
  run();
  // The JobMaster learns that its allocation will not be offered (and asks
  // for a replacement) instead of waiting for slot.request.timeout.
  CHECK(jm_state().lost == std::vector<allocation_id>{reqs[0].alloc});
  caf::anon_send_exit(te, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(slot_fixture, "a TaskExecutor refuses a replaced ResourceManager") {
  auto te = add_task_executor("te-1", 1);
  auto err = error_of<int32_t>(*this, te, request_atom_v, resource_manager_id::random(), job,
                      leader, jm, std::vector<slot_grant>{{allocation_id::random(), 0}});
  CHECK(err == make_error(errc::fencing_token_mismatch));
  CHECK(describe(err) == "slot request from a replaced ResourceManager");
  CHECK(jm_state().offers.empty());
}

TEST_CASE_FIXTURE(slot_fixture, "a TaskExecutor deploys only for the slot's JobMaster") {
  auto d = deployment_in_granted_slot();
  auto err = error_of<std::vector<subtask_actor>>(*this, task_executors.back(), submit_atom_v, job_master_id::random(), jm,
                      std::vector<task_deployment>{d});
  CHECK(err == make_error(errc::fencing_token_mismatch));
  CHECK(describe(err) == "allocation " + d.alloc.to_string()
                           + " is not held by this JobMaster");
}

TEST_CASE_FIXTURE(slot_fixture,
                  "a TaskExecutor refuses a vertex id that is not a file name") {
  auto d = deployment_in_granted_slot();
  d.chain = {{"../../numbers", "sequence", {{"from", "1"}, {"to", "2"}}, 1}};
  auto err = error_of<std::vector<subtask_actor>>(
    *this, task_executors.back(), submit_atom_v, leader, jm,
    std::vector<task_deployment>{d});
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err)
        == "TaskExecutor te-1 refuses the deployment: vertex id "
           "'../../numbers' is not a file name");
}

namespace {

/// Points the event log's path at a file holding `text` while it lives
/// (the TaskExecutor's log files are this process's).
struct log_file_on_disk {
  std::filesystem::path path;

  explicit log_file_on_disk(const std::string& text) {
    path = std::filesystem::temp_directory_path()
           / ("weir-slot-test-" + std::to_string(::getpid()) + ".log");
    std::ofstream{path, std::ios::binary} << text;
    set_event_log_path(path.string());
  }

  ~log_file_on_disk() {
    set_event_log_path("");
    std::filesystem::remove(path);
  }
};

} // namespace

TEST_CASE_FIXTURE(slot_fixture,
                  "the ResourceManager reads a TaskExecutor's log from it") {
  add_task_executor("te-1", 1);
  std::string text(log_piece_bytes + 10, 'x');
  text.back() = 'y';
  log_file_on_disk log{text};
  auto name = log.path.filename().string();
  auto files = request<std::vector<log_file>>(rm, log_atom_v, resource_id{"te-1"});
  REQUIRE(files.size() == 1);
  CHECK(files[0].name == name);
  CHECK(files[0].size == static_cast<int64_t>(text.size()));
  // Read in pieces of log_piece_bytes, as the REST API streams it.
  auto first = request<std::string>(rm, log_atom_v, resource_id{"te-1"}, name,
                                    int64_t{0});
  auto rest = request<std::string>(rm, log_atom_v, resource_id{"te-1"}, name,
                                   log_piece_bytes);
  CHECK(first.size() == static_cast<size_t>(log_piece_bytes));
  CHECK(first + rest == text);
  CHECK(request<std::string>(rm, log_atom_v, resource_id{"te-1"}, name,
                             int64_t{1} << 40)
          .empty());
  // Only the listed file is read, never another path.
  auto err = error_of<std::string>(*this, rm, log_atom_v, resource_id{"te-1"},
                                   std::string{"../../etc/passwd"}, int64_t{0});
  CHECK(describe(err)
        == "no log file '../../etc/passwd' (the logs list names them)");
  err = error_of<std::vector<log_file>>(*this, rm, log_atom_v,
                                        resource_id{"te-9"});
  CHECK(err == make_error(errc::invalid_request));
  CHECK(describe(err) == "TaskManager te-9 is not registered");
}

TEST_CASE_FIXTURE(slot_fixture,
                  "a freed slot stays taken until its subtask has ended") {
  using te_impl = task_executor_private_actor::stateful_base<te_state>;
  auto d = deployment_in_granted_slot();
  d.chain = {{"numbers", "sequence", {{"from", "1"}, {"to", "2"}}, 1}};
  d.task_name = "numbers";
  auto te = task_executors.back();
  auto spawned = request<std::vector<subtask_actor>>(
    te, submit_atom_v, leader, jm, std::vector<task_deployment>{d});
  REQUIRE(spawned.size() == 1);
  auto& slots = *deref<te_impl>(te).state.slots;
  self->send(te, free_atom_v, job);
  expect((free_atom, job_id), from(self).to(te).with(_, job));
  // Canceled, not yet ended: the slot is no one's to take (Flink frees a
  // slot once its tasks have left it).
  CHECK(slots.free_count() == 0);
  CHECK(slots.releasing(d.alloc));
  CHECK(slots.allocate(0, allocation_id::random(), job_id::random(),
                       job_master_id::random())
        == "slot 0 is already allocated");
  run(); // the subtask ends, the slot is freed and given back
  CHECK(slots.free_count() == 1);
  CHECK(overview().slots_free == 1);
}
