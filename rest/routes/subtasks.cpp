// A vertex's subtasks and attempts, their times and taskmanagers; the
// accumulators; checkpoint details and configuration (Flink's paths and
// bodies; docs/operations.md § REST API).
#include "rest/context.hpp"

#include <fmt/format.h>

#include "rest/json.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

/// Route `pattern` (its first two groups the job and vertex) answered by
/// `render(req, status, graph, vertex)`.
template <class F>
void vertex_route(httplib::Server& http, context& ctx, const char* pattern,
                  F render) {
  http.Get(pattern, [&ctx, render](const Req& req, Res& res) {
    send(res, with_job(ctx, req.matches[1], [&](job_status& s, job_graph& g) {
      auto vertex = resolve_vertex(s, g, req.matches[2]);
      return vertex ? render(req, s, g, *vertex)
                    : unknown_vertex(s, req.matches[2]);
    }));
  });
}

/// A path's number (`[0-9]+` in the route): nothing when it does not fit.
std::optional<int32_t> number(const std::string& text) {
  try {
    auto n = std::stoll(text);
    if (n >= 0 && n <= INT32_MAX)
      return static_cast<int32_t>(n);
  } catch (...) {
  }
  return std::nullopt;
}

reply no_subtask(const std::string& vertex, const std::string& index) {
  return error_reply(404, fmt::format("vertex '{}' has no subtask {} (or not "
                                      "at that attempt)",
                                      vertex, index));
}

} // namespace

void add_subtask_routes(httplib::Server& http, context& ctx) {
  vertex_route(http, ctx, R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/([0-9]+))",
               [](const Req& req, job_status& s, job_graph&,
                  const std::string& v) {
                 auto i = number(req.matches[3]);
                 auto d = i ? subtask_details(s, v, *i, std::nullopt, now_ms())
                            : std::nullopt;
                 return d ? reply{200, *d} : no_subtask(v, req.matches[3]);
               });
  vertex_route(
    http, ctx,
    R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/([0-9]+)/attempts/([0-9]+))",
    [](const Req& req, job_status& s, job_graph&, const std::string& v) {
      auto i = number(req.matches[3]), a = number(req.matches[4]);
      auto d = i && a ? subtask_details(s, v, *i, *a, now_ms()) : std::nullopt;
      return d ? reply{200, *d} : no_subtask(v, req.matches[3]);
    });
  vertex_route(
    http, ctx,
    R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/([0-9]+)/attempts/([0-9]+)/accumulators)",
    [](const Req& req, job_status& s, job_graph&, const std::string& v) {
      auto i = number(req.matches[3]), a = number(req.matches[4]);
      auto d = i && a ? attempt_accumulators(s, v, *i, *a) : std::nullopt;
      return d ? reply{200, *d} : no_subtask(v, req.matches[3]);
    });
  vertex_route(http, ctx, R"(/jobs/([^/]+)/vertices/([^/]+)/subtasktimes)",
               [](const Req&, job_status& s, job_graph&, const std::string& v) {
                 return reply{200, subtask_times(s, v, now_ms())};
               });
  vertex_route(http, ctx, R"(/jobs/([^/]+)/vertices/([^/]+)/taskmanagers)",
               [](const Req&, job_status& s, job_graph&, const std::string& v) {
                 return reply{200, vertex_task_managers(s, v, now_ms())};
               });
  vertex_route(http, ctx, R"(/jobs/([^/]+)/vertices/([^/]+)/accumulators)",
               [](const Req&, job_status& s, job_graph&, const std::string& v) {
                 return reply{200, vertex_accumulators(s, v)};
               });
  vertex_route(http, ctx,
               R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/accumulators)",
               [](const Req&, job_status& s, job_graph& g,
                  const std::string& v) {
                 return reply{200, subtask_accumulators(s, g, v)};
               });
  http.Get(R"(/jobs/([^/]+)/accumulators)", [&ctx](const Req& req, Res& res) {
    send(res, with_job(ctx, req.matches[1], [](job_status& s, job_graph&) {
      return reply{200, job_accumulators(s)};
    }));
  });
  http.Get(R"(/jobs/([^/]+)/checkpoints/config)",
           [&ctx](const Req& req, Res& res) {
    send(res, with_job(ctx, req.matches[1], [&](job_status& s, job_graph& g) {
      auto c = checkpoint_config(g, ctx.config);
      return c ? reply{200, *c}
               : error_reply(404, fmt::format("Checkpointing is not enabled "
                                              "for job {}",
                                              s.id.to_string()));
    }));
  });
  http.Get(R"(/jobs/([^/]+)/checkpoints/details/([0-9]+)/subtasks/([^/]+))",
           [&ctx](const Req& req, Res& res) {
    send(res, with_job(ctx, req.matches[1], [&](job_status& s, job_graph& g) {
      auto vertex = resolve_vertex(s, g, req.matches[3]);
      if (!vertex)
        return unknown_vertex(s, req.matches[3]);
      std::optional<nlohmann::json> d;
      try {
        d = checkpoint_subtasks(s, g, std::stoll(req.matches[2]), *vertex);
      } catch (...) {
      }
      return d ? reply{200, *d}
               : error_reply(404, fmt::format("Could not find checkpoint "
                                              "statistics for checkpoint {}",
                                              req.matches[2].str()));
    }));
  });
  http.Get(R"(/jobs/([^/]+)/checkpoints/details/([0-9]+))",
           [&ctx](const Req& req, Res& res) {
    send(res, with_job(ctx, req.matches[1], [&](job_status& s, job_graph& g) {
      std::optional<nlohmann::json> d;
      try {
        d = checkpoint_details(s, g, std::stoll(req.matches[2]));
      } catch (...) {
      }
      return d ? reply{200, *d}
               : error_reply(404, fmt::format("Could not find checkpoint "
                                              "statistics for checkpoint {}",
                                              req.matches[2].str()));
    }));
  });
}

} // namespace weir::rest
