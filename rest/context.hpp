#pragma once

// Internal to the REST server (rest/server.hpp): what its route
// files share. Only rest_*.cpp include it (httplib and CAF's blocking
// actors are heavy).

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "rest/json.hpp"
#include "rest/triggers.hpp"
#include "config/config.hpp"
#include "messages/dispatcher.hpp"
#include "messages/resource_manager.hpp"
#include "messages/supervisor.hpp"

namespace weir::rest {

/// How long one REST request waits for an actor's answer.
constexpr auto answer_deadline = std::chrono::seconds{5};

/// How long a checkpoint or savepoint started over REST may take (large
/// state, a slow disk): as long as `weir checkpoint` and `weir savepoint`
/// wait.
constexpr auto operation_deadline = std::chrono::minutes{10};

/// An HTTP status and a JSON body.
struct reply {
  int status = 200;
  nlohmann::json body;
};

/// Flink's error form, {"errors": [message]}, with `status`.
reply error_reply(int status, const std::string& message);

/// The reply to an error: a malformed request 400 (413 for a body too
/// large), an unknown job 404 (as in Flink), anything else (a timeout, a
/// lost actor) 500.
reply refused(const caf::error& err);

/// `body` as JSON text; bytes that are not UTF-8 are replaced (U+FFFD).
std::string json_text(const nlohmann::json& body);

/// Writes `r` as the JSON response.
void send(httplib::Response& res, const reply& r);

/// What routes ask through: the supervisor's current Dispatcher and
/// ResourceManager (restarted ones are found), and the jobmanager's
/// configuration.
struct context {
  caf::actor_system& sys;
  supervisor_actor supervisor;
  configuration config;
  /// Savepoints and stops started over REST (shared with the actors that
  /// wait for them, which may outlive the server).
  std::shared_ptr<trigger_table> triggers = std::make_shared<trigger_table>();
  /// Where POST /jars/upload keeps libraries (the server's own temporary
  /// directory, removed with it).
  std::string upload_dir;
  /// The API's own URL (GET /jars' "address").
  std::string address;
  /// Ends the process as SIGTERM does (DELETE /cluster; none: 404).
  std::function<void()> shut_down;

  /// Asks the supervisor for the current Dispatcher and ResourceManager,
  /// then returns `render(self, dispatcher, rm)`; a refusal otherwise.
  template <class F>
  reply ask(F render) {
    caf::scoped_actor self{sys};
    reply out = error_reply(500, "no answer");
    self->request(supervisor, answer_deadline, lookup_atom_v)
      .receive(
        [&](dispatcher_actor& d, resource_manager_actor& rm) {
          out = render(self, d, rm);
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  }

  /// Asks the Dispatcher with `args...` and returns `render(answer)`; a
  /// refusal otherwise.
  template <class Answer, class F, class... Ts>
  reply ask_dispatcher(F render, Ts... args) {
    return ask([&](caf::scoped_actor& self, dispatcher_actor& d,
                   resource_manager_actor&) {
      reply out = error_reply(500, "no answer");
      self->request(d, answer_deadline, args...)
        .receive([&](Answer& x) { out = render(x); },
                 [&](caf::error& err) { out = refused(err); });
      return out;
    });
  }
};

/// `text` as a job id; `errc::invalid_request` naming it otherwise.
[[nodiscard]] caf::expected<job_id> parse_job_id(const std::string& text);

/// Replaces each job of `jobs` not ended (the Dispatcher's list) by its
/// JobMaster's detailed status (subtasks, checkpoints); one that cannot
/// answer keeps what the list says.
void live_statuses(caf::scoped_actor& self, dispatcher_actor& d,
                   std::vector<job_status>& jobs);

/// Asks for job `text`'s status (with its subtasks, checkpoints and
/// failures) and graph, and renders them with `render(status, graph)`; an
/// id that is no job id is 400, an unknown job 404.
template <class F>
reply with_job(context& ctx, const std::string& text, F render) {
  auto id = parse_job_id(text);
  if (!id)
    return refused(id.error());
  return ctx.ask([&](caf::scoped_actor& self, dispatcher_actor& d,
                     resource_manager_actor&) {
    reply out = error_reply(500, "no answer");
    self->request(d, answer_deadline, status_atom_v, *id, true)
      .receive(
        [&](job_status& s) {
          self->request(d, answer_deadline, graph_atom_v, *id)
            .receive(
              [&](job_graph& g) {
                with_running_parallelism(s, g);
                out = render(s, g);
              },
                     [&](caf::error& err) { out = refused(err); });
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

/// 404 for a vertex job `s` does not have.
reply unknown_vertex(const job_status& s, const std::string& vertex);

/// GET /overview, /config, /jobmanager/config, /taskmanagers...
void add_cluster_routes(httplib::Server& http, context& ctx);

/// GET /metrics: the jobmanager's metrics in Prometheus' text format.
void add_metrics_routes(httplib::Server& http, context& ctx);

/// GET /jobs, /jobs/overview, /jobs/{jobid}...
void add_job_routes(httplib::Server& http, context& ctx);

/// Flink's metric views: /jobmanager/metrics, /jobs/metrics,
/// /jobs/{jobid}/metrics, a vertex's and its subtasks', /taskmanagers/metrics
/// and /taskmanagers/{id}/metrics.
void add_metric_view_routes(httplib::Server& http, context& ctx);

/// A vertex's subtasks, attempts, times and taskmanagers; accumulators;
/// checkpoint details and configuration.
void add_subtask_routes(httplib::Server& http, context& ctx);

/// PATCH /jobs/{jobid} (cancel), POST /jobs/{jobid}/savepoints and /stop,
/// GET /jobs/{jobid}/savepoints/{triggerid}.
void add_action_routes(httplib::Server& http, context& ctx);

/// weir's client API: /weir/jobs..., PUT /weir/blobs/{hash}.
void add_client_routes(httplib::Server& http, context& ctx);

/// GET /jars, DELETE /jars/{jarid}: the uploaded libraries.
void add_jar_list_routes(httplib::Server& http, context& ctx);

/// POST /jars/upload, POST /jars/{jarid}/run, POST /jobs.
void add_submit_routes(httplib::Server& http, context& ctx);

/// GET / and /web/FILE: the web dashboard, built into the binary.
void add_web_routes(httplib::Server& http);

} // namespace weir::rest
