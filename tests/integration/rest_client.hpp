#pragma once

// An HTTP client of the jobmanager's REST API for the integration tests:
// the URL the jobmanager logs, requests whose answers must come as JSON.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <csignal>
#include <regex>
#include <string>

#include <doctest/doctest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cluster_fixture.hpp"
#include <chrono>
#include "process.hpp"

namespace weir::test {

/// A request whose server closed the connection first (a refused TLS
/// handshake, a body refused early) is an error the test checks, not the
/// end of the test process: OpenSSL writes without MSG_NOSIGNAL.
inline const bool sigpipe_ignored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

/// The URL the jobmanager logged for its REST API ("" after 30 s).
inline std::string rest_url(running_process& jobmanager) {
  using namespace std::chrono_literals;
  if (!jobmanager.wait_for_stderr("REST API at http", 30s)
      || !jobmanager.wait_for_stderr("\n", 30s))
    return {};
  std::smatch m;
  const auto& log = jobmanager.stderr_so_far();
  if (!std::regex_search(log, m, std::regex{"REST API at (https?://[0-9.]+:[0-9]+)"}))
    return {};
  return m[1];
}

/// A status and a JSON body.
struct answer {
  int status = 0;
  nlohmann::json body;
};

/// The answer of `res`, which must have come, as JSON.
inline answer answered(const httplib::Result& res) {
  REQUIRE(res);
  CHECK(res->get_header_value("Content-Type") == "application/json");
  return answer{res->status, nlohmann::json::parse(res->body)};
}

/// A client of `url` with generous deadlines.
inline httplib::Client rest_client(const std::string& url) {
  using namespace std::chrono_literals;
  httplib::Client client{url};
  client.set_connection_timeout(10s);
  client.set_read_timeout(30s);
  return client;
}

inline answer get(const std::string& url, const std::string& path) {
  return answered(rest_client(url).Get(path));
}

/// POST `body` (raw text) as JSON.
inline answer post_text(const std::string& url, const std::string& path,
                        const std::string& body) {
  return answered(rest_client(url).Post(path, body, "application/json"));
}

inline answer post(const std::string& url, const std::string& path,
                   const nlohmann::json& body) {
  return post_text(url, path, body.dump());
}

inline answer patch(const std::string& url, const std::string& path) {
  return answered(rest_client(url).Patch(path, "", "application/json"));
}

/// POST /jars/upload of `bytes` named `name` in field `field`.
inline answer upload(const std::string& url, const std::string& name,
                     const std::string& bytes,
                     const std::string& field = "jarfile") {
  httplib::MultipartFormDataItems items{
    {field, bytes, name, "application/octet-stream"}};
  return answered(rest_client(url).Post("/jars/upload", items));
}

/// Flink's error body.
inline nlohmann::json errors(const std::string& message) {
  return nlohmann::json{{"errors", {message}}};
}

/// A session cluster whose jobmanager serves the REST API (any free port)
/// at `url`; no workers yet.
struct rest_cluster : session_cluster {
  std::string url;

  explicit rest_cluster(std::vector<std::string> flags = {})
    : session_cluster(with_rest(std::move(flags))) {
    url = rest_url(*jobmanager);
    REQUIRE_FALSE(url.empty());
  }

  static std::vector<std::string> with_rest(std::vector<std::string> flags) {
    flags.push_back("-Drest.port=0");
    return flags;
  }
};

/// GET `path` of the API at `url` (no answer within 10 s: an empty result).
inline httplib::Result rest_get(const std::string& url, const std::string& path,
                                const httplib::Headers& headers = {}) {
  using namespace std::chrono_literals;
  httplib::Client client{url};
  client.set_connection_timeout(10s);
  client.set_read_timeout(10s);
  return client.Get(path.c_str(), headers);
}

/// A TCP connection to the loopback port of `url`.
inline int connect_to_url(const std::string& url) {
  auto colon = url.rfind(':');
  auto port = static_cast<uint16_t>(std::stoi(url.substr(colon + 1)));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr))
          == 0);
  return fd;
}

/// Sends `request` as it is on a new connection to the server at `url`
/// and returns what comes back until the server closes (at most 10 s).
inline std::string raw_exchange(const std::string& url, const std::string& request) {
  int fd = connect_to_url(url);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  CHECK(::send(fd, request.data(), request.size(), MSG_NOSIGNAL)
        == static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}


} // namespace weir::test
