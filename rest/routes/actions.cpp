// Write routes of a running job: cancel, savepoint, stop; and disposing of
// a savepoint (Flink's paths, bodies and statuses; docs/operations.md §
// REST API).
#include "rest/context.hpp"

#include <charconv>
#include <filesystem>

#include <caf/event_based_actor.hpp>

#include <fmt/format.h>

#include "client/submission.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "rest/body.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;
using nlohmann::json;

/// PATCH /jobs/{jobid}?mode=cancel: 202 once the Dispatcher took the
/// request; 409 for a job that had ended already (Flink since 1.16).
reply cancel(context& ctx, const std::string& text, const Req& req) {
  auto id = parse_job_id(text);
  if (!id)
    return refused(id.error());
  auto mode = req.has_param("mode") ? req.get_param_value("mode") : "cancel";
  if (mode == "stop")
    return error_reply(400, "termination mode 'stop' was removed (as in "
                            "Flink): use POST /jobs/{jobid}/stop");
  if (mode != "cancel")
    return error_reply(400, fmt::format("unknown termination mode '{}' "
                                        "(expected cancel)",
                                        mode));
  return ctx.ask_dispatcher<cancel_outcome>(
    [&](cancel_outcome& o) {
      if (is_globally_terminal(o.before))
        return error_reply(409, fmt::format("job {} has already reached "
                                            "another terminal state ({})",
                                            id->to_string(),
                                            to_string(o.before)));
      return reply{202, json::object()};
    },
    cancel_atom_v, *id);
}

/// Waits for the Dispatcher's answer to a savepoint in an actor of its own
/// (not on httplib's thread) and records it under trigger `tid`.
void await_savepoint(context& ctx, dispatcher_actor d, job_id id,
                     std::string dir, savepoint_mode mode, std::string tid) {
  auto triggers = ctx.triggers;
  ctx.sys.spawn([=](caf::event_based_actor* self) {
    self->request(d, operation_deadline, savepoint_atom_v, id, dir, mode)
      .then([=](std::string& path) { triggers->complete(tid, path); },
            [=](caf::error& err) { triggers->fail(tid, describe(err)); });
  });
}

