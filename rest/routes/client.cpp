// weir's client API: the Dispatcher's client requests over HTTP/JSON,
// what `weir list/status/run -m/...` and the C++ API's remote client use
// (docs/operations.md § Client API). Flink's own routes stay as Flink
// defines them; these carry weir's typed answers (client/wire.hpp), and
// their errors name weir's error code so that a client exits as before.
#include "rest/context.hpp"

#include <type_traits>

#include <caf/event_based_actor.hpp>

#include <fmt/format.h>

#include "client/wire.hpp"
#include "rest/body.hpp"
#include "messages/errors.hpp"
#include "storage/blob_store.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;
using nlohmann::json;

/// Storing a library (synced) and submitting may take longer than a look-up.
constexpr auto store_deadline = std::chrono::seconds{60};

/// A refusal with weir's error code beside Flink's {"errors": [...]}.
reply client_refusal(const caf::error& err) {
  int status = 500;
  json body = {{"errors", {describe(err)}}};
  if (err.category() == errc_category()) {
    auto code = static_cast<errc>(err.code());
    body["weir-error"] = to_string(code);
    switch (code) {
      case errc::unknown_job:
      case errc::blob_not_found:
        status = 404;
        break;
      case errc::invalid_job:
      case errc::invalid_config:
        status = 400;
        break;
      case errc::duplicate_job:
      case errc::not_running:
        status = 409;
        break;
      default:
        break;
    }
  }
  return reply{status, std::move(body)};
}

/// A malformed request, as weir's clients know it: `invalid_job` (their
/// exit code 2), whatever the helper's own code.
reply bad_request(std::string why) {
  return client_refusal(make_error(errc::invalid_job, std::move(why)));
}
reply bad_request(const caf::error& err) {
  return bad_request(describe(err));
}

/// Asks the current Dispatcher with `args...` (deadline `deadline`) and
/// returns `render(answer)`; a client_refusal otherwise.
template <class Answer, class F, class... Ts>
reply ask(context& ctx, caf::timespan deadline, F render, Ts&&... args) {
  caf::scoped_actor self{ctx.sys};
  reply out = client_refusal(make_error(errc::timeout, "no answer"));
  self->request(ctx.supervisor, answer_deadline, lookup_atom_v)
    .receive(
      [&](dispatcher_actor& d, resource_manager_actor&) {
        self->request(d, deadline, std::forward<Ts>(args)...)
          .receive([&](Answer& x) { out = render(x); },
                   [&](caf::error& err) { out = client_refusal(err); });
      },
      [&](caf::error& err) { out = client_refusal(err); });
  return out;
}

/// The Dispatcher's answer to `args...` in the client API's JSON (200).
template <class Answer, class... Ts>
reply encoded(context& ctx, Ts&&... args) {
  return ask<Answer>(
    ctx, answer_deadline,
    [](Answer& x) { return reply{200, wire::encode(x)}; },
    std::forward<Ts>(args)...);
}

/// The job id in the path.
caf::expected<job_id> job_in_path(const Req& req) {
  return parse_job_id(req.matches[1].str());
}

reply list(context& ctx) {
  return encoded<std::vector<job_status>>(ctx, list_atom_v);
}

reply status(context& ctx, const Req& req) {
  auto id = job_in_path(req);
  if (!id)
    return bad_request(id.error());
  bool detailed = req.has_param("detailed")
                  && req.get_param_value("detailed") == "true";
  return encoded<job_status>(ctx, status_atom_v, *id, detailed);
}

/// 200 with the result once the job has ended; 202 {"status":
/// "IN_PROGRESS"} while it runs (never waits: a client polls, as for
/// Flink's /jobs/{jobid}/execution-result).
reply result(context& ctx, const Req& req) {
  auto id = job_in_path(req);
  if (!id)
    return bad_request(id.error());
  auto ended = ask<job_status>(
    ctx, answer_deadline,
    [](job_status& s) {
      return reply{is_globally_terminal(s.state) ? 200 : 202, json{}};
    },
    status_atom_v, *id, false);
  if (ended.status != 200)
    return ended.status == 202 ? reply{202, json{{"status", "IN_PROGRESS"}}}
                               : ended;
  return encoded<job_result>(ctx, result_atom_v, *id);
}

