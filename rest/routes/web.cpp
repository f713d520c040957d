// The web dashboard on the REST API's port: GET / (index.html) and
// /web/FILE, both from the binary (rest/web_assets.hpp).
#include "rest/context.hpp"

#include <fmt/format.h>

#include "rest/web_assets.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

/// Sends `file` of web/; unknown files are 404 in the API's error form.
/// Browsers revalidate every time (no-cache) and get 304 while the ETag
/// matches: a new weir binary's dashboard is never mixed with an old one.
void serve(const Req& req, Res& res, const std::string& file) {
  const auto* a = web::find_asset(file);
  if (a == nullptr) {
    send(res, error_reply(404, fmt::format("Not found: {}", req.path)));
    return;
  }
  std::string etag{a->etag};
  res.set_header("Cache-Control", "no-cache");
  res.set_header("ETag", etag);
  if (req.get_header_value("If-None-Match") == etag) {
    res.status = 304;
    return;
  }
  res.set_content(std::string{a->body}, std::string{a->content_type});
}

} // namespace

void add_web_routes(httplib::Server& http) {
  http.Get("/", [](const Req& req, Res& res) { serve(req, res, "index.html"); });
  http.Get(R"(/web/(.+))", [](const Req& req, Res& res) {
    serve(req, res, req.matches[1]);
  });
}

} // namespace weir::rest
