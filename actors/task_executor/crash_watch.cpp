#include "actors/task_executor/crash_watch.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/common/event_log.hpp"
#include "dataplane/crash_note.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

/// How long the JobMaster has to answer, and how long the crashing thread
/// waits for that (a little longer).
constexpr auto answer_timeout = 3s;
constexpr int ack_timeout_ms = 4000;

std::mutex routes_mutex;
std::map<execution_attempt_id, job_master_actor> routes;
std::atomic<bool> watching{false};

} // namespace

struct crash_watch::impl {
  caf::actor_system& sys;
  int notes[2] = {-1, -1}; // the handler writes [1], the thread reads [0]
  int acks[2] = {-1, -1};  // the thread writes [1], the handler polls [0]
  std::thread reader;

  explicit impl(caf::actor_system& s) : sys(s) {
    if (::pipe2(notes, O_CLOEXEC) != 0 || ::pipe2(acks, O_CLOEXEC) != 0)
      throw std::runtime_error("cannot create the crash watch's pipes");
    install_crash_handler(notes[1], acks[0], ack_timeout_ms);
    reader = std::thread{[this] { run(); }};
  }

  ~impl() {
    uninstall_crash_handler();
    ::close(notes[1]); // the reader sees the end
    reader.join();
    for (int fd : {notes[0], acks[0], acks[1]})
      ::close(fd);
  }

  void run() {
    std::string pending;
    char buf[1024];
    for (;;) {
      auto n = ::read(notes[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      pending.append(buf, static_cast<size_t>(n));
      for (auto nl = pending.find('\n'); nl != std::string::npos;
           nl = pending.find('\n')) {
        deliver(pending.substr(0, nl));
        pending.erase(0, nl + 1);
      }
    }
  }

  void deliver(const std::string& line) {
    auto [attempt_text, cause] = parse_note(line);
    auto attempt = execution_attempt_id::parse(attempt_text);
    job_master_actor jm;
    if (attempt) {
      std::lock_guard<std::mutex> guard{routes_mutex};
      if (auto i = routes.find(*attempt); i != routes.end())
        jm = i->second;
    }
    if (jm && !cause.empty()) {
      caf::scoped_actor self{sys};
      self->request(jm, answer_timeout, crashed_atom_v, *attempt, cause)
        .receive([](bool) {},
                 [&](caf::error&) {
                   log_eventf("could not tell the JobMaster: {}", cause);
                 });
    }
    char ack = 1;
    while (::write(acks[1], &ack, 1) < 0 && errno == EINTR) {
    }
  }
};

crash_watch::crash_watch(caf::actor_system& sys)
  : impl_(std::make_unique<impl>(sys)) {
  watching = true;
}

crash_watch::~crash_watch() {
  watching = false;
}

void crash_watch::route(execution_attempt_id attempt, job_master_actor jm) {
  if (!watching)
    return;
  std::lock_guard<std::mutex> guard{routes_mutex};
  routes[attempt] = std::move(jm);
}

void crash_watch::forget(execution_attempt_id attempt) {
  if (!watching)
    return;
  std::lock_guard<std::mutex> guard{routes_mutex};
  routes.erase(attempt);
}

std::pair<std::string, std::string>
crash_watch::parse_note(const std::string& line) {
  auto first = line.find('\t');
  auto last = line.rfind('\t');
  if (first == std::string::npos || last == first)
    return {};
  return {line.substr(0, first),
          line.substr(first + 1, last - first - 1)
            + " crashed the TaskExecutor (signal " + line.substr(last + 1)
            + ")"};
}

} // namespace weir
