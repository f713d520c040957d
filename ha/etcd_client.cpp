#include "ha/etcd_client.hpp"

#include <cstdlib>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "messages/base64.hpp"
#include "messages/errors.hpp"

namespace weir::ha {

namespace {

using json = nlohmann::json;

/// etcd's JSON carries 64-bit numbers as strings (and leaves out zeros).
int64_t number(const json& j, const char* field) {
  auto i = j.find(field);
  if (i == j.end())
    return 0;
  if (i->is_string())
    return std::stoll(i->get<std::string>());
  return i->get<int64_t>();
}

std::string bytes_of(const json& j, const char* field) {
  auto i = j.find(field);
  if (i == j.end())
    return {};
  auto decoded = base64_decode(i->get<std::string>());
  if (!decoded)
    throw std::runtime_error(fmt::format("field {} is not base64", field));
  return std::move(*decoded);
}

std::vector<etcd_entry> entries_of(const json& range) {
  std::vector<etcd_entry> out;
  auto kvs = range.find("kvs");
  if (kvs == range.end())
    return out;
  for (auto& kv : *kvs)
    out.push_back(etcd_entry{bytes_of(kv, "key"), bytes_of(kv, "value"),
                             number(kv, "create_revision"),
                             number(kv, "mod_revision"), number(kv, "lease")});
  return out;
}

json request_of(const etcd_op& op) {
  json r{{"key", base64_encode(op.key)}};
  switch (op.what) {
    case etcd_op::put:
      r["value"] = base64_encode(op.value);
      if (op.lease != 0)
        r["lease"] = std::to_string(op.lease);
      return json{{"request_put", r}};
    case etcd_op::remove:
      return json{{"request_delete_range", r}};
    case etcd_op::get:
      break;
  }
  return json{{"request_range", r}};
}

/// Parses `body` with `read`; a body that is not what etcd answers is an
/// error naming the request.
template <class F>
auto parse(const std::string& what, const std::string& body, F read)
  -> caf::expected<decltype(read(json{}))> {
  try {
    auto j = json::parse(body);
    if (auto e = j.find("error"); e != j.end())
      return make_error(errc::storage_failure,
                        fmt::format("etcd refused {}: {}", what,
                                    j.value("message", e->dump())));
    return read(j);
  } catch (const std::exception& e) {
    return make_error(errc::storage_failure,
                      fmt::format("etcd answered {} with something else than "
                                  "its JSON ({})",
                                  what, e.what()));
  }
}

} // namespace


struct etcd_client::connection {
  std::unique_ptr<httplib::Client> http;
};

etcd_client::etcd_client(std::vector<std::string> endpoints,
                         std::chrono::milliseconds timeout)
  : endpoints_(std::move(endpoints)),
    timeout_(timeout),
    conn_(std::make_unique<connection>()) {
}

etcd_client::~etcd_client() = default;

std::string etcd_client::endpoints() const {
  return fmt::format("{}", fmt::join(endpoints_, ","));
}

std::string etcd_client::prefix_end(std::string_view prefix) {
  std::string end{prefix};
  while (!end.empty()) {
    if (static_cast<uint8_t>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0'); // every key
}

caf::expected<std::string> etcd_client::post(const std::string& path,
                                             const std::string& body) {
  std::lock_guard<std::mutex> guard{mtx_};
  std::string last;
  for (size_t attempt = 0; attempt < endpoints_.size(); ++attempt) {
    auto& at = endpoints_[current_];
    if (!conn_->http) {
      // Endpoints were checked as HOST:PORT by whoever configured them.
      auto colon = at.rfind(':');
      conn_->http = std::make_unique<httplib::Client>(
        at.substr(0, colon), std::atoi(at.c_str() + colon + 1));
      auto secs = timeout_.count() / 1000;
      auto usecs = (timeout_.count() % 1000) * 1000;
      conn_->http->set_connection_timeout(secs, usecs);
      conn_->http->set_read_timeout(secs, usecs);
      conn_->http->set_write_timeout(secs, usecs);
      conn_->http->set_keep_alive(true);
    }
    auto res = conn_->http->Post(path, body, "application/json");
    if (res && res->status == 200)
      return res->body;
    if (res) {
      // etcd answered: its refusal is the answer, another member would
      // say the same.
      return make_error(errc::storage_failure,
                        fmt::format("etcd at {} answered {} with HTTP {}: {}",
                                    at, path, res->status,
                                    res->body.substr(0, 200)));
    }
    auto why = res.error();
    conn_->http.reset();
    if (why != httplib::Error::Connection) {
      // Sent, maybe applied: sending it again elsewhere could apply it
      // twice. The caller decides.
      return make_error(errc::timeout,
                        fmt::format("etcd at {} did not answer {} ({}); it may "
                                    "have been applied",
                                    at, path, httplib::to_string(why)));
    }
    last = fmt::format("{}: {}", at, httplib::to_string(why));
    current_ = (current_ + 1) % endpoints_.size();
  }
  return make_error(errc::storage_failure,
                    fmt::format("cannot reach etcd ({})", last));
}

caf::expected<int64_t> etcd_client::grant_lease(int64_t ttl) {
  auto body = post("/v3/lease/grant", json{{"TTL", ttl}}.dump());
  if (!body)
    return body.error();
  return parse("a lease grant", *body, [](const json& j) {
    auto id = number(j, "ID");
    if (id <= 0)
      throw std::runtime_error("no lease id");
    return id;
  });
}

caf::expected<int64_t> etcd_client::keep_alive(int64_t lease) {
  auto body = post("/v3/lease/keepalive",
                   json{{"ID", std::to_string(lease)}}.dump());
  if (!body)
    return body.error();
  // The gateway streams its answers: one object {"result": ...} per line.
  auto first = body->substr(0, body->find('\n'));
  return parse("a lease keep-alive", first, [](const json& j) {
    auto r = j.find("result");
    return r == j.end() ? int64_t{0} : number(*r, "TTL");
  });
}

caf::error etcd_client::revoke(int64_t lease) {
  auto body = post("/v3/lease/revoke",
                   json{{"ID", std::to_string(lease)}}.dump());
  if (!body)
    return body.error();
  auto ok = parse("a lease revocation", *body, [](const json&) { return 0; });
  return ok ? caf::error{} : ok.error();
}

caf::expected<std::vector<etcd_entry>>
etcd_client::range(std::string_view key, std::string_view range_end) {
  json r{{"key", base64_encode(key)}};
  if (!range_end.empty())
    r["range_end"] = base64_encode(range_end);
  auto body = post("/v3/kv/range", r.dump());
  if (!body)
    return body.error();
  return parse("a read", *body, [](const json& j) { return entries_of(j); });
}

caf::expected<etcd_txn_result>
etcd_client::txn(const std::vector<etcd_condition>& when,
                 const std::vector<etcd_op>& success,
                 const std::vector<etcd_op>& failure) {
  json req{{"compare", json::array()},
           {"success", json::array()},
           {"failure", json::array()}};
  for (auto& c : when)
    req["compare"].push_back(
      json{{"key", base64_encode(c.key)},
           {"target", c.modified ? "MOD" : "CREATE"},
           {"result", "EQUAL"},
           {c.modified ? "mod_revision" : "create_revision",
            std::to_string(c.revision)}});
  for (auto& op : success)
    req["success"].push_back(request_of(op));
  for (auto& op : failure)
    req["failure"].push_back(request_of(op));
  auto body = post("/v3/kv/txn", req.dump());
  if (!body)
    return body.error();
  auto ops = [&] {
    size_t n = 0;
    for (auto& op : success)
      n += op.what == etcd_op::get ? 1 : 0;
    size_t m = 0;
    for (auto& op : failure)
      m += op.what == etcd_op::get ? 1 : 0;
    return std::make_pair(n, m);
  }();
  return parse("a transaction", *body, [&](const json& j) {
    etcd_txn_result out;
    out.succeeded = j.value("succeeded", false);
    out.revision = number(j.at("header"), "revision");
    if (auto rs = j.find("responses"); rs != j.end())
      for (auto& r : *rs)
        if (auto range = r.find("response_range"); range != r.end())
          out.reads.push_back(entries_of(*range));
    // What the rest of weir relies on: a revision, and one answer per read.
    if (out.revision <= 0
        || out.reads.size() != (out.succeeded ? ops.first : ops.second))
      throw std::runtime_error("no revision, or not one answer per read");
    return out;
  });
}

} // namespace weir::ha
