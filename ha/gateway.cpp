#include "ha/gateway.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "ha/leader_election.hpp"
#include "messages/errors.hpp"
#include "net/transport.hpp"
#include "net/tls.hpp"

namespace weir {

namespace {

cluster_gateway_actor::behavior_type
gateway_impl(cluster_gateway_actor::pointer self, supervisor_actor supervisor) {
  return {
    [=](lookup_atom) { return self->delegate(supervisor, lookup_atom_v); },
  };
}

/// Why a TCP connection to `at` fails, as the system says it ("Connection
/// refused"); CAF's error keeps no errno.
std::string connect_problem(const endpoint& at) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(at.host.c_str(), std::to_string(at.port).c_str(),
                           &hints, &found);
      rc != 0)
    return gai_strerror(rc);
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard{found,
                                                           freeaddrinfo};
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return std::strerror(errno);
  timeval limit{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  std::string why = ::connect(fd, found->ai_addr, found->ai_addrlen) == 0
                      ? "it accepted a connection, then closed it"
                      : std::strerror(errno);
  ::close(fd);
  return why;
}

/// Why a connection to the jobmanager at `at` failed, in the words a user
/// acts on: the TLS handshake's reason, or that the jobmanager requires TLS
/// that this process does not use, or CAF's error.
std::string why_unreachable(caf::actor_system& sys, const endpoint& at,
                            const caf::error& err) {
  auto reason = net::connection_failure(sys, at.host, at.port);
  if (!reason.empty())
    return reason;
  bool reached = err != caf::sec::cannot_connect_to_node;
  if (reached && !net::uses_tls(sys) && net::speaks_tls(at.host, at.port))
    return "the jobmanager requires TLS (set security.ssl.internal.enabled: "
           "true and a certificate from its CA; see docs/security.md)";
  if (!reached)
    return fmt::format("cannot connect ({}: is a jobmanager running there, "
                       "and is {} its jobmanager.rpc.port?)",
                       connect_problem(at), at.port);
  return sys.render(err);
}

/// What etcd's members `members` say of cluster `cluster_id`'s leader:
/// its RPC address, and with `rest` its REST API's URL too (empty if it
/// has none). A failed look-up is `errc::storage_failure`, no leader
/// `errc::timeout`, one line.
struct leader_entry {
  std::string address;
  std::string rest_url;
  std::string etcd;
};

caf::expected<leader_entry> ask_etcd(const std::vector<endpoint>& members,
                                     std::chrono::milliseconds timeout,
                                     const std::string& cluster_id,
                                     bool rest) {
  std::vector<std::string> eps;
  for (auto& m : members)
    eps.push_back(fmt::format("{}:{}", m.host, m.port));
  ha::etcd_client etcd{eps, timeout};
  auto leader = find_leader(etcd, cluster_id);
  auto url = rest && leader && !leader->empty()
               ? find_rest_leader(etcd, cluster_id)
               : caf::expected<std::string>{std::string{}};
  if (!leader || !url)
    return make_error(errc::storage_failure,
                      fmt::format("cannot ask etcd for the leader of cluster "
                                  "{}: {}",
                                  cluster_id,
                                  describe(leader ? url.error()
                                                  : leader.error())));
  if (leader->empty())
    return make_error(errc::timeout,
                      fmt::format("no jobmanager leads cluster {} (etcd at "
                                  "{})",
                                  cluster_id, etcd.endpoints()));
  return leader_entry{*leader, *url, etcd.endpoints()};
}

/// The leader's address as the etcd members `members` name it.
caf::expected<endpoint> leader_of(const std::vector<endpoint>& members,
                                  std::chrono::milliseconds timeout,
                                  const std::string& cluster_id) {
  auto leader = ask_etcd(members, timeout, cluster_id, false);
  if (!leader)
    return leader.error();
  auto at = parse_endpoint(leader->address);
  if (!at)
    return make_error(errc::timeout,
                      fmt::format("etcd names '{}' as the leader of cluster "
                                  "{}, which is not HOST:PORT",
                                  leader->address, cluster_id));
  return *at;
}

} // namespace

