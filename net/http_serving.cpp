#include "net/http_serving.hpp"

#include "net/http_guard.hpp"

#include <sys/socket.h>

#include <fmt/format.h>

namespace weir {

void refuse_shared_ports(httplib::Server& http) {
  http.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
}

std::pair<int, std::string> body_refusal(const httplib::Request& req,
                                         bool same_origin_writes) {
  if (req.has_header("Transfer-Encoding"))
    return {411, "send the request body with a Content-Length (chunked "
                 "bodies are not accepted)"};
  if (req.has_header("Content-Encoding"))
    return {415, "compressed request bodies are not accepted"};
  if (!req.has_header("Content-Length")) {
    // httplib hands the request as const; it is its own local object, and
    // this is the length HTTP gives such a request.
    const_cast<httplib::Request&>(req).set_header("Content-Length", "0");
  }
  bool reads = req.method == "GET" || req.method == "HEAD";
  if (same_origin_writes && !reads && req.has_header("Origin")) {
    auto origin = req.get_header_value("Origin");
    auto host = req.get_header_value("Host");
    if (origin != "http://" + host && origin != "https://" + host)
      return {403, "a request from another origin (" + origin
                     + ") may not change anything"};
  }
  return {0, {}};
}

void reserve_body(const httplib::Request& req, size_t max_body) {
  auto announced = req.get_header_value<uint64_t>("Content-Length");
  if (announced > 0 && announced <= max_body)
    // httplib hands the request as const; it is its own local object.
    const_cast<httplib::Request&>(req).body.reserve(
      static_cast<size_t>(announced));
}

std::thread serve(httplib::Server& http) {
  if (auto* widener = dynamic_cast<backlog_widener*>(&http))
    widener->widen_backlog();
  auto* server = &http;
  std::thread serving{[server] { server->listen_after_bind(); }};
  while (!http.is_running())
    std::this_thread::yield();
  return serving;
}

std::string http_url(const std::string& address, int port) {
  auto host = address.find(':') != std::string::npos ? "[" + address + "]"
                                                     : address;
  return fmt::format("http://{}:{}", host, port);
}

} // namespace weir
