#include "cluster/rest_server.hpp"

#include <sys/socket.h>

#include <chrono>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include <fmt/format.h>
#include <httplib.h>

#include "cluster/rest_json.hpp"
#include "messages/dispatcher.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;
using nlohmann::json;

/// How long one REST request waits for an actor's answer.
constexpr auto answer_deadline = 5s;

/// An HTTP status and a JSON body.
struct reply {
  int status = 200;
  json body;
};

reply error_reply(int status, const std::string& message) {
  return reply{status, rest::errors(message)};
}

/// The status of an actor's refusal: an unknown job is 404 (as in Flink),
/// anything else (a timeout, a lost actor) 500.
reply refused(const caf::error& err) {
  bool unknown = err.category() == errc_category()
                 && err.code() == static_cast<uint8_t>(errc::unknown_job);
  return error_reply(unknown ? 404 : 500, describe(err));
}

void send(httplib::Response& res, const reply& r) {
  res.status = r.status;
  res.set_content(r.body.dump(), "application/json");
}

/// httplib's own refusals (no body yet) in Flink's error form: a path
/// without a route is 404 "Not found: PATH".
httplib::Server::HandlerResponse error_body(const httplib::Request& req,
                                            httplib::Response& res) {
  if (!res.body.empty())
    return httplib::Server::HandlerResponse::Unhandled;
  auto message = res.status == 404
                   ? fmt::format("Not found: {}", req.path)
                   : fmt::format("HTTP {}: {} {}", res.status, req.method,
                                 req.path);
  res.set_content(rest::errors(message).dump(), "application/json");
  return httplib::Server::HandlerResponse::Handled;
}

} // namespace

struct rest_server::impl {
  caf::actor_system& sys;
  supervisor_actor supervisor;
  std::string address;
  int port = 0;
  httplib::Server http;
  std::thread serving;

  impl(caf::actor_system& s, supervisor_actor sup, std::string addr)
    : sys(s), supervisor(std::move(sup)), address(std::move(addr)) {
  }

  /// Asks the current Dispatcher and ResourceManager (the supervisor's;
  /// restarted ones are found) and renders the answer with `render`.
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

  reply overview() {
    return ask([](caf::scoped_actor& self, dispatcher_actor& d,
                  resource_manager_actor& rm) {
      reply out = error_reply(500, "no answer");
      self->request(d, answer_deadline, list_atom_v)
        .receive(
          [&](std::vector<job_status>& jobs) {
            self->request(rm, answer_deadline, overview_atom_v)
              .receive(
                [&](cluster_overview& c) {
                  out = reply{200, rest::overview(c, jobs)};
                },
                [&](caf::error& err) { out = refused(err); });
          },
          [&](caf::error& err) { out = refused(err); });
      return out;
    });
  }

  /// The list holds each job's state; its subtask counts come from the
  /// JobMaster: asks for the status of each job not ended (one that
  /// cannot answer keeps what the list says).
  static void live_counts(caf::scoped_actor& self, dispatcher_actor& d,
                          std::vector<job_status>& jobs) {
    for (auto& j : jobs) {
      if (is_globally_terminal(j.state))
        continue;
      self->request(d, answer_deadline, status_atom_v, j.id, false)
        .receive([&](job_status& s) { j = std::move(s); },
                 [](caf::error&) {});
    }
  }

  reply jobs(bool detailed) {
    return ask([=](caf::scoped_actor& self, dispatcher_actor& d,
                   resource_manager_actor&) {
      reply out = error_reply(500, "no answer");
      self->request(d, answer_deadline, list_atom_v)
        .receive(
          [&](std::vector<job_status>& jobs) {
            if (detailed)
              live_counts(self, d, jobs);
            out = reply{200, detailed ? rest::jobs_overview(jobs, now_ms())
                                      : rest::jobs(jobs)};
          },
          [&](caf::error& err) { out = refused(err); });
      return out;
    });
  }

  reply job(const std::string& text) {
    auto id = job_id::parse(text);
    if (!id)
      return error_reply(400, fmt::format("malformed job id '{}': expected "
                                          "32 hexadecimal characters",
                                          text));
    return ask([=](caf::scoped_actor& self, dispatcher_actor& d,
                   resource_manager_actor&) {
      reply out = error_reply(500, "no answer");
      self->request(d, answer_deadline, status_atom_v, *id, true)
        .receive(
          [&](job_status& s) {
            out = reply{200, rest::job_details(s, now_ms())};
          },
          [&](caf::error& err) { out = refused(err); });
      return out;
    });
  }

  void routes() {
    http.Get("/overview", [this](const httplib::Request&, httplib::Response& res) {
      send(res, overview());
    });
    http.Get("/jobs", [this](const httplib::Request&, httplib::Response& res) {
      send(res, jobs(false));
    });
    http.Get("/jobs/overview",
             [this](const httplib::Request&, httplib::Response& res) {
               send(res, jobs(true));
             });
    http.Get(R"(/jobs/([^/]+))",
             [this](const httplib::Request& req, httplib::Response& res) {
               send(res, job(req.matches[1]));
             });
    http.set_error_handler(httplib::Server::HandlerWithResponse{error_body});
  }
};

caf::expected<std::unique_ptr<rest_server>>
rest_server::start(caf::actor_system& sys, supervisor_actor supervisor,
                   const std::string& address, uint16_t port) {
  auto x = std::make_unique<impl>(sys, std::move(supervisor), address);
  x->routes();
  // httplib's default is SO_REUSEPORT, which lets a second jobmanager share
  // a port in use (the kernel then splits the requests between them):
  // SO_REUSEADDR only, so a port in use is refused and a restart still
  // finds its port in TIME_WAIT free.
  x->http.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  bool bound = false;
  if (port == 0) {
    x->port = x->http.bind_to_any_port(address);
    bound = x->port > 0;
  } else {
    x->port = port;
    bound = x->http.bind_to_port(address, port);
  }
  if (!bound)
    return make_error(errc::invalid_config,
                      fmt::format("cannot listen on {}:{} for the REST API "
                                  "(rest.bind-address, rest.port)",
                                  address, port));
  auto* http = &x->http;
  x->serving = std::thread{[http] { http->listen_after_bind(); }};
  // Until it runs, stop() would not stop it: the destructor waits for this.
  while (!http->is_running())
    std::this_thread::yield();
  return std::unique_ptr<rest_server>{new rest_server(std::move(x))};
}

rest_server::rest_server(std::unique_ptr<impl> x) : impl_(std::move(x)) {
}

rest_server::~rest_server() {
  impl_->http.stop();
  if (impl_->serving.joinable())
    impl_->serving.join();
}

uint16_t rest_server::port() const {
  return static_cast<uint16_t>(impl_->port);
}

std::string rest_server::url() const {
  auto host = impl_->address.find(':') != std::string::npos
                ? "[" + impl_->address + "]"
                : impl_->address;
  return fmt::format("http://{}:{}", host, impl_->port);
}

} // namespace weir
