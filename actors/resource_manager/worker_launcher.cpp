#include "actors/resource_manager/worker_launcher.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "os/spawn.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

/// How long a stopped worker may take before it is killed.
constexpr auto stop_grace = 5s;

struct launcher_state {
  resource_manager_actor rm;
  worker_command cmd;
  /// Shared with the cleanup that stops them (which runs after the state
  /// is gone).
  std::shared_ptr<std::map<resource_id, pid_t>> children
    = std::make_shared<std::map<resource_id, pid_t>>();
  static inline const char* name = "worker_launcher";
};

using self_ptr = worker_launcher_actor::stateful_pointer<launcher_state>;

/// SIGTERM to all, then SIGKILL to those still there after the grace
/// period; reaps them.
void stop_processes(std::vector<pid_t> pids) {
  for (auto pid : pids)
    ::kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + stop_grace;
  while (!pids.empty() && std::chrono::steady_clock::now() < deadline) {
    pids.erase(std::remove_if(pids.begin(), pids.end(),
                              [](pid_t pid) {
                                return ::waitpid(pid, nullptr, WNOHANG) == pid;
                              }),
               pids.end());
    if (!pids.empty())
      std::this_thread::sleep_for(2ms); // a detached thread, bounded wait
  }
  for (auto pid : pids) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

worker_launcher_actor::behavior_type
launcher_impl(self_ptr self, resource_manager_actor rm, worker_command cmd) {
  self->state.rm = std::move(rm);
  self->state.cmd = std::move(cmd);
  self->attach_functor([children = self->state.children] {
    std::vector<pid_t> pids;
    for (auto& [id, pid] : *children)
      pids.push_back(pid);
    stop_processes(std::move(pids));
  });
  return {
    [=](start_atom, const resource_id& id, int32_t slots,
        const resource_profile& slot) {
      auto& st = self->state;
      auto args = st.cmd.arguments(
        worker_request{st.cmd.jobmanager, id, slots, slot});
      // SIGTERM when this launcher's thread ends, however the jobmanager
      // ends (even SIGKILL): workers never outlive their master.
      os::spawn_options opts;
      opts.argv.push_back(st.cmd.program);
      opts.argv.insert(opts.argv.end(), args.begin(), args.end());
      opts.parent_death_signal = SIGTERM;
      os::spawned child;
      if (int err = os::spawn(opts, child); err != 0) {
        auto why = fmt::format("{}: {}", st.cmd.program, std::strerror(err));
        log_eventf("cannot start worker {}: {}", id.value, why);
        self->send(st.rm, exited_atom_v, id, why);
        return;
      }
      log_eventf("started worker {} (pid {}): {} {}", id.value, child.pid,
                 st.cmd.program, fmt::join(args, " "));
      (*st.children)[id] = child.pid;
    },
    [=](cancel_atom, const resource_id& id) {
      auto& st = self->state;
      auto i = st.children->find(id);
      if (i == st.children->end())
        return;
      stop_processes({i->second});
      st.children->erase(i);
      self->send(st.rm, exited_atom_v, id, std::string{});
    },
    [=](tick_atom) {
      auto& st = self->state;
      for (auto i = st.children->begin(); i != st.children->end();) {
        int status = 0;
        if (::waitpid(i->second, &status, WNOHANG) == i->second) {
          log_eventf("worker {} (pid {}) exited with {}", i->first.value,
                     i->second,
                     WIFEXITED(status) ? fmt::format("code {}", WEXITSTATUS(status))
                                       : fmt::format("signal {}", WTERMSIG(status)));
          self->send(st.rm, exited_atom_v, i->first, std::string{});
          i = st.children->erase(i);
        } else {
          ++i;
        }
      }
    },
  };
}

} // namespace

worker_launcher_actor spawn_worker_launcher(caf::actor_system& sys,
                                            resource_manager_actor rm,
                                            worker_command cmd) {
  return sys.spawn<caf::detached>(launcher_impl, std::move(rm),
                                  std::move(cmd));
}

} // namespace weir
