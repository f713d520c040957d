// GET /metrics: the jobmanager's metrics in Prometheus' text format
// (docs/operations.md § Metrics).
#include "rest/context.hpp"

#include "config/keys.hpp"
#include "metrics/prometheus.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

/// Asks `target` for `Answer`; false (and `out` the refusal) on an error.
template <class Answer, class Handle, class... Ts>
bool ask_into(caf::scoped_actor& self, const Handle& target, Answer& into,
              reply& out, Ts... args) {
  bool ok = false;
  self->request(target, answer_deadline, args...)
    .receive(
      [&](Answer& x) {
        into = std::move(x);
        ok = true;
      },
      [&](caf::error& err) { out = refused(err); });
  return ok;
}

/// What the Dispatcher and the ResourceManager know; running jobs with
/// their JobMaster's live status (restarts, checkpoints).
reply collect(context& ctx, jobmanager_metrics_input& in) {
  return ctx.ask([&](caf::scoped_actor& self, dispatcher_actor& d,
                     resource_manager_actor& rm) {
    reply out;
    if (!ask_into(self, d, in.jobs, out, list_atom_v)
        || !ask_into(self, d, in.submissions, out, metrics_atom_v)
        || !ask_into(self, rm, in.cluster, out, overview_atom_v)
        || !ask_into(self, rm, in.task_managers, out, list_atom_v))
      return out;
    // Checkpoint statistics come only with details; the subtasks are not
    // shown here.
    live_statuses(self, d, in.jobs);
    for (auto& j : in.jobs)
      j.subtasks.clear();
    return reply{200, {}};
  });
}

} // namespace

void add_metrics_routes(httplib::Server& http, context& ctx) {
  http.Get("/metrics", [&ctx](const Req&, Res& res) {
    jobmanager_metrics_input in;
    auto r = collect(ctx, in);
    if (r.status != 200) {
      send(res, r);
      return;
    }
    in.now_ms = now_ms();
    res.set_content(jobmanager_metrics_text(
                      in, metric_naming{ctx.config.get(keys::prom_prefix),
                                        metric_host_name()}),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
}

} // namespace weir::rest
