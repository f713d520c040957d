#include "net/transport.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/node_id.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/abstract_broker.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor_impl.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/doorman_impl.hpp>
#include <caf/io/network/native_socket.hpp>
#include <caf/io/network/stream_impl.hpp>
#include <caf/io/scribe.hpp>
#include <caf/policy/tcp.hpp>
#include <caf/scoped_actor.hpp>

#include <fmt/format.h>

#include "net/log_limiter.hpp"
#include "messages/errors.hpp"
#include "net/basp_guard.hpp"
#include "net/data_guard.hpp"
#include "net/data_transport.hpp"
#include "net/message_check.hpp"
#include "net/tls.hpp"

namespace weir::net {

namespace {

namespace network = caf::io::network;
using network::default_multiplexer;
using network::native_socket;
using network::operation;
using network::rw_state;
using clock_type = std::chrono::steady_clock;
using reap_atom = caf::atom_constant<caf::atom("reap")>;

/// How long the connections of a stopped transport may take to send what
/// is queued for them before they are closed hard. CAF's middleman ends
/// only once every connection has drained: a peer that does not read
/// (stopped, hung, cut off) would otherwise keep the process alive.
constexpr auto drain_timeout = std::chrono::seconds(1);

class guarded_scribe;

/// What the transport of one actor system shares between its middleman
/// actor, its acceptors, its connections and the reaper.
struct transport_state {
  transport_settings settings;
  /// This process's node: no peer may speak for it.
  caf::node_id self;
  /// Reads what accepted peers send before BASP does.
  std::unique_ptr<message_check> messages;
  std::shared_ptr<tls_context> tls;
  std::function<void(const std::string&)> log;
  caf::io::middleman_actor middleman;
  caf::actor reaper;

  std::mutex mtx;
  /// Connections still in their handshakes, with their deadlines.
  std::map<guarded_scribe*,
           std::pair<clock_type::time_point, caf::intrusive_ptr<guarded_scribe>>>
    pending;
  size_t pending_accepted = 0;
  /// Scribes no longer pending, released on the next reap (never inside
  /// one of their own member functions).
  std::vector<caf::intrusive_ptr<guarded_scribe>> released;
  /// Every connection whose socket is open (its scribe exists).
  std::set<guarded_scribe*> live;
  /// The certificate OU of each peer node that passed its handshakes.
  std::map<caf::node_id, std::string> roles;
  /// The accepted connection each peer node's handshake came in on: a
  /// second connection naming a node already connected would take its
  /// route (CAF lets a handshake select the connection to a node).
  std::map<caf::node_id, const guarded_scribe*> nodes;
  /// Bytes held for messages whose bytes are still arriving, over all
  /// connections (rpc.max-pending-bytes).
  std::atomic<size_t> pending_bytes{0};
  /// "host:port" → why the last connection there failed in its handshake.
  std::map<std::string, std::string> failures;
  /// Refusals are logged at most once a second, with a count.
  log_limiter refusals;

  void refused(const std::string& what) {
    std::unique_lock<std::mutex> guard{mtx};
    auto line = refusals.admit(what);
    guard.unlock();
    if (line && log)
      log(*line);
  }
};

std::mutex states_mtx;
std::map<caf::actor_system*, std::shared_ptr<transport_state>> states;

std::shared_ptr<transport_state> state_of(caf::actor_system& sys) {
  std::lock_guard<std::mutex> guard{states_mtx};
  auto i = states.find(&sys);
  return i == states.end() ? nullptr : i->second;
}

class guarded_scribe;

/// How a guarded connection's stream reads and writes: TLS, or plain TCP.
struct guarded_policy {
  guarded_scribe* owner;
  tls_session* tls;

  rw_state read_some(size_t& result, native_socket fd, void* buf, size_t len);
  rw_state write_some(size_t& result, native_socket fd, const void* buf,
                      size_t len);
  bool must_read_more(native_socket, size_t threshold) {
    return tls != nullptr && tls->must_read_more(threshold);
  }

