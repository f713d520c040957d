// Routes of the cluster: /overview, /config, /jobmanager/config,
// /jobmanager/logs, /taskmanagers, /taskmanagers/{id}, DELETE /cluster.
#include "rest/context.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include "actors/common/event_log.hpp"
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

/// GET /jobmanager/logs: the event log's file (`--log FILE`), or none
/// when the jobmanager logs to stderr.
reply log_list() {
  auto logs = nlohmann::json::array();
  auto path = event_log_path();
  struct stat st {};
  if (!path.empty() && ::stat(path.c_str(), &st) == 0)
    logs.push_back(
      {{"name", std::filesystem::path{path}.filename().string()},
       {"size", static_cast<int64_t>(st.st_size)},
       {"mtime", static_cast<int64_t>(st.st_mtim.tv_sec) * 1000
                   + st.st_mtim.tv_nsec / 1000000}});
  return reply{200, nlohmann::json{{"logs", logs}}};
}

/// GET /jobmanager/logs/{name}: the log file itself, as text, read in
/// pieces as it is sent (it may be large).
void send_log(const std::string& name, Res& res) {
  auto path = event_log_path();
  if (path.empty() || std::filesystem::path{path}.filename() != name) {
    send(res, error_reply(404, "no log file '" + name + "' (GET "
                               "/jobmanager/logs lists them)"));
    return;
  }
  auto file = std::make_shared<std::ifstream>(path, std::ios::binary);
  if (!*file) {
    send(res, error_reply(404, "no log file '" + name + "'"));
    return;
  }
  res.set_chunked_content_provider(
    "text/plain; charset=utf-8",
    [file](size_t, httplib::DataSink& sink) {
      char buf[64 * 1024];
      file->read(buf, sizeof(buf));
      if (file->gcount() > 0)
        sink.write(buf, static_cast<size_t>(file->gcount()));
      if (!*file)
        sink.done();
      return true;
    });
}

} // namespace

void add_cluster_routes(httplib::Server& http, context& ctx) {
  http.Get("/jobmanager/logs", [](const Req&, Res& res) {
    send(res, log_list());
  });
  http.Get(R"(/jobmanager/logs/([^/]+))", [](const Req& req, Res& res) {
    send_log(req.matches[1], res);
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
}

} // namespace weir::rest
