#include "net/http_guard.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/server_tls.hpp"

namespace weir {

using clock_type = std::chrono::steady_clock;

namespace {

/// Set while the listener thread runs a task itself to refuse its
/// connection: every thread and the queue are taken.
thread_local bool refusing = false;

/// When the connection a worker is about to serve was accepted: its first
/// request's head is due head_timeout after that, however long it waited
/// for the thread.
thread_local std::chrono::steady_clock::time_point accepted_at{};

} // namespace

/// The connections being served, and which of them still wait for their
/// request's head (those may be closed to make room).
class connection_table {
public:
  struct entry {
    int sock;
    clock_type::time_point since;
    bool waiting = true;
  };
  using handle = std::list<entry>::iterator;

  handle enter(int sock) {
    std::lock_guard<std::mutex> guard{mtx_};
    return entries_.insert(entries_.end(), entry{sock, clock_type::now()});
  }

  void leave(handle h) {
    std::lock_guard<std::mutex> guard{mtx_};
    entries_.erase(h);
    changed_.notify_all();
  }

  void waiting(handle h, bool yes) {
    std::lock_guard<std::mutex> guard{mtx_};
    h->waiting = yes;
    if (yes)
      h->since = clock_type::now();
    changed_.notify_all();
  }

  /// Closes every connection being served (the server stops). Requests
  /// being answered get up to `grace` to finish first: a client whose
  /// answer was on its way gets it (an application cluster ends right
  /// after its client fetched the result), a slow one does not hold the
  /// process up.
  void close_all(std::chrono::milliseconds grace) {
    std::unique_lock<std::mutex> guard{mtx_};
    changed_.wait_until(guard, clock_type::now() + grace, [this] {
      return std::all_of(entries_.begin(), entries_.end(),
                         [](const entry& e) { return e.waiting; });
    });
    for (auto& e : entries_)
      ::shutdown(e.sock, SHUT_RDWR);
  }

  /// Closes the connection that has waited longest for a request's head;
  /// false when none waits.
  bool evict_oldest_waiting() {
    std::lock_guard<std::mutex> guard{mtx_};
    auto oldest = entries_.end();
    for (auto i = entries_.begin(); i != entries_.end(); ++i)
      if (i->waiting && (oldest == entries_.end() || i->since < oldest->since))
        oldest = i;
    if (oldest == entries_.end())
      return false;
    // Its thread's poll or read fails now, and it leaves the table.
    ::shutdown(oldest->sock, SHUT_RDWR);
    oldest->waiting = false;
    return true;
  }

private:
  std::mutex mtx_;
  std::condition_variable changed_;
  std::list<entry> entries_;
};

namespace {

/// httplib's task queue: max_connections threads, and connections that
/// find all of them taken wait, the newest served first. Each new one
/// closes the connection that has waited longest for its request's head,
/// so a crowd of slow heads frees a thread for every newcomer, and the
/// newcomer gets it. Past max_connections * 4 waiting, the oldest waiting
/// one is refused (its task runs here, on the listener thread, and closes
/// its socket).
class guarded_pool : public httplib::TaskQueue {
public:
  guarded_pool(size_t threads, std::shared_ptr<connection_table> table)
    : table_(std::move(table)), max_queued_(threads * 4) {
    for (size_t i = 0; i < threads; ++i)
      threads_.emplace_back([this] { work(); });
  }

  ~guarded_pool() override {
    shutdown();
  }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> guard{mtx_};
    if (busy_ + jobs_.size() >= threads_.size())
      table_->evict_oldest_waiting();
    jobs_.emplace_back(std::move(fn), clock_type::now());
    cond_.notify_one();
    if (jobs_.size() > max_queued_) {
      auto oldest = std::move(jobs_.front().first);
      jobs_.pop_front();
      guard.unlock();
      refusing = true;
      oldest();
      refusing = false;
    }
  }

  /// The server stops: waiting connections are refused, served ones
  /// closed, so that no slow client holds the process up.
  void shutdown() override {
    decltype(jobs_) waiting;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (stopped_)
        return;
      stopped_ = true;
      waiting.swap(jobs_);
    }
    refusing = true;
    for (auto& job : waiting)
      job.first();
    refusing = false;
    table_->close_all(std::chrono::seconds{2});
    cond_.notify_all();
    for (auto& t : threads_)
      t.join();
  }

private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> guard{mtx_};
        cond_.wait(guard, [this] { return stopped_ || !jobs_.empty(); });
        if (stopped_ && jobs_.empty())
          return;
        fn = std::move(jobs_.back().first); // the newest first
        accepted_at = jobs_.back().second;
        jobs_.pop_back();
        ++busy_;
      }
      fn();
      std::lock_guard<std::mutex> guard{mtx_};
      --busy_;
    }
  }

  std::shared_ptr<connection_table> table_;
  size_t max_queued_;
  std::mutex mtx_;
  std::condition_variable cond_;
  std::deque<std::pair<std::function<void()>, clock_type::time_point>> jobs_;
  size_t busy_ = 0;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

