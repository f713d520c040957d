// GET routes of jobs: /jobs, /jobs/overview, /jobs/{jobid}.
#include "cluster/rest_context.hpp"

#include <fmt/format.h>

#include "cluster/rest_json.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

/// The list holds each job's state; its subtask counts come from the
/// JobMaster: asks for the status of each job not ended (one that cannot
/// answer keeps what the list says).
void live_counts(caf::scoped_actor& self, dispatcher_actor& d,
                 std::vector<job_status>& jobs) {
  for (auto& j : jobs) {
    if (is_globally_terminal(j.state))
      continue;
    self->request(d, answer_deadline, status_atom_v, j.id, false)
      .receive([&](job_status& s) { j = std::move(s); }, [](caf::error&) {});
  }
}

reply job_list(context& ctx, bool detailed) {
  return ctx.ask([=](caf::scoped_actor& self, dispatcher_actor& d,
                     resource_manager_actor&) {
    reply out = error_reply(500, "no answer");
    self->request(d, answer_deadline, list_atom_v)
      .receive(
        [&](std::vector<job_status>& jobs) {
          if (detailed)
            live_counts(self, d, jobs);
          out = reply{200, detailed ? jobs_overview(jobs, now_ms())
                                    : rest::jobs(jobs)};
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

reply job(context& ctx, const std::string& text) {
  reply refusal;
  auto id = parse_job_id(text, refusal);
  if (!id)
    return refusal;
  return ctx.ask_dispatcher<job_status>(
    [](job_status& s) { return reply{200, job_details(s, now_ms())}; },
    status_atom_v, *id, true);
}

} // namespace

void add_job_routes(httplib::Server& http, context& ctx) {
  http.Get("/jobs", [&ctx](const Req&, Res& res) {
    send(res, job_list(ctx, false));
  });
  http.Get("/jobs/overview", [&ctx](const Req&, Res& res) {
    send(res, job_list(ctx, true));
  });
  http.Get(R"(/jobs/([^/]+))", [&ctx](const Req& req, Res& res) {
    send(res, job(ctx, req.matches[1]));
  });
}

} // namespace weir::rest
