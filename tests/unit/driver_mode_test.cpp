// Driver mode's plain classes: reading the seed's option forms, which
// workers an active ResourceManager starts and stops, and the application
// rules of the Dispatcher.
#include <doctest/doctest.h>

#include "actors/dispatcher/applications.hpp"
#include "actors/resource_manager/worker_pool.hpp"
#include "cli/driver_flags.hpp"

using namespace weir;
using namespace std::chrono_literals;

TEST_CASE("driver flags: -D, -Dhm VALUE and -Dkey=value side by side") {
  CHECK(cli::wants_driver_mode({"-p", "2", "-Dhm", "64", "-D", "lib.so"},
                               {"-p"}));
  CHECK_FALSE(cli::wants_driver_mode({"job.json", "-D"}, {})); // program arg
  CHECK_FALSE(cli::wants_driver_mode({"-Dkey=value", "job.json"}, {}));
  auto a = cli::split_driver_args({"-D", "-Dhm", "512", "-Dc", "2",
                                   "-Dheartbeat.timeout=2 s", "-c", "main",
                                   "lib.so", "-D", "--x"},
                                  {"-c"});
  CHECK(a.error.empty());
  CHECK(a.flags
        == std::vector<std::string>{"--driver", "--driverheapmemory", "512",
                                    "--drivercpus", "2",
                                    "-Dheartbeat.timeout=2 s", "-c", "main"});
  CHECK(a.library == "lib.so");
  CHECK(a.program == std::vector<std::string>{"-D", "--x"});
  CHECK(cli::split_driver_args({"-Dnm=64", "lib.so"}, {}).error
        == "'-Dnm=64' is ambiguous: it reads as the configuration property "
           "'nm=64'; for the driver's resources write -Dnm 64 or "
           "--drivernativememory 64");
}

TEST_CASE("driver arguments that look like weir's flags") {
  std::vector<std::string> flags{"-p", "--parallelism", "--libjars", "-d",
                                 "--detached", "-D", "-h", "--help"};
  CHECK(cli::weir_looking_args({"-p", "4", "--libjars=a.so", "--libjarsx",
                                "-Dkey=v", "-D", "-Dhm", "-D=x", "-Dx",
                                "--help", "-h", "-px", "--detached", "x"},
                               flags)
        == std::vector<std::string>{"-p", "--libjars=a.so", "-Dkey=v", "-D",
                                    "-Dhm", "--detached"});
}

TEST_CASE("worker pool: starts what pending requests need, once") {
  worker_pool_options o;
  o.slots_per_worker = 2;
  worker_pool pool{o};
  auto now = worker_pool::clock::time_point{};
  resource_profile driver{1, 512, 0, 0};
  auto orders = pool.plan({driver, {}, {}, {}}, now);
  REQUIRE(orders.size() == 3);
  CHECK(orders[0].slots == 1);
  CHECK(orders[0].slot_profile == driver);
  CHECK(orders[1].slots == 2); // two requests without a profile
  CHECK(orders[2].slots == 2);
  // The same requests while those start: nothing more.
  CHECK(pool.plan({driver, {}, {}, {}}, now).empty());
  // A started worker that ends before it registers is a failed start: its
  // requests get another.
  pool.exited(orders[0].id, now);
  auto again = pool.plan({driver}, now);
  REQUIRE(again.size() == 1);
  CHECK(again[0].slot_profile == driver);
}

TEST_CASE("worker pool: failed starts are rate-limited per minute") {
  worker_pool_options o;
  o.max_failures_per_minute = 2;
  worker_pool pool{o};
  auto t0 = worker_pool::clock::time_point{} + 1h;
  for (int i = 0; i < 2; ++i) {
    auto orders = pool.plan({{}}, t0);
    REQUIRE(orders.size() == 1);
    pool.exited(orders[0].id, t0);
  }
  CHECK(pool.throttled(t0));
  CHECK(pool.plan({{}}, t0 + 59s).empty());
  CHECK(pool.plan({{}}, t0 + 60s).size() == 1);
}