  /// Tells the scribe what a TLS read or write did: why it failed, or that
  /// the handshake just verified the peer.
  rw_state observed(bool was_established, rw_state state);
};

/// What a guarded connection carries: CAF's BASP (the RPC port), or the
/// frames of a data connection (a taskmanager's data port).
enum class carries { basp, data };

/// A connection as its broker sees it (CAF's scribe), with the guard
/// between the socket and the broker: TLS first (nothing the broker writes
/// leaves before the peer is verified, nothing the peer sends reaches the
/// broker before), then basp_guard (BASP) or data_guard (data frames) on
/// every read. CAF's BASP broker owns the RPC port's connections, the data
/// service (actors/task_executor/data_service.cpp) the data port's.
class guarded_scribe final : public caf::io::scribe {
public:
  guarded_scribe(default_multiplexer& mpx, native_socket fd,
                 std::unique_ptr<tls_session> tls, basp_guard::side side,
                 std::shared_ptr<transport_state> state, std::string peer,
                 carries what = carries::basp)
    : caf::io::scribe(network::conn_hdl_from_socket(fd)),
      tls_(std::move(tls)),
      guard_(side, state->settings.max_message_size, state->self),
      state_(std::move(state)), peer_(std::move(peer)),
      stream_(mpx, fd, guarded_policy{this, tls_.get()}) {
    if (what == carries::data) {
      data_.emplace(state_->settings.max_message_size);
      chunk_size = 256 * 1024;
    }
    std::lock_guard<std::mutex> guard{state_->mtx};
    state_->live.insert(this);
  }

  ~guarded_scribe() override {
    release_partial();
    // Before stream_ closes the socket: what stop_transport cuts is never
    // a closed (or reused) descriptor.
    std::lock_guard<std::mutex> guard{state_->mtx};
    state_->live.erase(this);
  }

  /// Shuts the socket down in both directions, from any thread: what is
  /// still queued fails to send, and the multiplexer drops the connection.
  /// The caller holds the state's lock.
  void abort_socket() {
    ::shutdown(stream_.fd(), SHUT_RDWR);
  }

  void configure_read(caf::io::receive_policy::config config) override {
    // A large payload is read in chunks into a buffer that grows as its
    // bytes arrive: CAF would allocate what the header announced at once.
    if (config.first == caf::io::receive_policy_flag::exactly
        && config.second > chunk_size) {
      assembling_ = config.second;
      config.second = chunk_size;
    }
    stream_.configure_read(config);
    if (!launched_) {
      launched_ = true;
      stream_.start(this);
      // Starts a client's TLS handshake (its hello) right away.
      if (tls_)
        stream_.force_empty_write(this);
    }
  }

  void ack_writes(bool enable) override {
    stream_.ack_writes(enable);
  }

  std::vector<char>& wr_buf() override {
    // Until TLS has verified the peer, BASP's bytes wait here: the stream's
    // buffer stays empty, so the socket is not polled for writing while the
    // handshake waits for the peer.
    return tls_ && !tls_->established() ? held_ : stream_.wr_buf();
  }

  std::vector<char>& rd_buf() override {
    // CAF's scribe::consume hands BASP what this returns.
    return delivering_ ? partial_ : stream_.rd_buf();
  }

  void graceful_shutdown() override {
    stream_.graceful_shutdown();
    detach(&stream_.backend(), false);
  }

  void flush() override {
    if (tls_ && !tls_->established())
      return; // tls_established() flushes
    stream_.flush(this);
  }

  std::string addr() const override {
    auto x = network::remote_addr_of_fd(stream_.fd());
    return x ? *x : std::string{};
  }

  uint16_t port() const override {
    auto x = network::remote_port_of_fd(stream_.fd());
    return x ? *x : 0;
  }

  void add_to_loop() override {
    stream_.activate(this);
  }

  void remove_from_loop() override {
    stream_.passivate();
  }

  bool consume(caf::execution_unit* ctx, const void* buf,
               size_t size) override {
    if (assembling_ > 0)
      return consume_chunk(ctx, static_cast<const char*>(buf), size);
    return deliver(ctx, static_cast<const char*>(buf), size);
  }

