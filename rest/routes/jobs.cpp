// GET routes of jobs: /jobs, /jobs/overview, /jobs/{jobid}.
#include "rest/context.hpp"

#include <fmt/format.h>

#include "rest/json.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

reply job_list(context& ctx, bool detailed) {
  return ctx.ask([=](caf::scoped_actor& self, dispatcher_actor& d,
                     resource_manager_actor&) {
    reply out = error_reply(500, "no answer");
    self->request(d, answer_deadline, list_atom_v)
      .receive(
        [&](std::vector<job_status>& jobs) {
          if (detailed)
            live_statuses(self, d, jobs);
          out = reply{200, detailed ? jobs_overview(jobs, now_ms())
                                    : rest::jobs(jobs)};
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

} // namespace

void add_job_routes(httplib::Server& http, context& ctx) {
  http.Get("/jobs", [&ctx](const Req&, Res& res) {
    send(res, job_list(ctx, false));
  });
  http.Get("/jobs/overview", [&ctx](const Req&, Res& res) {
    send(res, job_list(ctx, true));
  });
  // One job's views. An id that is no job id is 400; an unknown job 404.
  auto job_view = [&ctx](auto render) {
    return [&ctx, render](const Req& req, Res& res) {
      send(res, with_job(ctx, req.matches[1], [&](job_status& s,
                                                  job_graph& g) {
        return render(req, s, g);
      }));
    };
  };
  http.Get(R"(/jobs/([^/]+))",
           job_view([](const Req&, job_status& s, job_graph& g) {
             return reply{200, job_details(s, g, now_ms())};
           }));
  http.Get(R"(/jobs/([^/]+)/plan)",
           job_view([](const Req&, job_status& s, job_graph& g) {
             return reply{200, {{"plan", plan(s, g)}}};
           }));
  http.Get(R"(/jobs/([^/]+)/config)",
           job_view([&ctx](const Req&, job_status& s, job_graph& g) {
             return reply{200, job_config(s, g, ctx.config)};
           }));
  http.Get(R"(/jobs/([^/]+)/exceptions)",
           job_view([](const Req&, job_status& s, job_graph&) {
             return reply{200, exceptions(s)};
           }));
  http.Get(R"(/jobs/([^/]+)/checkpoints)",
           job_view([](const Req&, job_status& s, job_graph&) {
             return reply{200, checkpoints(s.checkpoints)};
           }));
  http.Get(R"(/jobs/([^/]+)/execution-result)",
           job_view([](const Req&, job_status& s, job_graph&) {
             return reply{200, execution_result(s, now_ms())};
           }));
  http.Get(R"(/jobs/([^/]+)/vertices/([^/]+))",
           job_view([](const Req& req, job_status& s, job_graph& g) {
             auto v = vertex_details(s, g, req.matches[2], now_ms());
             return v ? reply{200, *v} : unknown_vertex(s, req.matches[2]);
           }));
  http.Get(R"(/jobs/([^/]+)/vertices/([^/]+)/watermarks)",
           job_view([](const Req& req, job_status& s, job_graph& g) {
             auto v = vertex_watermarks(s, g, req.matches[2]);
             return v ? reply{200, *v} : unknown_vertex(s, req.matches[2]);
           }));
  http.Get(R"(/jobs/([^/]+)/vertices/([^/]+)/backpressure)",
           job_view([](const Req& req, job_status& s, job_graph& g) {
             auto v = backpressure(s, g, req.matches[2], now_ms());
             return v ? reply{200, *v} : unknown_vertex(s, req.matches[2]);
           }));
}

} // namespace weir::rest