reply collect(context& ctx, const Req& req) {
  auto id = job_in_path(req);
  if (!id)
    return bad_request(id.error());
  int64_t offset = 0;
  if (req.has_param("offset")) {
    auto text = req.get_param_value("offset");
    char* end = nullptr;
    errno = 0;
    offset = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || offset < 0)
      return bad_request(fmt::format("offset '{}': expected a whole number "
                                     ">= 0",
                                     text));
  }
  return encoded<std::vector<collected_table>>(ctx, collect_atom_v, *id, offset);
}

reply cancel(context& ctx, const Req& req) {
  auto id = job_in_path(req);
  if (!id)
    return bad_request(id.error());
  return encoded<cancel_outcome>(ctx, cancel_atom_v, *id);
}

/// Runs `args...` at the Dispatcher (deadline operation_deadline) in an
/// actor of its own, recording the answer under a new trigger of job
/// `id`: 202 {"request-id"}, polled at /weir/jobs/{id}/operations/{rid}.
/// Waiting in the request would hold a REST thread, and a client could
/// not tell a stopped jobmanager from a slow checkpoint.
template <class Answer, class... Ts>
reply start_operation(context& ctx, const job_id& id, Ts... args) {
  caf::scoped_actor self{ctx.sys};
  dispatcher_actor d;
  caf::error failed;
  self->request(ctx.supervisor, answer_deadline, lookup_atom_v)
    .receive([&](dispatcher_actor& x, resource_manager_actor&) { d = x; },
             [&](caf::error& err) { failed = err; });
  // An unknown job is refused now (404), as Flink's routes do.
  if (!failed)
    self->request(d, answer_deadline, status_atom_v, id, false)
      .receive([](job_status&) {}, [&](caf::error& err) { failed = err; });
  if (failed)
    return client_refusal(failed);
  auto tid = ctx.triggers->start(id);
  auto triggers = ctx.triggers;
  ctx.sys.spawn([=](caf::event_based_actor* op) {
    op->request(d, operation_deadline, args...)
      .then(
        [=](Answer& x) {
          if constexpr (std::is_same_v<Answer, std::string>)
            triggers->complete(tid, x);
          else
            triggers->complete(tid, std::to_string(x));
        },
        [=](caf::error& err) {
          triggers->fail(tid, describe(err),
                         err.category() == errc_category()
                           ? to_string(static_cast<errc>(err.code()))
                           : std::string{});
        });
  });
  return reply{202, json{{"request-id", tid}}};
}

/// The job id of the path and the JSON body of an operation's request.
caf::expected<std::pair<job_id, json>> operation_request(const Req& req) {
  auto id = job_in_path(req);
  if (!id)
    return id.error();
  auto body = parse_body(req.body);
  if (!body)
    return body.error();
  return std::pair{*id, std::move(*body)};
}

reply checkpoint(context& ctx, const Req& req) {
  auto op = operation_request(req);
  if (!op)
    return bad_request(op.error());
  auto& [id, body] = *op;
  auto full = bool_field(body, "full", false);
  if (!full)
    return bad_request(full.error());
  return start_operation<int64_t>(ctx, id, take_checkpoint_atom_v, id, *full);
}

reply savepoint(context& ctx, const Req& req) {
  auto op = operation_request(req);
  if (!op)
    return bad_request(op.error());
  auto& [id, body] = *op;
  auto given = string_field(body, "directory", "");
  if (!given)
    return bad_request(given.error());
  auto stop = bool_field(body, "stop", false);
  if (!stop)
    return bad_request(stop.error());
  auto drain = bool_field(body, "drain", false);
  if (!drain)
    return bad_request(drain.error());
  auto dir = savepoint_directory(*given, "directory");
  if (!dir)
    return bad_request(dir.error());
  auto mode = !*stop   ? savepoint_mode::keep_running
              : *drain ? savepoint_mode::stop_and_drain
                       : savepoint_mode::stop;
  return start_operation<std::string>(ctx, id, savepoint_atom_v, id, *dir,
                                      mode);
}

