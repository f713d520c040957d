#include "cli/local_recovery.hpp"

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "messages/states.hpp"

namespace weir::cli {

namespace {

using namespace std::chrono_literals;

/// Every job the Dispatcher knows, with its state; empty on an error.
std::vector<job_status> list_jobs(client::job_service& jobs) {
  auto listed = jobs.list();
  return listed ? std::move(*listed) : std::vector<job_status>{};
}

} // namespace

std::vector<job_status> recovered_jobs_of(client::job_service& jobs,
                                          const job_id& own) {
  std::vector<job_status> recovered;
  // By the Dispatcher's flag, not by state: a recovered job may have
  // finished already, before this list.
  for (auto& s : list_jobs(jobs))
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

void report_recovered_jobs(client::job_service& jobs,
                           const std::vector<job_status>& recovered,
                           const std::string& dir, int64_t slots) {
  if (recovered.empty())
    return;
  auto listed = list_jobs(jobs);
  for (auto& before : recovered) {
    auto now = before;
    for (auto& s : listed)
      if (s.id == before.id)
        now = s;
    std::optional<job_result> result;
    if (is_globally_terminal(now.state))
      if (auto r = jobs.await_result(now.id, 10s); r && *r)
        result = std::move(**r);
    fmt::print(stderr, "{}\n", recovered_job_line(now, result, dir, slots));
  }
}

} // namespace weir::cli