/// For a job the Dispatcher knows, `start(d)` (on the REST thread, with
/// the Dispatcher's handle) makes the reply; an unknown job is refused now
/// (404), any other failure is the operation's, polled.
template <class Start>
reply for_known_job(context& ctx, const job_id& id, Start start) {
  return ctx.ask([&](caf::scoped_actor& self, dispatcher_actor& d,
                     resource_manager_actor&) {
    reply out = error_reply(500, "no answer");
    self->request(d, answer_deadline, status_atom_v, id, false)
      .receive([&](job_status&) { out = start(d); },
               [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

/// POST /jobs/{jobid}/savepoints ({"target-directory", "cancel-job"}) and
/// /stop ({"targetDirectory", "drain"}): 202 {"request-id"} for a known
/// job; the savepoint runs on.
reply trigger_savepoint(context& ctx, const std::string& text, const Req& req,
                        bool stop_route) {
  auto id = parse_job_id(text);
  if (!id)
    return refused(id.error());
  auto body = parse_body(req.body);
  if (!body)
    return refused(body.error());
  auto field = stop_route ? "targetDirectory" : "target-directory";
  auto given = string_field(*body, field, "");
  if (!given)
    return refused(given.error());
  // Flink's drain: event time advances to the end before the job stops.
  auto flag = stop_route ? bool_field(*body, "drain", false)
                         : bool_field(*body, "cancel-job", false);
  if (!flag)
    return refused(flag.error());
  // None anywhere fails the operation, as in Flink.
  auto dir = savepoint_directory(*given, field);
  if (!dir)
    return refused(dir.error());
  // A client's trigger id makes the request idempotent (Flink's triggerId).
  auto wanted = string_field(*body, "triggerId", "");
  if (!wanted)
    return refused(wanted.error());
  if (!wanted->empty() && !job_id::parse(*wanted))
    return error_reply(400, fmt::format("field 'triggerId' must be 32 "
                                        "hexadecimal characters, not '{}'",
                                        *wanted));
  auto mode = stop_route ? (*flag ? savepoint_mode::stop_and_drain
                                  : savepoint_mode::stop)
                         : (*flag ? savepoint_mode::stop
                                  : savepoint_mode::keep_running);
  return for_known_job(ctx, *id, [&](dispatcher_actor& d) {
    if (wanted->empty()) {
      auto tid = ctx.triggers->start(*id);
      await_savepoint(ctx, d, *id, *dir, mode, tid);
      return reply{202, json{{"request-id", tid}}};
    }
    auto op = ctx.triggers->start(*id, *wanted);
    if (!op)
      return error_reply(409, fmt::format("trigger id {} names an operation "
                                          "of another job",
                                          *wanted));
    if (op->fresh)
      await_savepoint(ctx, d, *id, *dir, mode, op->id);
    return reply{202, json{{"request-id", op->id}}};
  });
}

/// PATCH /jobs/{jobid}/rescaling?parallelism=N: 200 {"request-id"} for a
/// running job (Flink's status); the rescale runs on and is polled at
/// /jobs/{jobid}/rescaling/{triggerid}.
reply trigger_rescale(context& ctx, const std::string& text, const Req& req) {
  auto id = parse_job_id(text);
  if (!id)
    return refused(id.error());
  if (!req.has_param("parallelism"))
    return error_reply(400, "query parameter 'parallelism' is missing");
  auto given = req.get_param_value("parallelism");
  int32_t n = 0;
  auto [end, ec] = std::from_chars(given.data(), given.data() + given.size(), n);
  if (ec != std::errc{} || end != given.data() + given.size() || n < 1
      || n > max_parallelism)
    return error_reply(400, fmt::format("query parameter 'parallelism': '{}' "
                                        "is not a whole number from 1 to {}",
                                        given, max_parallelism));
  return for_known_job(ctx, *id, [&](dispatcher_actor& d) {
    auto tid = ctx.triggers->start(*id);
    auto triggers = ctx.triggers;
    ctx.sys.spawn([=, job = *id](caf::event_based_actor* op) {
      op->request(d, operation_deadline, rescale_atom_v, job, n)
        .then([=](int32_t) { triggers->complete(tid, ""); },
              [=](caf::error& err) { triggers->fail(tid, describe(err)); });
    });
    return reply{200, json{{"request-id", tid}}};
  });
}

/// GET /jobs/{jobid}/savepoints/{triggerid} and
/// /jobs/{jobid}/rescaling/{triggerid}.
reply operation_status_of(context& ctx, const std::string& text,
                          const std::string& tid, const char* what) {
  auto id = parse_job_id(text);
  if (!id)
    return refused(id.error());
  auto state = ctx.triggers->find(*id, tid);
  if (!state)
    return error_reply(404, fmt::format("no {} operation {} of job {}", what,
                                        tid, id->to_string()));
  return reply{200, operation_status(*state)};
}

/// POST /savepoint-disposal ({"savepoint-path"}): deletes a savepoint
/// file, once it has been read as one (nothing else is deleted), and
/// answers Flink's trigger; the operation has ended by then.
reply dispose(context& ctx, const Req& req) {
  auto body = parse_body(req.body);
  if (!body)
    return refused(body.error());
  auto given = string_field(*body, "savepoint-path", "");
  if (!given)
    return refused(given.error());
  if (given->empty())
    return error_reply(400, "field 'savepoint-path' is missing");
  auto path = local_path(*given);
  if (path.empty() || path[0] != '/')
    return error_reply(400, fmt::format("field 'savepoint-path': '{}' is not "
                                        "an absolute path",
                                        *given));
  auto tid = ctx.triggers->start(job_id{});
  if (auto err = client::check_restore_file(path)) {
    ctx.triggers->fail(tid, describe(err));
  } else if (std::error_code ec; !std::filesystem::remove(path, ec)) {
    ctx.triggers->fail(tid, fmt::format("cannot remove '{}': {}", path,
                                        ec.message()));
  } else {
    ctx.triggers->complete(tid, "");
  }
  return reply{200, json{{"request-id", tid}}};
}

} // namespace

void add_action_routes(httplib::Server& http, context& ctx) {
  http.Post("/savepoint-disposal", [&ctx](const Req& req, Res& res) {
    send(res, dispose(ctx, req));
  });
  http.Get(R"(/savepoint-disposal/([^/]+))", [&ctx](const Req& req, Res& res) {
    auto state = ctx.triggers->find(job_id{}, req.matches[1]);
    send(res, state ? reply{200, operation_status(*state)}
                    : error_reply(404, fmt::format("no savepoint disposal {}",
                                                   req.matches[1].str())));
  });
  http.Patch(R"(/jobs/([^/]+))", [&ctx](const Req& req, Res& res) {
    send(res, cancel(ctx, req.matches[1], req));
  });
  http.Post(R"(/jobs/([^/]+)/savepoints)", [&ctx](const Req& req, Res& res) {
    send(res, trigger_savepoint(ctx, req.matches[1], req, false));
  });
  http.Post(R"(/jobs/([^/]+)/stop)", [&ctx](const Req& req, Res& res) {
    send(res, trigger_savepoint(ctx, req.matches[1], req, true));
  });
  http.Get(R"(/jobs/([^/]+)/savepoints/([^/]+))",
           [&ctx](const Req& req, Res& res) {
             send(res, operation_status_of(ctx, req.matches[1],
                                           req.matches[2], "savepoint"));
           });
  http.Patch(R"(/jobs/([^/]+)/rescaling)", [&ctx](const Req& req, Res& res) {
    send(res, trigger_rescale(ctx, req.matches[1], req));
  });
  http.Get(R"(/jobs/([^/]+)/rescaling/([^/]+))",
           [&ctx](const Req& req, Res& res) {
             send(res, operation_status_of(ctx, req.matches[1],
                                           req.matches[2], "rescaling"));
           });
}

} // namespace weir::rest