/// POST /weir/jobs/{id}/rescaling {"parallelism"}: an operation whose
/// result is the new parallelism.
reply rescale(context& ctx, const Req& req) {
  auto op = operation_request(req);
  if (!op)
    return bad_request(op.error());
  auto& [id, body] = *op;
  auto n = int_field(body, "parallelism", 1, max_parallelism);
  if (!n)
    return bad_request(n.error());
  if (!*n)
    return bad_request("field 'parallelism' is missing");
  return start_operation<int32_t>(ctx, id, rescale_atom_v, id,
                                  static_cast<int32_t>(**n));
}

/// GET /weir/jobs/{id}/operations/{rid}: 202 {"status": "IN_PROGRESS"},
/// 200 {"result": the savepoint's path or the checkpoint's id}, or the
/// operation's error.
reply operation(context& ctx, const Req& req) {
  auto id = job_in_path(req);
  if (!id)
    return bad_request(id.error());
  auto state = ctx.triggers->find(*id, req.matches[2].str());
  if (!state)
    return client_refusal(make_error(
      errc::unknown_job, fmt::format("no operation {} of job {} (a restarted "
                                     "jobmanager knows none)",
                                     req.matches[2].str(), id->to_string())));
  if (!state->done)
    return reply{202, json{{"status", "IN_PROGRESS"}}};
  if (state->failure.empty())
    return reply{200, json{{"result", state->location}}};
  auto code = parse_errc(state->code);
  return client_refusal(make_error(code ? *code : errc::timeout,
                                   state->failure));
}

/// PUT /weir/blobs/{hash}: a user library or file of a job about to be
/// submitted, its bytes as the body; they must have that content hash.
reply put_blob(context& ctx, const Req& req) {
  auto hash = req.matches[1].str();
  if (storage::content_hash(req.body) != hash)
    return bad_request(fmt::format("blob {}: the body's content hash is {}",
                                   hash, storage::content_hash(req.body)));
  return ask<bool>(
    ctx, store_deadline, [](bool) { return reply{200, json::object()}; },
    blob_atom_v, put_atom_v, hash, req.body);
}

/// POST /weir/jobs: a JobGraph (client/wire.hpp), validated and stored by
/// the Dispatcher as from any client; its libraries and files must have
/// been put first.
reply submit(context& ctx, const Req& req) {
  auto body = parse_body(req.body);
  if (!body)
    return bad_request(body.error());
  auto graph = wire::decode<job_graph>(*body, "job graph");
  if (!graph)
    return client_refusal(graph.error());
  return ask<job_id>(
    ctx, store_deadline,
    [](job_id& id) { return reply{200, json{{"jobid", id.to_string()}}}; },
    submit_atom_v, std::move(*graph));
}

template <class F>
auto route(context& ctx, F f) {
  return [&ctx, f](const Req& req, Res& res) { send(res, f(ctx, req)); };
}

} // namespace

void add_client_routes(httplib::Server& http, context& ctx) {
  http.Get("/weir/jobs",
           route(ctx, [](context& c, const Req&) { return list(c); }));
  http.Post("/weir/jobs", route(ctx, submit));
  http.Get(R"(/weir/jobs/([^/]+))", route(ctx, status));
  http.Get(R"(/weir/jobs/([^/]+)/result)", route(ctx, result));
  http.Get(R"(/weir/jobs/([^/]+)/collect)", route(ctx, collect));
  http.Post(R"(/weir/jobs/([^/]+)/cancel)", route(ctx, cancel));
  http.Post(R"(/weir/jobs/([^/]+)/checkpoints)", route(ctx, checkpoint));
  http.Post(R"(/weir/jobs/([^/]+)/savepoints)", route(ctx, savepoint));
  http.Post(R"(/weir/jobs/([^/]+)/rescaling)", route(ctx, rescale));
  http.Get(R"(/weir/jobs/([^/]+)/operations/([^/]+))", route(ctx, operation));
  http.Put(R"(/weir/blobs/([^/]+))", route(ctx, put_blob));
}

} // namespace weir::rest
