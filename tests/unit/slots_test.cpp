// Slots: resource profiles, the ResourceManager's slot_manager, the TaskExecutor's slot_table.
#include <doctest/doctest.h>

#include "actors/resource_manager/registrations.hpp"
#include "actors/task_executor/job_holders.hpp"
#include "tests/unit/runtime_fixtures.hpp"

using namespace weir;
using namespace weir::test;

// -- resource_profile -----------------------------------------------------------

TEST_SUITE("resource_profile") {

TEST_CASE("zero fields in a request mean any") {
  resource_profile slot{2.0, 1024, 256, 128};
  CHECK(slot.satisfies(resource_profile{}));
  CHECK(slot.satisfies(resource_profile{2.0, 1024, 256, 128}));
  CHECK(slot.satisfies(resource_profile{1.0, 0, 0, 0}));
  CHECK(slot.satisfies(resource_profile{0, 512, 0, 128}));
  CHECK_FALSE(slot.satisfies(resource_profile{2.5, 0, 0, 0}));
  CHECK_FALSE(slot.satisfies(resource_profile{0, 2048, 0, 0}));
  CHECK_FALSE(slot.satisfies(resource_profile{0, 0, 257, 0}));
  CHECK_FALSE(slot.satisfies(resource_profile{0, 0, 0, 129}));
  // An unknown (all-zero) slot satisfies only requests that ask for nothing.
  CHECK(resource_profile{}.satisfies(resource_profile{}));
  CHECK_FALSE(resource_profile{}.satisfies(resource_profile{1.0, 0, 0, 0}));
}

} // TEST_SUITE

// -- slot_manager -------------------------------------------------------------

TEST_SUITE("slot_manager") {

TEST_CASE("a new slot manager is empty") {
  slot_manager sm;
  CHECK(sm.task_executor_count() == 0);
  CHECK(sm.slot_count() == 0);
  CHECK(sm.free_slot_count() == 0);
  CHECK(sm.pending_count() == 0);
  CHECK(sm.match().empty());
  CHECK_FALSE(sm.is_registered(te("te1")));
}

TEST_CASE("requests are matched in request order, filling the first "
          "TaskExecutor first") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(2));
  sm.register_task_executor(te("te2"), free_slots(2));
  CHECK(sm.is_registered(te("te1")));
  CHECK(sm.is_registered(te("te2")));
  CHECK(sm.task_executor_count() == 2);
  CHECK(sm.slot_count() == 4);
  CHECK(sm.free_slot_count() == 4);
  sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                 ids.make("a3")}));
  CHECK(sm.pending_count() == 3);
  auto got = sm.match();
  CHECK(ids.show(got) == "a1->te1:0 a2->te1:1 a3->te2:0");
  for (auto& a : got)
    CHECK(a.job == job);
  CHECK(sm.pending_count() == 0);
  CHECK(sm.free_slot_count() == 1);
  CHECK(sm.slot_count() == 4);
  // Nothing pending: a second match does nothing.
  CHECK(sm.match().empty());
  CHECK(sm.free_slot_count() == 1);
}

TEST_CASE("spread_out takes the TaskExecutor with the most free slots") {
  allocs ids;
  auto job = job_id::random();
  SUBCASE("equal TaskExecutors alternate, ties going to the earlier one") {
    slot_manager sm{true};
    sm.register_task_executor(te("te1"), free_slots(2));
    sm.register_task_executor(te("te2"), free_slots(2));
    sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                   ids.make("a3"), ids.make("a4")}));
    CHECK(ids.show(sm.match()) == "a1->te1:0 a2->te2:0 a3->te1:1 a4->te2:1");
    CHECK(sm.free_slot_count() == 0);
  }
  SUBCASE("the emptiest TaskExecutor wins even when registered last") {
    slot_manager sm{true};
    sm.register_task_executor(te("te1"), free_slots(1));
    sm.register_task_executor(te("te2"), free_slots(3));
    sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                   ids.make("a3")}));
    CHECK(ids.show(sm.match()) == "a1->te2:0 a2->te2:1 a3->te1:0");
  }
  SUBCASE("pack mode fills the first TaskExecutor with the same input") {
    slot_manager sm;
    sm.register_task_executor(te("te1"), free_slots(1));
    sm.register_task_executor(te("te2"), free_slots(3));
    sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                   ids.make("a3")}));
    CHECK(ids.show(sm.match()) == "a1->te1:0 a2->te2:0 a3->te2:1");
  }
  SUBCASE("a TaskExecutor with more free slots but none fitting is skipped") {
    slot_manager sm{true};
    sm.register_task_executor(te("small"), free_slots(3, {1.0, 512, 0, 0}));
    sm.register_task_executor(te("big"), free_slots(1, {4.0, 4096, 0, 0}));
    sm.add_requests(job, requests({ids.make("a1")}, {2.0, 0, 0, 0}));
    CHECK(ids.show(sm.match()) == "a1->big:0");
  }
}

