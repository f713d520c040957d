// Flink's metric views over REST (docs/operations.md § REST API): metric
// names, values (?get=) and aggregations (?agg=) of the jobmanager, jobs,
// vertices, subtasks and taskmanagers.
#include "rest/context.hpp"

#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "messages/flink_ids.hpp"
#include "rest/json.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

std::optional<std::string> param(const Req& req, const char* name) {
  if (!req.has_param(name))
    return std::nullopt;
  return req.get_param_value(name);
}

/// What ?agg= asks for; a refusal for an aggregation Flink does not know.
template <class F>
reply with_aggregations(const Req& req, F render) {
  auto agg = parse_aggregations(param(req, "agg").value_or(""));
  if (!agg)
    return refused(agg.error());
  return render(*agg);
}

/// Whether `id`, text of a comma-separated filter (`?jobs=`,
/// `?taskmanagers=`), is selected (no filter: everything).
bool selected(const std::optional<std::string>& filter, const std::string& id) {
  if (!filter)
    return true;
  return ("," + *filter + ",").find("," + id + ",") != std::string::npos;
}

/// Whether subtask `index` is in `filter`, Flink's ranges ("1,3,5-9"; no
/// filter: every subtask). Parts that are no range select nothing.
bool selected_subtask(const std::optional<std::string>& filter, int32_t index) {
  if (!filter)
    return true;
  size_t from = 0;
  while (from <= filter->size()) {
    auto to = std::min(filter->find(',', from), filter->size());
    auto part = filter->substr(from, to - from);
    from = to + 1;
    int lo = 0, hi = 0, used = 0;
    if (std::sscanf(part.c_str(), "%d-%d%n", &lo, &hi, &used) == 2
        && used == static_cast<int>(part.size())) {
      if (index >= lo && index <= hi)
        return true;
    } else if (std::sscanf(part.c_str(), "%d%n", &lo, &used) == 1
               && used == static_cast<int>(part.size()) && index == lo) {
      return true;
    }
  }
  return false;
}