  /// The next chunk of a large payload: kept until the payload is whole.
  bool consume_chunk(caf::execution_unit* ctx, const char* buf,
                     size_t size) {
    auto have = partial_.size();
    if (have + size > assembling_) {
      refuse(ctx, fmt::format("read {} bytes of a {}-byte payload",
                              have + size, assembling_));
      return false;
    }
    if (have + size > partial_.capacity()) {
      // Doubles as bytes arrive, never past the announced size.
      auto grown = std::min(assembling_, std::max(2 * (have + size),
                                                  size_t{4} * chunk_size));
      auto more = grown - partial_.capacity();
      auto before = state_->pending_bytes.fetch_add(more);
      if (before + more > state_->settings.max_pending_bytes) {
        state_->pending_bytes -= more;
        refuse(ctx, fmt::format("its message of {} bytes would take the "
                                "memory held for arriving messages past "
                                "{} bytes (rpc.max-pending-bytes)",
                                assembling_,
                                state_->settings.max_pending_bytes));
        return false;
      }
      held_bytes_ += more;
      partial_.reserve(grown);
    }
    partial_.insert(partial_.end(), buf, buf + size);
    if (partial_.size() < assembling_) {
      stream_.configure_read(caf::io::receive_policy::exactly(
        std::min(chunk_size, assembling_ - partial_.size())));
      return true;
    }
    assembling_ = 0;
    delivering_ = true;
    auto result = deliver(ctx, partial_.data(), partial_.size());
    delivering_ = false;
    release_partial();
    return result;
  }

  /// Checks a whole header or payload, then hands it to BASP.
  bool deliver(caf::execution_unit* ctx, const char* buf, size_t size) {
    if (data_)
      return deliver_frame(ctx, buf, size);
    bool was_seen = guard_.handshake_seen();
    if (auto why = guard_.check(buf, size)) {
      refuse(ctx, describe(why));
      return false;
    }
    if (!was_seen && guard_.handshake_seen()) {
      if (auto why = claim_node()) {
        refuse(ctx, describe(why));
        return false;
      }
    }
    if (auto why = check_message(buf, size)) {
      refuse(ctx, describe(why));
      return false;
    }
    auto result = caf::io::scribe::consume(ctx, buf, size);
    if (guard_.handshake_seen() && !authenticated_) {
      authenticated_ = true;
      forget();
    }
    return result;
  }

  /// Checks a whole frame header or payload, then hands it to the data
  /// service.
  bool deliver_frame(caf::execution_unit* ctx, const char* buf, size_t size) {
    bool was_seen = data_->hello_seen();
    if (auto why = data_->check(buf, size)) {
      refuse(ctx, describe(why));
      return false;
    }
    // Data ports are for nodes only: with TLS, both ends show a node
    // certificate.
    if (!was_seen && data_->hello_seen() && tls_
        && tls_->peer_role() != "weir-node") {
      refuse(ctx, fmt::format("its certificate is not a node's (OU {}): the "
                              "data port is for taskmanagers "
                              "(docs/security.md § Data port)",
                              tls_->peer_role().empty() ? "none"
                                                        : tls_->peer_role()));
      return false;
    }
    auto result = caf::io::scribe::consume(ctx, buf, size);
    if (data_->hello_seen() && !authenticated_) {
      authenticated_ = true;
      forget();
    }
    return result;
  }

  /// A message from an accepted peer, read before BASP reads it: those for
  /// this node's actors, and with TLS those a client routes on to another
  /// node (a node's own messages to other nodes are batches of the data
  /// plane, passed on unread as before).
  caf::error check_message(const char* buf, size_t size) {
    using payload = basp_guard::payload;
    auto kind = guard_.last_payload();
    if (guard_side_connected() || kind == payload::other)
      return caf::none;
    bool client = tls_ && tls_->peer_role() != "weir-node";
    if (kind == payload::message_on && !client)
      return caf::none;
    return state_->messages->check(buf, size, guard_.last_was_routed(),
                                   guard_.peer());
  }

  /// The peer's handshake named its node: an accepted connection owns
  /// that node from now on (with TLS, with the role its certificate
  /// gives), unless another connection already does.
  caf::error claim_node() {
    // Clients talk to the REST API: a node's RPC port is for nodes only.
    if (!guard_side_connected() && tls_ && state_->settings.node
        && tls_->peer_role() != "weir-node")
      return make_error(
        errc::protocol_violation,
        fmt::format("its certificate is not a node's (OU {}): clients "
                    "use the REST API, the RPC port is for jobmanagers "
                    "and taskmanagers (docs/security.md § Clients)",
                    tls_->peer_role().empty() ? "none" : tls_->peer_role()));
    std::lock_guard<std::mutex> guard{state_->mtx};
    if (!guard_side_connected()) {
      auto& owner = state_->nodes[guard_.peer()];
      if (owner != nullptr && owner != this)
        return make_error(errc::protocol_violation,
                          fmt::format("its handshake names node {}, which is "
                                      "connected already",
                                      to_string(guard_.peer())));
      owner = this;
    }
    node_ = guard_.peer();
    if (tls_)
      state_->roles[node_] = tls_->peer_role();
    return caf::none;
  }

