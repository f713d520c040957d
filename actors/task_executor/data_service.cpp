// The data service (docs/architecture.md § Data plane): a CAF broker that
// owns a taskmanager's data port and its data connections, one per peer
// taskmanager, over the transport's guarded connections
// (net/data_transport.hpp). It only moves frames: producers encode their
// batches, consumers decode them, each on its own thread.
#include "actors/task_executor/data_service.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/io/broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "net/data_transport.hpp"
#include "net/transport.hpp"

namespace weir {

void data_registry::add(const execution_attempt_id& attempt,
                        subtask_actor subtask) {
  std::lock_guard<std::mutex> guard{mtx_};
  subtasks_[attempt] = std::move(subtask);
}

void data_registry::remove(const execution_attempt_id& attempt) {
  std::lock_guard<std::mutex> guard{mtx_};
  subtasks_.erase(attempt);
}

subtask_actor data_registry::find(const execution_attempt_id& attempt) const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = subtasks_.find(attempt);
  return i == subtasks_.end() ? subtask_actor{} : i->second;
}

namespace {

using caf::io::connection_handle;

/// The data connection to one peer taskmanager.
struct link {
  data_endpoint peer;
  /// Its connection, once dialled or accepted.
  std::optional<connection_handle> hdl;
  bool dialing = false;
  /// Frames for the peer while there is no connection yet.
  std::vector<char> queued;
  /// Local subtasks that exchange with the peer: told when the
  /// connection cannot be made or drops.
  std::vector<subtask_actor> watchers;
};

/// What the service knows of one connection.
struct connection {
  /// The peer's taskmanager, once its hello came (dialled: known before).
  std::optional<resource_id> peer;
  /// The header whose payload is being read.
  std::optional<frame_header> header;
};

struct service_state {
  data_service_options opts;
  std::shared_ptr<data_registry> registry;
  std::map<resource_id, link> links;
  std::map<connection_handle, connection> connections;
  /// This side's hello frame.
  std::vector<char> hello;
};

using state_ptr = std::shared_ptr<service_state>;

void append_frame(std::vector<char>& out, frame_header h,
                  const char* payload, size_t size) {
  h.length = static_cast<uint32_t>(size);
  auto at = out.size();
  out.resize(at + frame_header::size);
  h.write(out.data() + at);
  out.insert(out.end(), payload, payload + size);
}

/// Starts reading frames on `hdl` and sends this side's hello, then what
/// waited for the connection.
void open_connection(caf::io::broker* self, service_state& st,
                     connection_handle hdl, std::vector<char> queued) {
  self->configure_read(hdl, caf::io::receive_policy::exactly(
                              frame_header::size));
  auto& out = self->wr_buf(hdl);
  out.insert(out.end(), st.hello.begin(), st.hello.end());
  out.insert(out.end(), queued.begin(), queued.end());
  self->flush(hdl);
}

/// Tells every subtask watching `peer` why its link is gone, and forgets
/// the link (a later job dials again).
void drop_link(caf::io::broker* self, service_state& st,
               const resource_id& peer, const std::string& why) {
  auto i = st.links.find(peer);
  if (i == st.links.end())
    return;
  for (auto& w : i->second.watchers)
    self->send(w, lost_atom_v, why);
  if (i->second.hdl) {
    st.connections.erase(*i->second.hdl);
    self->close(*i->second.hdl);
  }
  st.links.erase(i);
}

void dial(caf::io::broker* self, service_state& st, link& l) {
  l.dialing = true;
  auto broker = caf::actor_cast<caf::actor>(self);
  auto peer = l.peer;
  auto timeout = st.opts.connect_timeout;
  // Blocking connect: on a thread of its own, never on the multiplexer.
  self->system().spawn([broker, peer, timeout](caf::blocking_actor* b) {
    auto fd = net::dial_data_port(peer.host, peer.port, timeout);
    if (fd)
      b->send(broker, caf::connect_atom::value, peer.tm, int32_t{*fd});
    else
      b->send(broker, caf::connect_atom::value, peer.tm,
              describe(fd.error()));
  });
}

/// A whole frame from `hdl`: to a local subtask, or the peer's hello.
void dispatch(caf::io::broker* self, service_state& st, connection_handle hdl,
              connection& c, const frame_header& h, std::vector<char> payload) {
  if (h.kind == frame_kind::hello) {
    auto who = read_hello(std::string_view{payload.data(), payload.size()});
    if (!who) // data_guard let only good hellos through
      return;
    c.peer = *who;
    auto& l = st.links[*who];
    l.peer.tm = *who;
    if (l.hdl == hdl)
      return; // dialled here: what waited went out with our hello
    if (l.hdl) {
      // The peer connected anew (its old connection is gone, or about to
      // go): the new one takes over.
      st.connections.erase(*l.hdl);
      self->close(*l.hdl);
    }
    l.hdl = hdl;
    auto queued = std::move(l.queued);
    auto& out = self->wr_buf(hdl);
    out.insert(out.end(), queued.begin(), queued.end());
    self->flush(hdl);
    return;
  }
  auto target = st.registry->find(h.to);
  if (!target || !c.peer)
    return; // the subtask ended (canceled, failed): nothing waits for it
  if (h.kind == frame_kind::credit)
    self->send(target, credit_atom_v, h.port, h.channel,
               static_cast<int32_t>(h.value));
  else
    self->send(target, frame_atom_v, *c.peer, h, std::move(payload));
}

caf::behavior service(caf::io::broker* self, state_ptr st) {
  self->set_down_handler([=](caf::down_msg& dm) {
    for (auto& [tm, l] : st->links) {
      auto& ws = l.watchers;
      ws.erase(std::remove_if(ws.begin(), ws.end(),
                              [&](const subtask_actor& w) {
                                return w.address() == dm.source;
                              }),
               ws.end());
    }
  });
  return {
    [=](caf::publish_atom) -> caf::result<uint16_t> {
      auto opened = net::open_data_port(*self, st->opts.port, st->opts.host);
      if (!opened)
        return std::move(opened.error());
      return opened->second;
    },
    [=](const caf::io::new_connection_msg& msg) {
      st->connections[msg.handle] = connection{};
      open_connection(self, *st, msg.handle, {});
    },
    [=](caf::io::new_data_msg& msg) {
      auto i = st->connections.find(msg.handle);
      if (i == st->connections.end())
        return;
      auto& c = i->second;
      if (!c.header) {
        auto h = frame_header::read(msg.buf.data());
        if (!h)
          return;
        if (h->length > 0) {
          c.header = h;
          self->configure_read(msg.handle,
                               caf::io::receive_policy::exactly(h->length));
          return;
        }
        dispatch(self, *st, msg.handle, c, *h, {});
        return;
      }
      auto h = *c.header;
      c.header.reset();
      self->configure_read(msg.handle, caf::io::receive_policy::exactly(
                                         frame_header::size));
      dispatch(self, *st, msg.handle, c, h, std::move(msg.buf));
    },
    [=](const caf::io::connection_closed_msg& msg) {
      auto i = st->connections.find(msg.handle);
      if (i == st->connections.end())
        return;
      st->connections.erase(i);
      for (auto& [tm, l] : st->links) {
        if (!l.hdl || *l.hdl != msg.handle)
          continue;
        auto where = fmt::format("{}:{}", l.peer.host, l.peer.port);
        auto tls = net::connection_failure(self->system(), l.peer.host,
                                           l.peer.port);
        l.hdl.reset();
        auto peer = tm;
        drop_link(self, *st, peer,
                  fmt::format("lost the data connection to taskmanager {}{}{}",
                              peer.value,
                              l.peer.port != 0 ? " (" + where + ")" : "",
                              tls.empty() ? "" : ": " + tls));
        return;
      }
    },
    [=](const caf::io::acceptor_closed_msg&) {},
    [=](caf::connect_atom, const std::vector<data_endpoint>& peers,
        const subtask_actor& subtask) {
      bool watched = false;
      for (auto& e : peers) {
        if (!e.valid() || e.tm == st->opts.tm)
          continue;
        auto& l = st->links[e.tm];
        if (!l.peer.valid())
          l.peer = e;
        l.watchers.push_back(subtask);
        watched = true;
        if (!l.hdl && !l.dialing && st->opts.tm < e.tm)
          dial(self, *st, l);
      }
      if (watched)
        self->monitor(subtask);
    },
    [=](caf::connect_atom, const resource_id& peer, int32_t fd) {
      auto i = st->links.find(peer);
      if (i == st->links.end() || i->second.hdl) {
        ::close(fd); // no longer wanted, or the peer dialled meanwhile
        return;
      }
      auto& l = i->second;
      l.dialing = false;
      auto hdl = net::add_data_connection(*self, fd, l.peer.host, l.peer.port);
      l.hdl = hdl;
      st->connections[hdl] = connection{peer, std::nullopt};
      open_connection(self, *st, hdl, std::move(l.queued));
    },
    [=](caf::connect_atom, const resource_id& peer, const std::string& why) {
      drop_link(self, *st, peer, why);
    },
    [=](send_atom, const resource_id& to, const frame_header& h,
        const std::string& payload) {
      auto& l = st->links[to];
      if (!l.hdl) {
        append_frame(l.queued, h, payload.data(), payload.size());
        return;
      }
      append_frame(self->wr_buf(*l.hdl), h, payload.data(), payload.size());
      self->flush(*l.hdl);
    },
  };
}

} // namespace

caf::expected<data_service>
start_data_service(caf::actor_system& sys, const data_service_options& opts) {
  auto st = std::make_shared<service_state>();
  st->opts = opts;
  st->registry = std::make_shared<data_registry>();
  auto hello = hello_payload(opts.tm);
  frame_header h;
  h.kind = frame_kind::hello;
  append_frame(st->hello, h, hello.data(), hello.size());
  auto broker = sys.middleman().spawn_broker(service, st);
  caf::scoped_actor self{sys};
  caf::expected<uint16_t> bound{caf::sec::cannot_publish_invalid_actor};
  self->request(broker, caf::infinite, caf::publish_atom::value)
    .receive([&](uint16_t port) { bound = port; },
             [&](caf::error& err) { bound = std::move(err); });
  if (!bound) {
    caf::anon_send_exit(broker, caf::exit_reason::user_shutdown);
    return std::move(bound.error());
  }
  return data_service{caf::actor_cast<data_service_actor>(broker),
                      data_endpoint{opts.tm, opts.host, *bound}, st->registry};
}

} // namespace weir