TEST_CASE("a job gets all of its slots or none, and waits without blocking "
          "other jobs") {
  allocs ids;
  auto wide = job_id::random();
  auto narrow = job_id::random();
  slot_manager sm;
  auto a1 = ids.make("a1");
  auto a2 = ids.make("a2");
  auto a3 = ids.make("a3");
  auto b1 = ids.make("b1");
  sm.add_requests(wide, requests({a1, a2, a3}));
  CHECK(sm.match().empty());
  CHECK(sm.pending_count() == 3);

  // One slot is not enough for the wide job; the narrow one takes it.
  sm.register_task_executor(te("te1"), free_slots(1));
  CHECK(sm.match().empty());
  CHECK(sm.free_slot_count() == 1);
  // Idle, but the wide job waits for it (and for siblings to come): an
  // active ResourceManager keeps it.
  CHECK(sm.is_idle(te("te1")));
  CHECK(sm.serves_pending(te("te1")));
  CHECK(sm.why_unmet(wide) == "1 free slot fits; the job needs 3 at once");
  sm.add_requests(narrow, requests({b1}));
  CHECK(ids.show(sm.match()) == "b1->te1:0");
  CHECK(sm.pending_count() == 3);

  // Two more slots are still one short while the narrow job holds te1.
  sm.register_task_executor(te("te2"), free_slots(2));
  CHECK(sm.match().empty());
  CHECK(sm.free_slot_count() == 2);
  CHECK(sm.pending_count() == 3);

  sm.free_slot(te("te1"), b1);
  CHECK(ids.show(sm.match()) == "a1->te1:0 a2->te2:0 a3->te2:1");
  CHECK(sm.pending_count() == 0);
  CHECK(sm.free_slot_count() == 0);
}

TEST_CASE("a freed slot is reused before later slots of the same "
          "TaskExecutor") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(3));
  auto a1 = ids.make("a1");
  sm.add_requests(job, requests({a1, ids.make("a2")}));
  CHECK(ids.show(sm.match()) == "a1->te1:0 a2->te1:1");
  sm.free_slot(te("te1"), a1);
  sm.add_requests(job, requests({ids.make("a3"), ids.make("a4")}));
  CHECK(ids.show(sm.match()) == "a3->te1:0 a4->te1:2");
  CHECK(sm.free_slot_count() == 0);
}

TEST_CASE("freeing is exact: unknown, repeated and nil allocations change "
          "nothing") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(2));
  auto a1 = ids.make("a1");
  sm.add_requests(job, requests({a1}));
  REQUIRE(sm.match().size() == 1u);
  CHECK(sm.free_slot_count() == 1);
  sm.free_slot(te("te1"), allocation_id::random());
  CHECK(sm.free_slot_count() == 1);
  sm.free_slot(te("te2"), a1); // wrong TaskExecutor
  CHECK(sm.free_slot_count() == 1);
  sm.free_slot(te("te1"), a1);
  CHECK(sm.free_slot_count() == 2);
  sm.free_slot(te("te1"), a1);
  CHECK(sm.free_slot_count() == 2);
  sm.free_slot(te("te1"), allocation_id{});
  CHECK(sm.free_slot_count() == 2);
  CHECK(sm.slot_count() == 2);
}

TEST_CASE("unregistering a TaskExecutor returns the allocations it held") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(2));
  sm.register_task_executor(te("te2"), free_slots(2));
  sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                 ids.make("a3")}));
  REQUIRE(sm.match().size() == 3u);

  CHECK(ids.show(sm.unregister_task_executor(te("te1"))) == "a1 a2");
  CHECK_FALSE(sm.is_registered(te("te1")));
  CHECK(sm.task_executor_count() == 1);
  CHECK(sm.slot_count() == 2);
  CHECK(sm.free_slot_count() == 1);

  CHECK(ids.show(sm.unregister_task_executor(te("te2"))) == "a3");
  CHECK(sm.unregister_task_executor(te("te2")).empty());
  CHECK(sm.unregister_task_executor(te("never")).empty());
  CHECK(sm.task_executor_count() == 0);
  CHECK(sm.slot_count() == 0);
  CHECK(sm.free_slot_count() == 0);
}

