#include "cluster/http_serving.hpp"

#include <sys/socket.h>

#include <fmt/format.h>

namespace weir {

void refuse_shared_ports(httplib::Server& http) {
  http.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
}

std::thread serve(httplib::Server& http) {
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
