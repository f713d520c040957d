#include "client/job_client.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "client/wire.hpp"
#include "messages/errors.hpp"

namespace weir::client {

namespace {

using namespace std::chrono_literals;
using nlohmann::json;

/// A look-up; the jobmanager answers from memory (its REST routes wait
/// 5 s for an actor's answer), so a silent server (a stopped jobmanager)
/// is given up on soon.
constexpr std::chrono::milliseconds quick = 8s;
/// Storing a library or a job (synced to disk).
constexpr std::chrono::milliseconds storing = 2min;

/// The error an answer carries: weir's code when the server named one.
caf::error error_of(const rest_answer& a) {
  auto text = a.error_text();
  if (a.body.is_object()) {
    auto code = a.body.find("weir-error");
    if (code != a.body.end() && code->is_string())
      if (auto x = parse_errc(code->get<std::string>()))
        return make_error(*x, text);
  }
  if (a.status == 404)
    return make_error(errc::unknown_job, text);
  if (a.status >= 500)
    // The jobmanager answers, but one of its actors did not in time (a
    // busy JobMaster): worth asking again.
    return make_error(errc::timeout, text);
  if (a.status == 403)
    return make_error(errc::invalid_config,
                      fmt::format("{} (the REST API refuses changes to "
                                  "clients without a certificate: see "
                                  "docs/security.md)",
                                  text));
  return make_error(errc::peer_lost, text);
}

/// The answer's body as a T, or the error it carries.
template <class T>
caf::expected<T> value_of(caf::expected<rest_answer> a, const char* what) {
  if (!a)
    return a.error();
  if (!a->ok())
    return error_of(*a);
  return wire::decode<T>(a->body, what);
}

/// A field of an answer's JSON object.
template <class T>
caf::expected<T> field_of(caf::expected<rest_answer> a, const char* name) {
  if (!a)
    return a.error();
  if (!a->ok())
    return error_of(*a);
  auto& body = a->body;
  if (!body.is_object() || !body.contains(name))
    return make_error(errc::peer_lost,
                      fmt::format("the jobmanager's answer has no '{}'", name));
  try {
    return body[name].get<T>();
  } catch (const std::exception&) {
    return make_error(errc::peer_lost,
                      fmt::format("the jobmanager's answer has a '{}' of the "
                                  "wrong type",
                                  name));
  }
}

std::string job_path(const job_id& id, const char* rest = "") {
  return fmt::format("/weir/jobs/{}{}", id.to_string(), rest);
}

} // namespace

job_client::job_client(rest_endpoint at) : http_(std::move(at)) {
}

caf::expected<std::vector<job_status>> job_client::list() {
  return value_of<std::vector<job_status>>(http_.get("/weir/jobs", quick),
                                           "job list");
}

caf::expected<job_status> job_client::status(const job_id& id,
                                             bool detailed) {
  auto path = job_path(id, detailed ? "?detailed=true" : "");
  return value_of<job_status>(http_.get(path, quick), "job status");
}

caf::expected<cancel_outcome> job_client::cancel(const job_id& id) {
  return value_of<cancel_outcome>(
    http_.post(job_path(id, "/cancel"), json::object(), quick),
    "cancel outcome");
}

caf::expected<std::string> job_client::operation(const job_id& id,
                                                  const char* route,
                                                  const nlohmann::json& body) {
  auto rid = field_of<std::string>(http_.post(job_path(id, route), body, quick),
                                   "request-id");
  if (!rid)
    return rid.error();
  // The jobmanager takes the checkpoint (it waits up to 10 minutes);
  // polling it shows a stopped or lost jobmanager within seconds.
  auto path = job_path(id, "/operations/") + *rid;
  auto pause = 10ms;
  for (;;) {
    // The REST API answers these from its memory, at once.
    auto a = http_.get(path, 3s);
    if (a && a->status == 202) {
      std::this_thread::sleep_for(pause);
      pause = std::min<std::chrono::milliseconds>(pause * 2, 500ms);
      continue;
    }
    return field_of<std::string>(std::move(a), "result");
  }
}

caf::expected<int64_t> job_client::checkpoint(const job_id& id, bool full) {
  auto n = operation(id, "/checkpoints", json{{"full", full}});
  if (!n)
    return n.error();
  try {
    return std::stoll(*n);
  } catch (const std::exception&) {
    return make_error(errc::peer_lost,
                      fmt::format("the jobmanager answered a checkpoint id "
                                  "'{}' that is not one",
                                  *n));
  }
}

caf::expected<std::string>
job_client::savepoint(const job_id& id, const std::string& dir,
                      savepoint_mode mode) {
  return operation(id, "/savepoints",
                   json{{"directory", dir},
                        {"stop", mode != savepoint_mode::keep_running},
                        {"drain", mode == savepoint_mode::stop_and_drain}});
}

caf::expected<int32_t> job_client::rescale(const job_id& id,
                                           int32_t parallelism) {
  auto n = operation(id, "/rescaling", json{{"parallelism", parallelism}});
  if (!n)
    return n.error();
  if (*n != std::to_string(parallelism))
    return make_error(errc::peer_lost,
                      fmt::format("the jobmanager answered a rescale to {} "
                                  "with '{}'",
                                  parallelism, *n));
  return parallelism;
}

caf::expected<std::vector<collected_table>> job_client::collect(const job_id& id,
                                                       int64_t offset) {
  auto path = job_path(id, "/collect") + fmt::format("?offset={}", offset);
  return value_of<std::vector<collected_table>>(http_.get(path, quick),
                                       "collected rows");
}

caf::expected<std::optional<job_result>>
job_client::result(const job_id& id) {
  auto a = http_.get(job_path(id, "/result"), quick);
  if (a && a->status == 202)
    return std::optional<job_result>{};
  auto r = value_of<job_result>(std::move(a), "job result");
  if (!r)
    return r.error();
  return std::optional<job_result>{std::move(*r)};
}

caf::expected<std::optional<job_result>>
job_client::await_result(const job_id& id,
                         std::chrono::milliseconds patience) {
  // Short jobs end within milliseconds: the first poll comes 10 ms after
  // the wait began, each next one half as late again, up to 100 ms apart
  // (Flink's clients back off the same way). A poll is one request that
  // the REST API answers at once, never holding a thread; polling every
  // 10 ms cost the jobmanager more CPU than running a one-second job.
  auto now = std::chrono::steady_clock::now();
  auto deadline = now + patience;
  if (!(id == polled_)) {
    polled_ = id;
    polled_since_ = now;
  }
  for (;;) {
    auto r = result(id);
    if (r && *r)
      return r;
    if (!r && r.error() != make_error(errc::timeout))
      return r;
    r = std::optional<job_result>{}; // a busy jobmanager: ask again
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::milliseconds::zero())
      return r;
    auto waited = std::chrono::steady_clock::now() - polled_since_;
    auto pause = std::clamp<std::chrono::nanoseconds>(waited / 2, 10ms, 100ms);
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(pause, left));
  }
}

caf::error job_client::put_blob(const std::string& hash, std::string bytes) {
  auto a = http_.put("/weir/blobs/" + hash, std::move(bytes), storing);
  if (!a)
    return a.error();
  if (!a->ok())
    return error_of(*a);
  return caf::none;
}

caf::expected<job_id> job_client::submit(const job_graph& g) {
  auto text = field_of<std::string>(http_.post("/weir/jobs", wire::encode(g),
                                               storing),
                                    "jobid");
  if (!text)
    return text.error();
  if (auto id = job_id::parse(*text))
    return *id;
  return make_error(errc::peer_lost,
                    fmt::format("the jobmanager answered a job id '{}' that "
                                "is not one",
                                *text));
}

} // namespace weir::client