  /// Frees the buffer of a payload still arriving (or just delivered).
  void release_partial() {
    state_->pending_bytes -= held_bytes_;
    held_bytes_ = 0;
    std::vector<char>{}.swap(partial_);
    assembling_ = 0;
  }

  /// The TLS handshake verified the peer: BASP's held bytes may go.
  void tls_established() {
    if (held_.empty())
      return;
    auto& out = stream_.wr_buf();
    out.insert(out.end(), held_.begin(), held_.end());
    held_.clear();
    stream_.flush(this);
  }

  /// The peer failed its handshake or broke a rule: closed, with nothing
  /// more read, and BASP told that the connection is gone.
  void refuse(caf::execution_unit* ctx, const std::string& why) {
    if (closed_)
      return;
    closed_ = true;
    if (!authenticated_)
      note_failure(why);
    else if (guard_side_connected())
      state_->refused(fmt::format("closed the connection to {}: {}", peer_,
                                  why));
    else
      state_->refused(fmt::format("refused a connection from {}: {}", addr(),
                                  why));
    ::shutdown(stream_.fd(), SHUT_RDWR);
    io_failure(ctx, operation::read);
    stream_.passivate();
  }

  /// Remembers why an outgoing connection failed before its handshakes
  /// were done, for the client's error message; logs refused peers.
  void note_failure(const std::string& why) {
    if (authenticated_)
      return;
    if (guard_side_connected()) {
      std::lock_guard<std::mutex> guard{state_->mtx};
      auto& slot = state_->failures[peer_];
      if (slot.empty())
        slot = why;
    } else {
      state_->refused(fmt::format("refused a connection from {}: {}", addr(),
                                  why));
    }
  }

  const tls_session* tls() const {
    return tls_.get();
  }

  bool authenticated() const {
    return authenticated_;
  }

protected:
  void detach_from(caf::io::abstract_broker* ptr) override {
    caf::io::scribe::detach_from(ptr);
    forget();
    release_partial();
    if (node_) { // the node's role goes with its connection
      std::lock_guard<std::mutex> guard{state_->mtx};
      state_->roles.erase(node_);
      auto i = state_->nodes.find(node_);
      if (i != state_->nodes.end() && i->second == this)
        state_->nodes.erase(i);
    }
  }

private:
  bool guard_side_connected() const {
    return !peer_.empty();
  }

  /// No longer pending (authenticated or closed).
  void forget() {
    std::lock_guard<std::mutex> guard{state_->mtx};
    auto i = state_->pending.find(this);
    if (i == state_->pending.end())
      return;
    if (!guard_side_connected())
      --state_->pending_accepted;
    state_->released.push_back(std::move(i->second.second));
    state_->pending.erase(i);
  }

  std::unique_ptr<tls_session> tls_;
  basp_guard guard_;
  /// A data connection's guard (instead of guard_).
  std::optional<data_guard> data_;
  std::shared_ptr<transport_state> state_;
  /// "host:port" of a connection this process opened; empty when accepted.
  std::string peer_;
  std::vector<char> held_;
  /// Payloads over chunk_size arrive in chunks into partial_: the size
  /// announced (0: none is arriving), and the bytes reserved for it. A
  /// data connection reads a whole batch (up to 128 KiB, a little more
  /// with its header) at once: its bytes reach the consumer without a
  /// copy, at 256 KiB of read buffer per connection.
  size_t chunk_size = 64 * 1024;
  size_t assembling_ = 0;
  std::vector<char> partial_;
  size_t held_bytes_ = 0;
  bool delivering_ = false;
  /// The peer's node, once its handshake named it.
  caf::node_id node_;
  bool launched_ = false;
  bool authenticated_ = false;
  bool closed_ = false;
  network::stream_impl<guarded_policy> stream_;
};

rw_state guarded_policy::observed(bool was_established, rw_state state) {
  if (state == rw_state::failure)
    owner->note_failure(tls->failure());
  else if (!was_established && tls->established())
    owner->tls_established();
  return state;
}

rw_state guarded_policy::read_some(size_t& result, native_socket fd,
                                   void* buf, size_t len) {
  if (tls == nullptr)
    return caf::policy::tcp::read_some(result, fd, buf, len);
  bool was_established = tls->established();
  return observed(was_established, tls->read_some(result, buf, len));
}

rw_state guarded_policy::write_some(size_t& result, native_socket fd,
                                    const void* buf, size_t len) {
  if (tls == nullptr)
    return caf::policy::tcp::write_some(result, fd, buf, len);
  bool was_established = tls->established();
  return observed(was_established, tls->write_some(result, buf, len));
}

/// Registers a new connection as pending, with its handshake deadline.
void track(transport_state& st, const caf::intrusive_ptr<guarded_scribe>& s,
           bool accepted) {
  std::lock_guard<std::mutex> guard{st.mtx};
  auto deadline = clock_type::now() + st.settings.handshake_timeout;
  st.pending.emplace(s.get(), std::make_pair(deadline, s));
  if (accepted)
    ++st.pending_accepted;
}

/// CAF's acceptor, with the cap on connections in their handshake.
class guarded_doorman final : public network::doorman_impl {
public:
  guarded_doorman(default_multiplexer& mpx, native_socket fd,
                  std::shared_ptr<transport_state> state,
                  carries what = carries::basp)
    : network::doorman_impl(mpx, fd), state_(std::move(state)), what_(what) {
    // nop
  }

