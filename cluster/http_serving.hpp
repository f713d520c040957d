#pragma once

// Internal to the jobmanager's REST server and a taskmanager's metrics
// endpoint: how both listen and serve with cpp-httplib. Only their .cpp
// files include it (httplib is heavy).

#include <string>
#include <thread>

#include <httplib.h>

namespace weir {

/// SO_REUSEADDR only: httplib's default SO_REUSEPORT would let a second
/// process share a port in use (the kernel then splits the requests
/// between them), so a port in use is refused, while a restart still finds
/// its port in TIME_WAIT free.
void refuse_shared_ports(httplib::Server& http);

/// Serves `http` (bound) on a new thread, returned once it runs: until
/// then, stop() would not stop it.
std::thread serve(httplib::Server& http);

/// "http://ADDRESS:PORT" (an IPv6 address in brackets).
std::string http_url(const std::string& address, int port);

} // namespace weir
