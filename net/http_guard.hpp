#pragma once

// Internal to the jobmanager's REST server and a taskmanager's metrics
// endpoint (httplib is heavy): cpp-httplib's servers with the limits its
// Debian build lacks. Debian compiles cpp-httplib 0.11.4 with 8 threads, a
// listen backlog of 5 and only a per-read timeout, so a few connections
// sending a header byte every few seconds held every thread for as long as
// they liked. These servers read each connection themselves (httplib's
// request parsing and routing stay its own, through its protected
// process_request) and hold to http_limits.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <httplib.h>

namespace weir {

/// What every HTTP listener of weir holds to.
struct http_limits {
  /// A request's line and headers must have arrived this long after the
  /// connection opened or its previous request was answered; an idle
  /// keep-alive connection is closed then too.
  std::chrono::milliseconds head_timeout{10000};
  /// A whole request, its body included (100 MiB take 100 s at 1 MiB/s).
  std::chrono::milliseconds request_timeout{120000};
  /// Each read and write of a body or answer.
  std::chrono::milliseconds io_timeout{5000};
  /// Connections served at once (each has a thread). When all are taken,
  /// the oldest one still waiting for its request's head is closed to make
  /// room; when none is waiting, the new connection waits for a thread.
  size_t max_connections = 32;
};

class connection_table;

/// What both servers do once bound: listen(2) again with the largest
/// backlog the kernel allows (httplib's compiled one is 5).
class backlog_widener {
public:
  virtual ~backlog_widener() = default;
  virtual void widen_backlog() = 0;
};

/// httplib::Server (plain HTTP) under `limits`.
class guarded_http_server : public httplib::Server, public backlog_widener {
public:
  explicit guarded_http_server(const http_limits& limits = {});
  ~guarded_http_server() override;

  void widen_backlog() override;

private:
  bool process_and_close_socket(socket_t sock) override;

  http_limits limits_;
  std::shared_ptr<connection_table> table_;
};

/// httplib::SSLServer (HTTPS, with client certificates when `client_ca`
/// is given) under `limits`.
class guarded_https_server : public httplib::SSLServer,
                             public backlog_widener {
public:
  guarded_https_server(const char* certificate, const char* key,
                       const char* client_ca, const http_limits& limits = {});
  ~guarded_https_server() override;

  void widen_backlog() override;

private:
  bool process_and_close_socket(socket_t sock) override;

  http_limits limits_;
  std::shared_ptr<connection_table> table_;
};

} // namespace weir
