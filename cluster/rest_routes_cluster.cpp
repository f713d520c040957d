// GET routes of the cluster: /overview, /config, /jobmanager/config.
#include "cluster/rest_context.hpp"

#include "cluster/rest_json.hpp"

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
}

} // namespace weir::rest
