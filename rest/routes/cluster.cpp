// GET routes of the cluster: /overview, /config, /jobmanager/config,
// /taskmanagers, /taskmanagers/{id}.
#include "rest/context.hpp"

#include <algorithm>

#include "messages/flink_ids.hpp"
#include "rest/json.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

reply cluster_overview_reply(context& ctx) {
  return ctx.ask([](caf::scoped_actor& self, dispatcher_actor& d,
                    resource_manager_actor& rm) {
    reply out = error_reply(500, "no answer");
    self->request(d, answer_deadline, list_atom_v)
      .receive(
        [&](std::vector<job_status>& jobs) {
          self->request(rm, answer_deadline, overview_atom_v)
            .receive(
              [&](cluster_overview& c) {
                out = reply{200, overview(c, jobs)};
              },
              [&](caf::error& err) { out = refused(err); });
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

/// Every TaskExecutor, or the one named `id` ("": all).
reply task_managers_reply(context& ctx, const std::string& id) {
  return ctx.ask([&](caf::scoped_actor& self, dispatcher_actor&,
                     resource_manager_actor& rm) {
    reply out = error_reply(500, "no answer");
    self->request(rm, answer_deadline, list_atom_v)
      .receive(
        [&](std::vector<task_manager_info>& tms) {
          if (id.empty()) {
            out = reply{200, task_managers(tms)};
            return;
          }
          // Flink's 32-hex id, or weir's name of the TaskExecutor.
          auto i = std::find_if(tms.begin(), tms.end(), [&](auto& tm) {
            return tm.id.value == id || flink_resource_id(tm.id) == id;
          });
          out = i == tms.end()
                  ? error_reply(404, "TaskManager " + id + " does not exist")
                  : reply{200, task_manager(*i)};
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

} // namespace

void add_cluster_routes(httplib::Server& http, context& ctx) {
  http.Get("/overview", [&ctx](const Req&, Res& res) {
    send(res, cluster_overview_reply(ctx));
  });
  http.Get("/config", [](const Req&, Res& res) {
    send(res, reply{200, dashboard_config()});
  });
  http.Get("/jobmanager/config", [&ctx](const Req&, Res& res) {
    send(res, reply{200, jobmanager_config(ctx.config)});
  });
  http.Get("/taskmanagers", [&ctx](const Req&, Res& res) {
    send(res, task_managers_reply(ctx, ""));
  });
  http.Get(R"(/taskmanagers/([^/]+))", [&ctx](const Req& req, Res& res) {
    send(res, task_managers_reply(ctx, req.matches[1]));
  });
}

} // namespace weir::rest
