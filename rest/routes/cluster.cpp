// Routes of the cluster: /overview, /config, /jobmanager/config,
// /jobmanager/logs, /taskmanagers, /taskmanagers/{id} and its logs,
// DELETE /cluster.
#include "rest/context.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <variant>

#include "actors/common/log_files.hpp"
#include "messages/errors.hpp"
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

/// The TaskExecutor `id` names (Flink's 32-hex id or weir's name) in
/// `tms`, or nullptr.
const task_manager_info* named(const std::vector<task_manager_info>& tms,
                               const std::string& id) {
  auto i = std::find_if(tms.begin(), tms.end(), [&](auto& tm) {
    return tm.id.value == id || flink_resource_id(tm.id) == id;
  });
  return i == tms.end() ? nullptr : &*i;
}

reply unknown_task_manager(const std::string& id) {
  return error_reply(404, "TaskManager " + id + " does not exist");
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
          auto* tm = named(tms, id);
          out = tm == nullptr ? unknown_task_manager(id)
                              : reply{200, task_manager(*tm)};
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

/// Flink's LogListInfo: {"logs": [{name, size, mtime}]}.
nlohmann::json log_list(const std::vector<log_file>& files) {
  auto logs = nlohmann::json::array();
  for (auto& f : files)
    logs.push_back({{"name", f.name}, {"size", f.size}, {"mtime", f.mtime_ms}});
  return nlohmann::json{{"logs", logs}};
}

/// Reads a piece of a log file at an offset (the jobmanager's own, or a
/// TaskExecutor's through the ResourceManager).
using piece_reader = std::function<caf::expected<std::string>(int64_t)>;

/// Sends a log file as text, one piece per chunk, so that a large log is
/// never held in memory whole. A piece that cannot be read ends the answer
/// early (the client sees a cut chunked response).
void send_log(Res& res, piece_reader read) {
  auto offset = std::make_shared<int64_t>(0);
  res.set_chunked_content_provider(
    "text/plain; charset=utf-8",
    [read = std::move(read), offset](size_t, httplib::DataSink& sink) {
      auto piece = read(*offset);
      if (!piece)
        return false;
      if (piece->empty()) {
        sink.done();
        return true;
      }
      *offset += static_cast<int64_t>(piece->size());
      return sink.write(piece->data(), piece->size());
    });
}

/// The 404 of a log file that is not listed ("": the main log of a
/// process that logs to stderr).
reply unknown_log(const std::string& name, const std::string& list) {
  if (name.empty())
    return error_reply(404, "no log file: the process logs to stderr "
                            "(start it with --log FILE)");
  return error_reply(404, "no log file '" + name + "' (GET " + list
                            + " lists them)");
}

/// GET /jobmanager/logs/{name}, and /jobmanager/log (the main log).
void send_jobmanager_log(const std::string& name, Res& res) {
  auto files = log_files();
  auto known = std::any_of(files.begin(), files.end(),
                           [&](auto& f) { return f.name == name; });
  if (!known) {
    send(res, unknown_log(name, "/jobmanager/logs"));
    return;
  }
  send_log(res, [name](int64_t offset) { return read_log_piece(name, offset); });
}

/// TaskExecutor `id` (Flink's 32-hex id or weir's name), as the
/// ResourceManager registered it; a 404 reply otherwise.
std::variant<resource_id, reply>
find_task_manager(caf::scoped_actor& self, resource_manager_actor& rm,
                  const std::string& id) {
  std::variant<resource_id, reply> out = error_reply(500, "no answer");
  self->request(rm, answer_deadline, list_atom_v)
    .receive(
      [&](std::vector<task_manager_info>& tms) {
        if (auto* tm = named(tms, id))
          out = tm->id;
        else
          out = unknown_task_manager(id);
      },
      [&](caf::error& err) { out = refused(err); });
  return out;
}

/// GET /taskmanagers/{id}/logs: the log files on TaskExecutor `id`'s host.
reply task_manager_logs(context& ctx, const std::string& id) {
  return ctx.ask([&](caf::scoped_actor& self, dispatcher_actor&,
                     resource_manager_actor& rm) {
    auto tm = find_task_manager(self, rm, id);
    if (auto* r = std::get_if<reply>(&tm))
      return *r;
    reply out = error_reply(500, "no answer");
    self->request(rm, answer_deadline, log_atom_v, std::get<resource_id>(tm))
      .receive(
        [&](std::vector<log_file>& files) { out = reply{200, log_list(files)}; },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
}

/// GET /taskmanagers/{id}/logs/{name} ("": its main log, /log): the file,
/// read piece by piece on its host.
void send_task_manager_log(context& ctx, const std::string& id,
                           std::string name, Res& res) {
  auto list = "/taskmanagers/" + id + "/logs";
  std::optional<resource_id> tm;
  auto listed = ctx.ask([&](caf::scoped_actor& self, dispatcher_actor&,
                            resource_manager_actor& rm) {
    auto found = find_task_manager(self, rm, id);
    if (auto* r = std::get_if<reply>(&found))
      return *r;
    tm = std::get<resource_id>(found);
    reply out = error_reply(500, "no answer");
    self->request(rm, answer_deadline, log_atom_v, *tm)
      .receive(
        [&](std::vector<log_file>& files) {
          if (name.empty() && !files.empty())
            name = files.front().name;
          auto known = std::any_of(files.begin(), files.end(),
                                   [&](auto& f) { return f.name == name; });
          out = known ? reply{200, {}} : unknown_log(name, list);
        },
        [&](caf::error& err) { out = refused(err); });
    return out;
  });
  if (listed.status != 200) {
    send(res, listed);
    return;
  }
  send_log(res, [&ctx, tm = *tm, name](int64_t offset) {
    caf::expected<std::string> piece{std::string{}};
    auto r = ctx.ask([&](caf::scoped_actor& self, dispatcher_actor&,
                         resource_manager_actor& rm) {
      self->request(rm, answer_deadline, log_atom_v, tm, name, offset)
        .receive([&](std::string& text) { piece = std::move(text); },
                 [&](caf::error& err) { piece = std::move(err); });
      return reply{200, {}};
    });
    if (r.status != 200)
      return caf::expected<std::string>{make_error(errc::timeout)};
    return piece;
  });
}

} // namespace

void add_cluster_routes(httplib::Server& http, context& ctx) {
  http.Get("/jobmanager/logs", [](const Req&, Res& res) {
    send(res, reply{200, log_list(log_files())});
  });
  http.Get(R"(/jobmanager/logs/([^/]+))", [](const Req& req, Res& res) {
    send_jobmanager_log(req.matches[1], res);
  });
  // Flink's main log of the process (its dashboard's "Logs" tab).
  http.Get("/jobmanager/log", [](const Req&, Res& res) {
    auto files = log_files();
    send_jobmanager_log(files.empty() ? "" : files.front().name, res);
  });
  // Flink's shutdownCluster: this jobmanager stops as on SIGTERM, once the
  // answer is out.
  http.Delete("/cluster", [&ctx](const Req& req, Res& res) {
    if (!ctx.shut_down) {
      send(res, error_reply(404, "Not found: " + req.path));
      return;
    }
    res.status = 200;
    auto shut_down = ctx.shut_down;
    res.set_content_provider(
      2, "application/json",
      [](size_t offset, size_t, httplib::DataSink& sink) {
        return sink.write(&"{}"[offset], 2 - offset);
      },
      [shut_down](bool) { shut_down(); });
  });
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
  http.Get(R"(/taskmanagers/([^/]+)/logs)", [&ctx](const Req& req, Res& res) {
    send(res, task_manager_logs(ctx, req.matches[1]));
  });
  http.Get(R"(/taskmanagers/([^/]+)/logs/([^/]+))",
           [&ctx](const Req& req, Res& res) {
             send_task_manager_log(ctx, req.matches[1], req.matches[2], res);
           });
  http.Get(R"(/taskmanagers/([^/]+)/log)", [&ctx](const Req& req, Res& res) {
    send_task_manager_log(ctx, req.matches[1], "", res);
  });
}

} // namespace weir::rest
