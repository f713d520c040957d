#pragma once

// Internal to the jobmanager's REST server and a taskmanager's metrics
// endpoint: how both listen and serve with cpp-httplib. Only their .cpp
// files include it (httplib is heavy).

#include <string>
#include <utility>
#include <thread>

#include <httplib.h>

namespace weir {

/// SO_REUSEADDR only: httplib's default SO_REUSEPORT would let a second
/// process share a port in use (the kernel then splits the requests
/// between them), so a port in use is refused, while a restart still finds
/// its port in TIME_WAIT free.
void refuse_shared_ports(httplib::Server& http);

/// Why a request must be refused before its body is read ("" if not),
/// and the status: httplib bounds only bodies with a Content-Length, so a
/// chunked or compressed body (which it would inflate) is refused; a
/// request with neither Content-Length nor Transfer-Encoding gets
/// `Content-Length: 0` (it has no body, RFC 9112 section 6.3; httplib would
/// read until the client closes). With `same_origin_writes`, a browser's
/// cross-origin request that is not GET or HEAD (its Origin is not this
/// Host) is refused: a web page must not submit or cancel jobs.
std::pair<int, std::string> body_refusal(const httplib::Request& req,
                                         bool same_origin_writes);

/// Reserves the body's announced Content-Length (at most `max_body`)
/// before httplib reads it: appending to a string that doubles as it grows
/// held up to twice a body at once. Untouched pages take no memory, so a
/// body announced and not sent costs none.
void reserve_body(const httplib::Request& req, size_t max_body);

/// Serves `http` (bound) on a new thread, returned once it runs: until
/// then, stop() would not stop it.
std::thread serve(httplib::Server& http);

/// "http://ADDRESS:PORT" (an IPv6 address in brackets).
std::string http_url(const std::string& address, int port);

} // namespace weir