  bool new_connection() override {
    if (detached())
      return false;
    auto& mpx = acceptor_.backend();
    auto fd = acceptor_.accepted_socket();
    size_t pending = 0;
    {
      std::lock_guard<std::mutex> guard{state_->mtx};
      pending = state_->pending_accepted;
    }
    if (pending >= state_->settings.max_pending) {
      auto from = network::remote_addr_of_fd(fd);
      state_->refused(fmt::format(
        "refused a connection from {}: {} connections are in their handshake "
        "(security.max-pending-connections)",
        from ? *from : "?", pending));
      network::close_socket(fd);
      return true;
    }
    network::nonblocking(fd, true);
    std::unique_ptr<tls_session> tls;
    if (state_->tls)
      tls = std::make_unique<tls_session>(state_->tls, fd, true, "");
    auto scribe = caf::make_counted<guarded_scribe>(
      mpx, fd, std::move(tls), basp_guard::side::accepted, state_,
      std::string{}, what_);
    track(*state_, scribe, true);
    auto hdl = scribe->hdl();
    parent()->add_scribe(std::move(scribe));
    return doorman::new_connection(&mpx, hdl);
  }

private:
  std::shared_ptr<transport_state> state_;
  carries what_;
};

/// CAF's middleman actor (publish, connect, unpublish), opening guarded
/// connections and acceptors.
class guarded_middleman final : public caf::io::middleman_actor_impl {
public:
  guarded_middleman(caf::actor_config& cfg, caf::actor broker,
                    std::shared_ptr<transport_state> state)
    : caf::io::middleman_actor_impl(cfg, std::move(broker)),
      state_(std::move(state)) {
    // nop
  }

  const char* name() const override {
    return "weir.middleman";
  }

protected:
  caf::expected<caf::io::scribe_ptr> connect(const std::string& host,
                                             uint16_t port) override {
    auto fd = network::new_tcp_connection(host, port);
    if (!fd)
      return std::move(fd.error());
    network::nonblocking(*fd, true);
    auto peer = fmt::format("{}:{}", host, port);
    {
      std::lock_guard<std::mutex> guard{state_->mtx};
      state_->failures.erase(peer);
    }
    std::unique_ptr<tls_session> tls;
    if (state_->tls)
      tls = std::make_unique<tls_session>(state_->tls, *fd, false, host);
    auto scribe = caf::make_counted<guarded_scribe>(
      mpx(), *fd, std::move(tls), basp_guard::side::connected, state_, peer);
    track(*state_, scribe, false);
    return caf::io::scribe_ptr{std::move(scribe)};
  }

  caf::expected<caf::io::doorman_ptr> open(uint16_t port, const char* addr,
                                           bool reuse) override {
    auto fd = network::new_tcp_acceptor_impl(port, addr, reuse);
    if (!fd)
      return std::move(fd.error());
    return caf::io::doorman_ptr{
      caf::make_counted<guarded_doorman>(mpx(), *fd, state_)};
  }

private:
  default_multiplexer& mpx() {
    return static_cast<default_multiplexer&>(system().middleman().backend());
  }