TEST_CASE("a registration reports slots that are already allocated") {
  allocs ids;
  auto held = ids.make("held");
  auto job = job_id::random();
  slot_report report = free_slots(3);
  report.slots[0].alloc = held;
  report.slots[0].job = job;
  slot_manager sm;
  sm.register_task_executor(te("te1"), report);
  CHECK(sm.slot_count() == 3);
  CHECK(sm.free_slot_count() == 2);
  sm.add_requests(job, requests({ids.make("a1")}));
  CHECK(ids.show(sm.match()) == "a1->te1:1");
  CHECK(ids.show(sm.unregister_task_executor(te("te1"))) == "held a1");
}

TEST_CASE("registering again replaces the TaskExecutor's slots") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(1));
  sm.add_requests(job, requests({ids.make("a1")}));
  REQUIRE(sm.match().size() == 1u);
  CHECK(sm.free_slot_count() == 0);
  sm.register_task_executor(te("te1"), free_slots(3));
  CHECK(sm.task_executor_count() == 1);
  CHECK(sm.slot_count() == 3);
  CHECK(sm.free_slot_count() == 3);
}

TEST_CASE("a job whose request no slot satisfies waits without blocking "
          "later jobs") {
  allocs ids;
  auto big_job = job_id::random();
  auto small_job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(2, {1.0, 512, 0, 0}));
  auto big = ids.make("big");
  sm.add_requests(big_job, requests({big}, {0, 1024, 0, 0}));
  sm.add_requests(small_job, requests({ids.make("any")}));
  sm.add_requests(small_job, requests({ids.make("fits")}, {1.0, 256, 0, 0}));
  CHECK(ids.show(sm.match()) == "any->te1:0 fits->te1:1");
  CHECK(sm.pending_count() == 1);
  // A slot that is still too small does not help.
  sm.register_task_executor(te("te2"), free_slots(1, {1.0, 768, 0, 0}));
  CHECK(sm.match().empty());
  CHECK(sm.pending_count() == 1);
  sm.register_task_executor(te("te3"), free_slots(1, {2.0, 2048, 0, 0}));
  CHECK(ids.show(sm.match()) == "big->te3:0");
  CHECK(sm.pending_count() == 0);
}

TEST_CASE("a TaskExecutor with mixed slots hands out the fitting one") {
  allocs ids;
  auto job = job_id::random();
  slot_report report = free_slots(3, {1.0, 512, 0, 0});
  report.slots[2].profile = {4.0, 4096, 0, 0};
  slot_manager sm;
  sm.register_task_executor(te("te1"), report);
  sm.add_requests(job, requests({ids.make("big")}, {2.0, 0, 0, 0}));
  sm.add_requests(job, requests({ids.make("small")}));
  CHECK(ids.show(sm.match()) == "big->te1:2 small->te1:0");
}

TEST_CASE("remove_job drops only that job's pending requests") {
  allocs ids;
  auto j1 = job_id::random();
  auto j2 = job_id::random();
  slot_manager sm;
  sm.add_requests(j1, requests({ids.make("x1"), ids.make("x2")}));
  sm.add_requests(j2, requests({ids.make("y1")}));
  sm.add_requests(j1, requests({ids.make("x3")}));
  CHECK(sm.pending_count() == 4);
  sm.remove_job(j1);
  CHECK(sm.pending_count() == 1);
  sm.register_task_executor(te("te1"), free_slots(4));
  auto got = sm.match();
  CHECK(ids.show(got) == "y1->te1:0");
  REQUIRE(got.size() == 1u);
  CHECK(got[0].job == j2);
  sm.remove_job(job_id::random());
  CHECK(sm.free_slot_count() == 3);
}

} // TEST_SUITE

// -- slot_table ---------------------------------------------------------------