caf::expected<std::string> rest_leader_of(const std::vector<endpoint>& members,
                                          std::chrono::milliseconds timeout,
                                          const std::string& cluster_id) {
  auto leader = ask_etcd(members, timeout, cluster_id, true);
  if (!leader)
    return leader.error();
  if (leader->rest_url.empty())
    return make_error(errc::timeout,
                      fmt::format("the leader of cluster {} ({}) has no REST "
                                  "API for clients (set rest.port; etcd at "
                                  "{})",
                                  cluster_id, leader->address, leader->etcd));
  return leader->rest_url;
}

cluster_gateway_actor spawn_gateway(caf::actor_system& sys,
                                    supervisor_actor supervisor) {
  return sys.spawn(gateway_impl, std::move(supervisor));
}

std::optional<endpoint> parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return std::nullopt;
  auto port_text = text.substr(colon + 1);
  if (port_text.find_first_not_of("0123456789") != std::string::npos
      || port_text.size() > 5)
    return std::nullopt;
  auto port = std::stoul(port_text);
  if (port == 0 || port > 65535)
    return std::nullopt;
  return endpoint{text.substr(0, colon), static_cast<uint16_t>(port)};
}

std::optional<std::vector<endpoint>> parse_endpoints(const std::string& text) {
  std::vector<endpoint> result;
  bool etcd = text.compare(0, etcd_scheme.size(), etcd_scheme) == 0;
  size_t start = etcd ? etcd_scheme.size() : 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    auto part = text.substr(start, comma == std::string::npos ? std::string::npos
                                                              : comma - start);
    auto ep = parse_endpoint(part);
    if (!ep)
      return std::nullopt;
    ep->etcd = etcd;
    result.push_back(*ep);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return result;
}

caf::expected<std::pair<dispatcher_actor, resource_manager_actor>>
connect_gateway(caf::actor_system& sys, const std::vector<endpoint>& any_of,
                std::chrono::milliseconds timeout,
                const std::string& cluster_id) {
  caf::error last = make_error(errc::timeout, "no jobmanager address given");
  if (!any_of.empty() && any_of.front().etcd) {
    auto leader = leader_of(any_of, timeout, cluster_id);
    if (!leader)
      return leader.error();
    return connect_gateway(sys, *leader, timeout);
  }
  for (auto& at : any_of) {
    auto handles = connect_gateway(sys, at, timeout);
    if (handles)
      return handles;
    last = handles.error();
  }
  return last;
}

caf::expected<std::pair<dispatcher_actor, resource_manager_actor>>
connect_gateway(caf::actor_system& sys, const endpoint& at,
                std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys};
  caf::error failure;
  cluster_gateway_actor gateway;
  auto where = fmt::format("{}:{}", at.host, at.port);
  self
    ->request(net::middleman_of(sys), timeout, caf::connect_atom::value,
              at.host, at.port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr,
          const std::set<std::string>& ifs) {
        if (!ptr) {
          failure = make_error(errc::timeout,
                               fmt::format("no weir jobmanager at {}", where));
          return;
        }
        if (!sys.assignable<cluster_gateway_actor>(ifs)) {
          failure = make_error(errc::timeout,
                               fmt::format("{} is not a weir jobmanager of this "
                                           "version", where));
          return;
        }
        gateway = caf::actor_cast<cluster_gateway_actor>(std::move(ptr));
      },
      [&](caf::error& err) {
        if (err == caf::sec::incompatible_application_ids)
          failure = make_error(
            errc::timeout,
            fmt::format("{} belongs to another weir cluster or version "
                        "(high-availability.cluster-id differs)",
                        where));
        else
          failure = make_error(errc::timeout,
                               fmt::format("cannot reach the jobmanager at {}: "
                                           "{}",
                                           where,
                                           why_unreachable(sys, at, err)));
      });
  if (failure)
    return failure;
  std::optional<std::pair<dispatcher_actor, resource_manager_actor>> result;
  self->request(gateway, timeout, lookup_atom_v)
    .receive(
      [&](dispatcher_actor& d, resource_manager_actor& rm) {
        result.emplace(std::move(d), std::move(rm));
      },
      [&](caf::error& err) {
        failure = make_error(errc::timeout,
                             fmt::format("jobmanager at {} did not answer: {}",
                                         where, sys.render(err)));
      });
  if (!result)
    return failure;
  return std::move(*result);
}

} // namespace weir