/// Every job's status, live for those not ended; then `render(jobs)`.
template <class F>
reply with_jobs(context& ctx, F render) {
  return ctx.ask([&](caf::scoped_actor& self, dispatcher_actor& d,
                     resource_manager_actor& rm) {
    reply out = error_reply(500, "no answer");
    self->request(d, answer_deadline, list_atom_v)
      .receive(
        [&](std::vector<job_status>& jobs) {
          live_statuses(self, d, jobs);
          out = render(self, rm, jobs);
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

/// Every TaskExecutor as the ResourceManager knows it; `render(tms)`.
template <class F>
reply with_task_managers(context& ctx, F render) {
  return ctx.ask([&](caf::scoped_actor& self, dispatcher_actor&,
                     resource_manager_actor& rm) {
    reply out = error_reply(500, "no answer");
    self->request(rm, answer_deadline, list_atom_v)
      .receive([&](std::vector<task_manager_info>& tms) { out = render(tms); },
               [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

/// A vertex of job `req.matches[1]` named by `req.matches[2]`:
/// `render(status, vertex)`.
template <class F>
reply with_vertex(context& ctx, const Req& req, F render) {
  return with_job(ctx, req.matches[1], [&](job_status& s, job_graph& g) {
    auto vertex = resolve_vertex(s, g, req.matches[2]);
    return vertex ? render(s, *vertex) : unknown_vertex(s, req.matches[2]);
  });
}

} // namespace

void add_metric_view_routes(httplib::Server& http, context& ctx) {
  http.Get("/jobmanager/metrics", [&ctx](const Req& req, Res& res) {
    send(res, with_jobs(ctx, [&](caf::scoped_actor& self,
                                 resource_manager_actor& rm,
                                 std::vector<job_status>& jobs) {
      reply out = error_reply(500, "no answer");
      self->request(rm, answer_deadline, overview_atom_v)
        .receive(
          [&](cluster_overview& c) {
            out = reply{200, metric_list(cluster_metrics(c, jobs),
                                         param(req, "get"))};
          },
          [&](caf::error& err) { out = refused(err); });
      return out;
    }));
  });
  http.Get("/jobs/metrics", [&ctx](const Req& req, Res& res) {
    send(res, with_aggregations(req, [&](const std::vector<std::string>& agg) {
      return with_jobs(ctx, [&](caf::scoped_actor&, resource_manager_actor&,
                                std::vector<job_status>& jobs) {
        std::vector<metric_set> sets;
        for (auto& j : jobs)
          if (selected(param(req, "jobs"), j.id.to_string()))
            sets.push_back(job_metrics(j, now_ms()));
        return reply{200, aggregated_metrics(sets, param(req, "get"), agg)};
      });
    }));
  });
  http.Get(R"(/jobs/([^/]+)/metrics)", [&ctx](const Req& req, Res& res) {
    send(res, with_job(ctx, req.matches[1], [&](job_status& s, job_graph&) {
      return reply{200, metric_list(job_metrics(s, now_ms()),
                                    param(req, "get"))};
    }));
  });
  http.Get(R"(/jobs/([^/]+)/vertices/([^/]+)/metrics)",
           [&ctx](const Req& req, Res& res) {
    send(res, with_vertex(ctx, req, [&](job_status& s, const std::string& v) {
      return reply{200, metric_list(vertex_metrics_of(s, v), param(req, "get"))};
    }));
  });
  http.Get(R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/metrics)",
           [&ctx](const Req& req, Res& res) {
    send(res, with_aggregations(req, [&](const std::vector<std::string>& agg) {
      return with_vertex(ctx, req, [&](job_status& s, const std::string& v) {
        std::vector<metric_set> sets;
        for (auto& [index, m] : subtask_metrics(s, v))
          if (selected_subtask(param(req, "subtasks"), index))
            sets.push_back(std::move(m));
        return reply{200, aggregated_metrics(sets, param(req, "get"), agg)};
      });
    }));
  });
  http.Get(R"(/jobs/([^/]+)/vertices/([^/]+)/subtasks/([0-9]+)/metrics)",
           [&ctx](const Req& req, Res& res) {
    send(res, with_vertex(ctx, req, [&](job_status& s, const std::string& v) {
      auto index = std::stoi(req.matches[3]);
      for (auto& [i, m] : subtask_metrics(s, v))
        if (i == index)
          return reply{200, metric_list(m, param(req, "get"))};
      return error_reply(404, fmt::format("vertex '{}' has no subtask {}", v,
                                          index));
    }));
  });
  http.Get("/taskmanagers/metrics", [&ctx](const Req& req, Res& res) {
    send(res, with_aggregations(req, [&](const std::vector<std::string>& agg) {
      return with_task_managers(ctx, [&](std::vector<task_manager_info>& tms) {
        std::vector<metric_set> sets;
        for (auto& tm : tms)
          if (selected(param(req, "taskmanagers"), flink_resource_id(tm.id))
              || selected(param(req, "taskmanagers"), tm.id.value))
            sets.push_back(task_manager_metrics(tm));
        return reply{200, aggregated_metrics(sets, param(req, "get"), agg)};
      });
    }));
  });
  http.Get(R"(/taskmanagers/([^/]+)/metrics)", [&ctx](const Req& req, Res& res) {
    send(res, with_task_managers(ctx, [&](std::vector<task_manager_info>& tms) {
      for (auto& tm : tms)
        if (tm.id.value == req.matches[1]
            || flink_resource_id(tm.id) == req.matches[1])
          return reply{200, metric_list(task_manager_metrics(tm),
                                        param(req, "get"))};
      return error_reply(404, fmt::format("TaskManager {} does not exist",
                                          req.matches[1].str()));
    }));
  });
}

} // namespace weir::rest