TEST_SUITE("slot_table") {

TEST_CASE("a new table reports every slot free with its profile") {
  resource_profile p{1.0, 512, 64, 32};
  slot_table t{3, p};
  CHECK(t.size() == 3);
  CHECK(t.free_count() == 3);
  CHECK(t.profile(2) == p);
  auto r = t.report();
  REQUIRE(r.slots.size() == 3u);
  for (int32_t i = 0; i < 3; ++i) {
    auto& s = r.slots[static_cast<size_t>(i)];
    CHECK(s.index == i);
    CHECK(s.profile == p);
    CHECK_FALSE(s.alloc.valid());
    CHECK_FALSE(s.job.valid());
  }
}

TEST_CASE("allocate reserves a slot and refuses a second allocation") {
  slot_table t{2, {}};
  auto job = job_id::random();
  auto leader = job_master_id::random();
  auto a = allocation_id::random();
  auto b = allocation_id::random();
  CHECK(t.allocate(0, a, job, leader) == "");
  CHECK(t.free_count() == 1);
  CHECK(t.allocate(0, b, job, leader) == "slot 0 is already allocated");
  // Allocating the same allocation again is harmless (a repeated grant).
  CHECK(t.allocate(0, a, job, leader) == "");
  CHECK(t.free_count() == 1);
  CHECK(t.allocate(2, b, job, leader) == "no slot 2");
  CHECK(t.allocate(-1, b, job, leader) == "no slot -1");
  CHECK(t.allocate(1, b, job, leader) == "");
  CHECK(t.free_count() == 0);
  auto r = t.report();
  CHECK(r.slots[0].alloc == a);
  CHECK(r.slots[0].job == job);
  CHECK(r.slots[1].alloc == b);
}

TEST_CASE("one allocation cannot hold two slots") {
  slot_table t{2, {}};
  auto job = job_id::random();
  auto leader = job_master_id::random();
  auto a = allocation_id::random();
  REQUIRE(t.allocate(0, a, job, leader) == "");
  CHECK(t.allocate(1, a, job, leader)
        == fmt::format("allocation {} already holds slot 0", a.to_string()));
  CHECK(t.free_count() == 1);
  CHECK_FALSE(t.report().slots[1].alloc.valid());
  CHECK(t.free(a));
  CHECK(t.free_count() == 2);
}

TEST_CASE("owned_by checks allocation, job and leader") {
  slot_table t{2, {}};
  auto job = job_id::random();
  auto leader = job_master_id::random();
  auto a = allocation_id::random();
  REQUIRE(t.allocate(1, a, job, leader) == "");
  CHECK(t.owned_by(a, job, leader));
  CHECK_FALSE(t.owned_by(a, job, job_master_id::random()));
  CHECK_FALSE(t.owned_by(a, job_id::random(), leader));
  CHECK_FALSE(t.owned_by(allocation_id::random(), job, leader));
  CHECK(t.activate(a));
  CHECK(t.owned_by(a, job, leader));
  CHECK_FALSE(t.activate(allocation_id::random()));
  REQUIRE(t.free(a));
  CHECK_FALSE(t.owned_by(a, job, leader));
  CHECK_FALSE(t.activate(a));
}

TEST_CASE("free releases one allocation, allocated or active") {
  slot_table t{3, {}};
  auto job = job_id::random();
  auto leader = job_master_id::random();
  auto a = allocation_id::random();
  auto b = allocation_id::random();
  REQUIRE(t.allocate(0, a, job, leader) == "");
  REQUIRE(t.allocate(2, b, job, leader) == "");
  REQUIRE(t.activate(b));
  CHECK(t.free_count() == 1);
  CHECK(t.free(b));
  CHECK(t.free_count() == 2);
  CHECK_FALSE(t.free(b));
  CHECK_FALSE(t.free(allocation_id::random()));
  CHECK(t.free_count() == 2);
  auto r = t.report();
  CHECK_FALSE(r.slots[2].alloc.valid());
  CHECK_FALSE(r.slots[2].job.valid());
  CHECK(r.slots[0].alloc == a);
  // A freed slot can be allocated again, to anyone.
  auto c = allocation_id::random();
  CHECK(t.allocate(2, c, job_id::random(), job_master_id::random()) == "");
  CHECK(t.free_count() == 1);
}

TEST_CASE("free_job frees exactly that job's slots") {
  slot_table t{4, {}};
  auto j1 = job_id::random();
  auto j2 = job_id::random();
  auto leader = job_master_id::random();
  std::vector<allocation_id> a(4);
  for (auto& x : a)
    x = allocation_id::random();
  REQUIRE(t.allocate(0, a[0], j1, leader) == "");
  REQUIRE(t.allocate(1, a[1], j2, leader) == "");
  REQUIRE(t.allocate(3, a[3], j1, leader) == "");
  REQUIRE(t.activate(a[3]));
  CHECK(t.free_count() == 1);
  auto freed = t.free_job(j1);
  CHECK(freed == std::vector<allocation_id>{a[0], a[3]});
  // Released, not free: taken until the TaskExecutor frees them (its
  // subtasks in them have ended), and no deployment goes into them.
  CHECK(t.free_count() == 1);
  CHECK(t.releasing(a[0]));
  CHECK(t.releasing(a[3]));
  CHECK_FALSE(t.owned_by(a[0], j1, leader));
  CHECK_FALSE(t.activate(a[0]));
  CHECK_FALSE(t.holds(j1, leader));
  CHECK(t.reown(j1, job_master_id::random()) == 0);
  CHECK(t.report().slots[0].job == j1); // the ResourceManager keeps it
  CHECK(t.allocate(0, allocation_id::random(), j2, leader)
        == "slot 0 is already allocated");
  CHECK(t.owned_by(a[1], j2, leader));
  CHECK(t.free_job(j1).empty()); // already on their way out
  CHECK(t.free(a[0]));
  CHECK(t.free(a[3]));
  CHECK_FALSE(t.free(a[0]));
  CHECK(t.free_job(job_id::random()).empty());
  CHECK(t.free_count() == 3);
  CHECK(t.free_job(j2) == std::vector<allocation_id>{a[1]});
  CHECK(t.free(a[1]));
  CHECK(t.free_count() == 4);
}

TEST_CASE("a slot table's report registers with a slot manager") {
  slot_table t{2, {1.0, 512, 0, 0}};
  auto job = job_id::random();
  auto held = allocation_id::random();
  REQUIRE(t.allocate(1, held, job, job_master_id::random()) == "");
  slot_manager sm;
  sm.register_task_executor(te("te1"), t.report());
  CHECK(sm.slot_count() == 2);
  CHECK(sm.free_slot_count() == 1);
  auto a = allocation_id::random();
  sm.add_requests(job, requests({a}, {1.0, 512, 0, 0}));
  auto got = sm.match();
  REQUIRE(got.size() == 1u);
  CHECK(got[0].slot_index == 0);
  CHECK(t.allocate(got[0].slot_index, a, job, job_master_id::random()) == "");
  CHECK(sm.unregister_task_executor(te("te1"))
        == std::vector<allocation_id>{a, held});
}

} // TEST_SUITE