TEST_CASE("worker pool: idle workers are stopped after the timeout") {
  worker_pool_options o;
  o.idle_timeout = 200ms;
  worker_pool pool{o};
  auto t0 = worker_pool::clock::time_point{} + 1h;
  auto orders = pool.plan({{}, {}}, t0);
  REQUIRE(orders.size() == 2);
  for (auto& w : orders)
    pool.registered(w.id, t0);
  auto busy = orders[0].id;
  auto is_idle = [&](const resource_id& id) { return id != busy; };
  CHECK(pool.idle(is_idle, t0 + 199ms).empty());
  CHECK(pool.idle(is_idle, t0 + 200ms) == std::vector<resource_id>{orders[1].id});
  CHECK(pool.idle(is_idle, t0 + 400ms).empty()); // asked to stop once
}

namespace {

job_id id_of(int n) {
  return *job_id::parse(std::string(31, '0') + std::to_string(n));
}

/// A driver, a normal and a daemon job it submitted, and a job of no
/// application.
struct one_application {
  application_tracker apps;
  job_id driver = id_of(1), work = id_of(2), daemon = id_of(3),
         other = id_of(4);
  one_application() {
    apps.submitted(driver, job_priority::driver, {});
    apps.submitted(work, job_priority::normal, driver);
    apps.submitted(daemon, job_priority::daemon, driver);
    apps.submitted(other, job_priority::normal, {});
  }
};

} // namespace

TEST_CASE_FIXTURE(one_application,
                  "applications: daemon jobs go once no driver or normal job "
                  "is left") {
  auto d = apps.ended(work, job_state::finished, "");
  CHECK(d.cancel.empty()); // the driver still runs
  CHECK_FALSE(d.ended);
  d = apps.ended(driver, job_state::finished, "");
  CHECK(d.cancel == std::vector<job_id>{daemon});
  CHECK_FALSE(d.ended);
  d = apps.ended(daemon, job_state::canceled, "job was canceled");
  REQUIRE(d.ended);
  CHECK(*d.ended == driver);
  CHECK(d.status == 0);
  CHECK(apps.ended(other, job_state::failed, "x").cancel.empty());
}

TEST_CASE("applications: a failed driver cancels every job; status 1") {
  application_tracker apps;
  auto driver = id_of(1), work = id_of(2);
  apps.submitted(driver, job_priority::driver, {});
  apps.submitted(work, job_priority::normal, driver);
  auto d = apps.ended(driver, job_state::failed, "boom");
  CHECK(d.cancel == std::vector<job_id>{work});
  CHECK_FALSE(d.ended);
  d = apps.ended(work, job_state::canceled, "");
  REQUIRE(d.ended);
  CHECK(d.status == 1);
  CHECK(d.error == "boom");
}

TEST_CASE("applications: a failed normal job fails the application") {
  application_tracker apps;
  auto driver = id_of(1), work = id_of(2);
  apps.submitted(driver, job_priority::driver, {});
  apps.submitted(work, job_priority::normal, driver);
  apps.ended(work, job_state::failed, "disk full");
  auto d = apps.ended(driver, job_state::finished, "");
  REQUIRE(d.ended);
  CHECK(d.status == 1);
  CHECK(d.error == "job " + work.to_string() + " failed: disk full");
}

TEST_CASE_FIXTURE(one_application,
                  "applications: cancelling a driver cancels its jobs and "
                  "closes it") {
  CHECK(apps.cancelled(work).empty()); // not a driver: nothing else goes
  CHECK(apps.accepts(driver));
  CHECK(apps.cancelled(driver) == std::vector<job_id>{work, daemon});
  CHECK_FALSE(apps.accepts(driver)); // its driver submits no more jobs
  CHECK(apps.accepts(job_id{}));
  apps.ended(work, job_state::canceled, "");
  apps.ended(daemon, job_state::canceled, "");
  auto d = apps.ended(driver, job_state::canceled, "job was canceled");
  REQUIRE(d.ended);
  CHECK(d.status == 1);
  CHECK(apps.accepts(driver)); // forgotten with its application
}