void address_of(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto rc = peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len)
                 : ::getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0)
    return;
  char text[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

/// One connection as httplib's request parser reads it: buffered, over
/// TLS or not, and every read bounded by the deadline of the request's
/// head, then of the request, then of each read.
class guarded_stream : public httplib::Stream {
public:
  guarded_stream(int sock, net::server_tls* tls, connection_table& table,
                 connection_table::handle h, const http_limits& limits)
    : sock_(sock), tls_(tls), table_(table), handle_(h), limits_(limits) {
  }

  /// The next request starts (at `since`): its head is due within
  /// head_timeout.
  void begin_request(clock_type::time_point since = clock_type::now()) {
    head_deadline_ = since + limits_.head_timeout;
    request_deadline_ = since + limits_.request_timeout;
    in_head_ = true;
    table_.waiting(handle_, true);
  }

  bool is_readable() const override {
    if (pos_ < len_ || (tls_ != nullptr && tls_->pending()))
      return true;
    return net::poll_until(sock_, POLLIN, read_deadline());
  }

  bool is_writable() const override {
    return net::poll_until(sock_, POLLOUT,
                           clock_type::now() + limits_.io_timeout);
  }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      if (!is_readable())
        return -1;
      auto n = receive(buffer_, sizeof buffer_);
      if (n <= 0)
        return n;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
    }
    auto n = std::min(size, len_ - pos_);
    std::copy(buffer_ + pos_, buffer_ + pos_ + n, ptr);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable())
      return -1;
    if (tls_ != nullptr)
      return tls_->write(ptr, size);
    return ::send(sock_, ptr, size, MSG_NOSIGNAL);
  }

  /// httplib asks for the peer right after it read the request's head:
  /// from then on the request's own deadline counts.
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    if (in_head_) {
      in_head_ = false;
      table_.waiting(handle_, false);
    }
    address_of(sock_, true, ip, port);
  }

  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(sock_, false, ip, port);
  }

  socket_t socket() const override {
    return sock_;
  }

  /// Whether the request's whole head arrived (else httplib answered 400).
  bool head_arrived() const {
    return !in_head_;
  }

private:
  clock_type::time_point read_deadline() const {
    if (in_head_)
      return head_deadline_;
    return std::min(request_deadline_,
                    clock_type::now() + limits_.io_timeout);
  }

  ssize_t receive(char* buf, size_t size) {
    if (tls_ == nullptr)
      return ::recv(sock_, buf, size, 0);
    return tls_->read(buf, size);
  }

  int sock_;
  net::server_tls* tls_;
  connection_table& table_;
  connection_table::handle handle_;
  const http_limits& limits_;
  clock_type::time_point head_deadline_{};
  clock_type::time_point request_deadline_{};
  mutable bool in_head_ = true;
  char buffer_[16 * 1024];
  size_t pos_ = 0;
  size_t len_ = 0;
};

/// Closes a connection when it goes.
struct closing {
  int sock;
  explicit closing(int fd) : sock(fd) {
    // An answer's head and body are separate writes: without this, Nagle
    // held the body until the client's delayed ACK (40 ms an answer).
    int on = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  ~closing() {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
};

/// httplib's keep-alive loop over `stream`: at most `max_requests`, each
/// head within its deadline.
template <class Process>
void serve_requests(guarded_stream& stream, size_t max_requests,
                    Process process) {
  for (size_t left = max_requests; left > 0; --left) {
    if (left == max_requests)
      stream.begin_request(accepted_at);
    else
      stream.begin_request();
    if (!stream.is_readable())
      return; // idle past the head deadline, or closed
    bool closed = false;
    if (!process(stream, left == 1, closed) || closed
        || !stream.head_arrived())
      return;
  }
}

template <class Server>
void install_pool(Server& server, size_t threads,
                  const std::shared_ptr<connection_table>& table) {
  server.new_task_queue = [threads, table] {
    return new guarded_pool(threads, table);
  };
}

void widen(int sock) {
  if (sock >= 0)
    ::listen(sock, SOMAXCONN);
}

} // namespace

guarded_http_server::guarded_http_server(const http_limits& limits)
  : limits_(limits), table_(std::make_shared<connection_table>()) {
  install_pool(*this, limits_.max_connections, table_);
}

guarded_http_server::~guarded_http_server() = default;

void guarded_http_server::widen_backlog() {
  widen(svr_sock_);
}

bool guarded_http_server::process_and_close_socket(socket_t sock) {
  closing done{sock};
  if (refusing)
    return false;
  auto h = table_->enter(sock);
  guarded_stream stream{sock, nullptr, *table_, h, limits_};
  serve_requests(stream, keep_alive_max_count_,
                 [this](guarded_stream& s, bool last, bool& closed) {
                   return process_request(s, last, closed, nullptr);
                 });
  table_->leave(h);
  return true;
}

guarded_https_server::guarded_https_server(const char* certificate,
                                           const char* key,
                                           const char* client_ca,
                                           const http_limits& limits)
  : httplib::SSLServer(certificate, key, client_ca), limits_(limits),
    table_(std::make_shared<connection_table>()) {
  install_pool(*this, limits_.max_connections, table_);
}

guarded_https_server::~guarded_https_server() = default;

void guarded_https_server::widen_backlog() {
  widen(svr_sock_);
}

bool guarded_https_server::process_and_close_socket(socket_t sock) {
  closing done{sock};
  if (refusing)
    return false;
  auto h = table_->enter(sock);
  net::server_tls tls{ssl_context(), sock};
  // The handshake counts against the first request's head.
  if (tls.accept(accepted_at + limits_.head_timeout)) {
    guarded_stream stream{sock, &tls, *table_, h, limits_};
    serve_requests(stream, keep_alive_max_count_,
                   [this, &tls](guarded_stream& s, bool last, bool& closed) {
                     return process_request(
                       s, last, closed,
                       [&tls](httplib::Request& req) { req.ssl = tls.native(); });
                   });
  }
  table_->leave(h);
  return true;
}

} // namespace weir