// -- the ResourceManager's registrations --------------------------------------

namespace {

/// An actor handle's stand-in: what the registrations need of one. Like
/// a real handle, it has no address once moved from.
struct fake_handle {
  int addr = 0;
  fake_handle(int a = 0) : addr(a) {}
  fake_handle(const fake_handle&) = default;
  fake_handle& operator=(const fake_handle&) = default;
  fake_handle(fake_handle&& other) noexcept : addr(other.addr) {
    other.addr = 0;
  }
  fake_handle& operator=(fake_handle&& other) noexcept {
    addr = other.addr;
    other.addr = 0;
    return *this;
  }
  int address() const { return addr; }
};

} // namespace

TEST_CASE("registered workers: a re-registration replaces the old one") {
  registered_workers<fake_handle> workers;
  hardware_description host_a;
  host_a.cpu_cores = 4;
  workers.add(resource_id{"te-1"}, fake_handle{1}, host_a);
  REQUIRE(workers.find(resource_id{"te-1"}) != nullptr);
  CHECK(workers.find(resource_id{"te-1"})->hardware.cpu_cores == 4);
  CHECK(workers.at(1) == resource_id{"te-1"});
  // The same worker again from a new actor: the old address is no longer
  // its registration (its end must not unregister the live one).
  workers.add(resource_id{"te-1"}, fake_handle{2}, host_a);
  CHECK(workers.at(1) == std::nullopt);
  CHECK(workers.at(2) == resource_id{"te-1"});
  CHECK(workers.all().size() == 1);
  CHECK(workers.remove(resource_id{"te-1"}));
  CHECK_FALSE(workers.remove(resource_id{"te-1"}));
  CHECK(workers.at(2) == std::nullopt);
  CHECK(workers.all().empty());
}

