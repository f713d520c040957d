#include "cli/local_recovery.hpp"

#include <chrono>
#include <cstdio>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include <fmt/format.h>

#include "cli/remote.hpp"
#include "messages/states.hpp"

namespace weir::cli {

namespace {

using namespace std::chrono_literals;

/// Every job the Dispatcher knows, with its state; empty on an error.
std::vector<job_status> list_jobs(caf::scoped_actor& self,
                                  const dispatcher_actor& dispatcher) {
  std::vector<job_status> jobs;
  ask(
    self, dispatcher, 60s, [&](std::vector<job_status>& xs) { jobs = xs; },
    [](caf::error&) {}, list_atom_v);
  return jobs;
}

} // namespace

std::vector<job_status> recovered_jobs_of(caf::actor_system& sys,
                                          const dispatcher_actor& dispatcher,
                                          const job_id& own) {
  caf::scoped_actor self{sys};
  std::vector<job_status> recovered;
  // By the Dispatcher's flag, not by state: a recovered job may have
  // finished already, before this list.
  for (auto& s : list_jobs(self, dispatcher))
    if (s.recovered && s.id != own)
      recovered.push_back(std::move(s));
  return recovered;
}

std::string recovered_job_line(const job_status& now,
                               const std::optional<job_result>& result,
                               const std::string& dir, int64_t slots) {
  auto what = fmt::format("weir run: recovered job {} ({}) from {}; ",
                          now.id.to_string(), now.name, dir);
  auto state = result ? result->state : now.state;
  if (state == job_state::finished)
    return what + "it finished";
  if (is_globally_terminal(state)) {
    auto cause = result ? result->error : std::string{};
    return what + fmt::format("it ended {}{}{}", to_string(state),
                              cause.empty() ? "" : ": ", cause);
  }
  if (now.slots_missing > 0)
    return what + fmt::format("it is waiting for {} of its {} slots (this "
                              "cluster has {}) and was left unfinished in {}",
                              now.slots_missing, now.slots_needed, slots, dir);
  return what + fmt::format("it was still {} and was left unfinished in {}",
                            to_string(state), dir);
}

void announce_recovered_jobs(const std::vector<job_status>& recovered,
                             const std::string& dir) {
  for (auto& s : recovered)
    fmt::print(stderr,
               "weir run: recovered job {} ({}) from {}, left unfinished "
               "there; it is started too\n",
               s.id.to_string(), s.name, dir);
}

void report_recovered_jobs(caf::actor_system& sys,
                           const dispatcher_actor& dispatcher,
                           const std::vector<job_status>& recovered,
                           const std::string& dir, int64_t slots) {
  if (recovered.empty())
    return;
  caf::scoped_actor self{sys};
  auto jobs = list_jobs(self, dispatcher);
  for (auto& before : recovered) {
    auto now = before;
    for (auto& s : jobs)
      if (s.id == before.id)
        now = s;
    std::optional<job_result> result;
    if (is_globally_terminal(now.state))
      ask(
        self, dispatcher, 10s, [&](job_result& r) { result = std::move(r); },
        [](caf::error&) {}, result_atom_v, now.id);
    fmt::print(stderr, "{}\n", recovered_job_line(now, result, dir, slots));
  }
}

} // namespace weir::cli