  std::shared_ptr<transport_state> state_;
};

/// Closes connections past their handshake deadline, on the multiplexer's
/// thread (where every connection lives).
void reap(transport_state& st, default_multiplexer& mpx) {
  std::vector<caf::intrusive_ptr<guarded_scribe>> late;
  std::vector<caf::intrusive_ptr<guarded_scribe>> released;
  {
    std::lock_guard<std::mutex> guard{st.mtx};
    released.swap(st.released);
    auto now = clock_type::now();
    for (auto& [ptr, entry] : st.pending)
      if (entry.first <= now)
        late.push_back(entry.second);
  }
  for (auto& s : late)
    s->refuse(&mpx,
              fmt::format("no handshake within {} ms "
                          "(security.ssl.internal.handshake-timeout)",
                          st.settings.handshake_timeout.count()));
}

caf::behavior reaper(caf::event_based_actor* self,
                     std::weak_ptr<transport_state> weak) {
  auto interval = std::chrono::milliseconds(100);
  self->delayed_send(self, interval, reap_atom::value);
  return {
    [=](reap_atom) {
      auto st = weak.lock();
      if (!st)
        return;
      auto& mpx = static_cast<default_multiplexer&>(
        self->system().middleman().backend());
      mpx.dispatch([st, &mpx] { reap(*st, mpx); });
      self->delayed_send(self, interval, reap_atom::value);
    },
  };
}

} // namespace

caf::error start_transport(caf::actor_system& sys,
                           const transport_settings& settings,
                           std::function<void(const std::string&)> log) {
  auto st = std::make_shared<transport_state>();
  st->settings = settings;
  st->self = sys.node();
  st->messages = std::make_unique<message_check>(sys);
  st->log = std::move(log);
  if (settings.tls) {
    std::string error;
    st->tls = tls_context::load(settings.files, error);
    if (!st->tls)
      return make_error(errc::invalid_config, error);
    if (settings.node && st->tls->own_role() != "weir-node")
      return make_error(
        errc::invalid_config,
        fmt::format("{}.certificate: {}: not a node certificate (its OU is "
                    "'{}', a jobmanager or taskmanager needs OU=weir-node: "
                    "weir cert node)",
                    settings.files.keys, settings.files.certificate,
                    st->tls->own_role()));
  }
  auto broker = sys.middleman().named_broker<caf::io::basp_broker>(
    caf::atom("BASP"));
  // Detached: connect() dials with a blocking TCP connect, as CAF's does.
  st->middleman = sys.spawn<guarded_middleman, caf::detached + caf::hidden>(
    std::move(broker), st);
  st->reaper = sys.spawn<caf::hidden>(reaper, std::weak_ptr{st});
  // OpenSSL writes to sockets with write(2): a peer that closed its end
  // raises SIGPIPE, which would end the process. Every TLS read and write
  // runs on the multiplexer's thread; there it only fails with EPIPE.
  auto& mpx = static_cast<default_multiplexer&>(sys.middleman().backend());
  mpx.dispatch([] { block_sigpipe_in_this_thread(); });
  std::lock_guard<std::mutex> guard{states_mtx};
  states[&sys] = std::move(st);
  return caf::none;
}

void stop_transport(caf::actor_system& sys) {
  std::shared_ptr<transport_state> st;
  {
    std::lock_guard<std::mutex> guard{states_mtx};
    auto i = states.find(&sys);
    if (i == states.end())
      return;
    st = std::move(i->second);
    states.erase(i);
  }
  caf::anon_send_exit(st->middleman, caf::exit_reason::kill);
  caf::anon_send_exit(st->reaper, caf::exit_reason::kill);
  // The actors hold this state: drop the handles, or the detached
  // middleman is never destroyed and the actor system waits for its thread.
  // The scribes are released after the lock (their destructor takes it).
  decltype(st->pending) pending;
  decltype(st->released) released;
  {
    std::lock_guard<std::mutex> guard{st->mtx};
    st->middleman = nullptr;
    st->reaper = nullptr;
    pending.swap(st->pending);
    released.swap(st->released);
  }
  // The actor system ends next, and its middleman waits for every
  // connection to drain; past drain_timeout, those left are cut. A process
  // that is gone by then never runs this.
  std::thread{[st] {
    std::this_thread::sleep_for(drain_timeout);
    std::lock_guard<std::mutex> guard{st->mtx};
    for (auto* scribe : st->live)
      scribe->abort_socket();
  }}.detach();
}

caf::io::middleman_actor middleman_of(caf::actor_system& sys) {
  if (auto st = state_of(sys))
    return st->middleman;
  return sys.middleman().actor_handle();
}

caf::expected<uint16_t> publish(caf::actor_system& sys,
                                const caf::strong_actor_ptr& whom,
                                std::set<std::string> interface,
                                uint16_t port, const std::string& addr) {
  caf::scoped_actor self{sys};
  caf::expected<uint16_t> result{caf::sec::cannot_publish_invalid_actor};
  self
    ->request(middleman_of(sys), caf::infinite, caf::publish_atom::value,
              port, whom, std::move(interface), addr, true)
    .receive([&](uint16_t bound) { result = bound; },
             [&](caf::error& err) { result = std::move(err); });
  return result;
}

std::string connection_failure(caf::actor_system& sys, const std::string& host,
                               uint16_t port) {
  auto st = state_of(sys);
  if (!st)
    return {};
  std::lock_guard<std::mutex> guard{st->mtx};
  auto i = st->failures.find(fmt::format("{}:{}", host, port));
  return i == st->failures.end() ? std::string{} : i->second;
}

bool may_act_as_node(caf::actor_system& sys, const caf::node_id& node) {
  auto st = state_of(sys);
  if (!st || !st->tls || node == sys.node())
    return true;
  std::lock_guard<std::mutex> guard{st->mtx};
  auto i = st->roles.find(node);
  return i != st->roles.end() && i->second == "weir-node";
}

bool uses_tls(caf::actor_system& sys) {
  auto st = state_of(sys);
  return st && st->tls != nullptr;
}

caf::expected<std::pair<caf::io::accept_handle, uint16_t>>
open_data_port(caf::io::abstract_broker& broker, uint16_t port,
               const std::string& addr) {
  auto st = state_of(broker.system());
  if (!st)
    return make_error(errc::invalid_config,
                      "the data port needs the guarded transport");
  auto fd = network::new_tcp_acceptor_impl(port, addr.c_str(), false);
  if (!fd)
    return make_error(errc::invalid_config,
                      fmt::format("cannot listen on {}:{} (taskmanager.host, "
                                  "taskmanager.data.port): {}",
                                  addr, port, broker.system().render(fd.error())));
  auto bound = network::local_port_of_fd(*fd);
  auto& mpx = static_cast<default_multiplexer&>(broker.backend());
  auto doorman = caf::make_counted<guarded_doorman>(mpx, *fd, st,
                                                    carries::data);
  auto hdl = doorman->hdl();
  broker.add_doorman(std::move(doorman));
  return std::make_pair(hdl, bound ? *bound : port);
}

caf::io::connection_handle add_data_connection(caf::io::abstract_broker& broker,
                                               int fd,
                                               const std::string& host,
                                               uint16_t port) {
  auto st = state_of(broker.system());
  auto& mpx = static_cast<default_multiplexer&>(broker.backend());
  auto peer = fmt::format("{}:{}", host, port);
  {
    std::lock_guard<std::mutex> guard{st->mtx};
    st->failures.erase(peer);
  }
  std::unique_ptr<tls_session> tls;
  if (st->tls)
    tls = std::make_unique<tls_session>(st->tls, fd, false, host);
  auto scribe = caf::make_counted<guarded_scribe>(
    mpx, fd, std::move(tls), basp_guard::side::connected, st, peer,
    carries::data);
  track(*st, scribe, false);
  auto hdl = scribe->hdl();
  broker.add_scribe(std::move(scribe));
  return hdl;
}

caf::expected<int> dial_data_port(const std::string& host, uint16_t port,
                                  std::chrono::milliseconds timeout) {
  auto fail = [&](const std::string& why) {
    return make_error(errc::peer_lost,
                      fmt::format("cannot reach the data port {}:{} "
                                  "(taskmanager.host, taskmanager.data.port "
                                  "of its taskmanager): {}",
                                  host, port, why));
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (auto rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
      rc != 0)
    return fail(::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard{found,
                                                             &::freeaddrinfo};
  std::string why = "no address";
  auto deadline = clock_type::now() + timeout;
  for (auto* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK
                                      | SOCK_CLOEXEC,
                      a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - clock_type::now());
      rc = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
      if (rc == 0) {
        ::close(fd);
        why = fmt::format("no connection within {} ms "
                          "(security.ssl.internal.handshake-timeout)",
                          timeout.count());
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      why = std::strerror(errno);
      ::close(fd);
      continue;
    }
    // Credits are small frames: Nagle would hold them back.
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
  }
  return fail(why);
}

} // namespace weir::net