TEST_CASE("job leaders: one per job, fenced; a successor waits its turn") {
  job_leaders<fake_handle> jobs;
  auto job = job_id::random();
  auto first = job_master_id::random();
  auto second = job_master_id::random();
  CHECK(jobs.lead(job, first, fake_handle{10})); // newly watched
  CHECK_FALSE(jobs.lead(job, first, fake_handle{10}));
  CHECK_FALSE(jobs.led_by_other(job, first));
  CHECK(jobs.led_by_other(job, second));
  // A wrong token does not disconnect the leader.
  CHECK_FALSE(jobs.disconnect(job, second));
  REQUIRE(jobs.find(job) != nullptr);
  CHECK(jobs.find(job)->id == first);
  // The leader ends: the job is free for its successor.
  auto ended = jobs.ended(10);
  CHECK(ended.job_master);
  CHECK(ended.led == job);
  CHECK(jobs.find(job) == nullptr);
  CHECK_FALSE(jobs.led_by_other(job, second));
  // An actor that never asked for slots is no JobMaster of theirs.
  CHECK_FALSE(jobs.ended(99).job_master);
}

TEST_CASE("job leaders: an old JobMaster's end leaves the new leader") {
  job_leaders<fake_handle> jobs;
  auto job = job_id::random();
  auto token = job_master_id::random();
  jobs.lead(job, token, fake_handle{10});
  auto next = job_master_id::random();
  jobs.lead(job, next, fake_handle{11});
  auto ended = jobs.ended(10);
  CHECK(ended.job_master);
  CHECK(ended.led == std::nullopt);
  CHECK(jobs.find(job)->id == next);
  CHECK(jobs.disconnect(job, next));
  CHECK(jobs.all().empty());
}

TEST_CASE("job leaders: each reason for unmet requests is told once") {
  job_leaders<fake_handle> jobs;
  auto job = job_id::random();
  auto token = job_master_id::random();
  jobs.lead(job, token, fake_handle{10});
  CHECK_FALSE(jobs.tell_unmet(job, "")); // nothing to tell yet
  CHECK(jobs.tell_unmet(job, "no TaskExecutor offers 2 slots"));
  CHECK_FALSE(jobs.tell_unmet(job, "no TaskExecutor offers 2 slots"));
  CHECK(jobs.tell_unmet(job, ""));
  // A new leader after a disconnect hears the reason again.
  CHECK(jobs.tell_unmet(job, "no TaskExecutor offers 2 slots"));
  CHECK(jobs.disconnect(job, token));
  jobs.lead(job, job_master_id::random(), fake_handle{11});
  CHECK(jobs.tell_unmet(job, "no TaskExecutor offers 2 slots"));
}

TEST_CASE("running subtasks: by job, forgotten when they end") {
  running_subtasks<fake_handle> subtasks;
  auto a = job_id::random();
  auto b = job_id::random();
  subtasks.add(a, fake_handle{1});
  subtasks.add(a, fake_handle{2});
  subtasks.add(b, fake_handle{3});
  CHECK(subtasks.of(a).size() == 2);
  CHECK(subtasks.of(b).size() == 1);
  CHECK(subtasks.all().size() == 3);
  CHECK(subtasks.ended(2));
  CHECK_FALSE(subtasks.ended(2));
  REQUIRE(subtasks.of(a).size() == 1);
  CHECK(subtasks.of(a)[0].address() == 1);
  CHECK(subtasks.ended(1));
  CHECK(subtasks.of(a).empty());
  CHECK(subtasks.size() == 1);
}

TEST_CASE("slot holders: a lost JobMaster's subtasks stay for a newer one") {
  slot_holders<int> holders;
  auto job = job_id::random();
  auto old_leader = job_master_id::random();
  auto new_leader = job_master_id::random();
  CHECK(holders.hold(10, job, old_leader));
  CHECK_FALSE(holders.hold(10, job, old_leader)); // watched already
  CHECK_FALSE(holders.newer_than(job, old_leader));
  CHECK(holders.hold(11, job, new_leader));
  CHECK(holders.newer_than(job, old_leader));
  auto gone = holders.gone(10);
  REQUIRE(gone);
  CHECK(gone->job == job);
  CHECK(gone->leader == old_leader);
  CHECK_FALSE(holders.gone(10));
  CHECK_FALSE(holders.newer_than(job, new_leader));
}
