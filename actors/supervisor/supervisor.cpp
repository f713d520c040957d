// The jobmanager's supervisor: one-for-one restarts of the ResourceManager
// and the Dispatcher. A crash (any end the supervisor did not ask for) is
// logged and the child is started again, unless the restart intensity is
// used up: then the supervisor stops the other child and ends with
// supervision_gave_up, which makes the process exit non-zero. Restarts back
// off (restart_intensity::backoff). A Dispatcher that ends because the
// stored jobs are damaged (storage_corrupt) is not restarted: every start
// would fail the same way, so the supervisor ends with that reason at once.
//
// Re-announcement: a new Dispatcher is found through `lookup` (the gateway
// asks here); a new ResourceManager is handed to the Dispatcher, which
// replaces its JobMasters, and TaskExecutors find it when they register
// again (they end with the old one).
#include "actors/supervisor/supervisor.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "actors/dispatcher/dispatcher.hpp"
#include "actors/supervisor/restart_intensity.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace {

/// The supervisor's own timer: restart the ResourceManager (true) or the
/// Dispatcher (false) after a backoff.
using supervisor_private_actor
  = supervisor_actor::extend<caf::reacts_to<restart_atom, bool>>;

struct supervisor_state {
  supervisor_options opts;
  job_store_actor store;
  resource_manager_actor rm;
  dispatcher_actor dispatcher;
  restart_intensity intensity{0, std::chrono::milliseconds{0}};
  /// The jobmanager's HOST:PORT once it listens ("" before): a restarted
  /// ResourceManager gets it too, or an application's workers would never
  /// be started again.
  std::string address;
  static inline const char* name = "supervisor";
};

using self_ptr = supervisor_private_actor::stateful_pointer<supervisor_state>;

void start_resource_manager(self_ptr self) {
  auto& st = self->state;
  st.rm = spawn_resource_manager(self->system(), st.opts.resource_manager);
  self->monitor(st.rm);
}

void start_dispatcher(self_ptr self) {
  auto& st = self->state;
  st.dispatcher = spawn_dispatcher(self->system(), st.store, st.rm,
                                   st.opts.job_master, st.opts.intensity,
                                   st.opts.application_mode);
  self->monitor(st.dispatcher);
}

void restart(self_ptr self, bool rm) {
  auto& st = self->state;
  if (rm) {
    start_resource_manager(self);
    if (!st.address.empty())
      self->send(st.rm, start_atom_v, st.address);
    self->send(st.dispatcher, rm_changed_atom_v, st.rm);
  } else {
    start_dispatcher(self);
  }
}

void on_child_down(self_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  bool is_rm = st.rm && dm.source == st.rm.address();
  bool is_dispatcher = st.dispatcher && dm.source == st.dispatcher.address();
  if (!is_rm && !is_dispatcher)
    return; // an older incarnation
  const char* name = is_rm ? "ResourceManager" : "Dispatcher";
  if (is_dispatcher && dm.reason.category() == errc_category()
      && (dm.reason.code() == static_cast<uint8_t>(errc::application_finished)
          || dm.reason.code() == static_cast<uint8_t>(errc::application_failed))) {
    // Driver mode: the application ended, and so does the cluster.
    if (st.rm)
      self->send_exit(st.rm, caf::exit_reason::user_shutdown);
    self->quit(dm.reason);
    return;
  }
  if (is_dispatcher && dm.reason == make_error(errc::storage_corrupt)) {
    if (st.rm)
      self->send_exit(st.rm, caf::exit_reason::user_shutdown);
    self->quit(dm.reason);
    return;
  }
  auto reason = describe(dm.reason);
  if (!st.intensity.on_crash(self->clock().now())) {
    log_eventf("supervisor: the {} crashed ({}); giving up after {}", name,
               reason, st.intensity.describe());
    if (is_rm && st.dispatcher)
      self->send_exit(st.dispatcher, caf::exit_reason::user_shutdown);
    if (is_dispatcher && st.rm)
      self->send_exit(st.rm, caf::exit_reason::user_shutdown);
    self->quit(make_error(errc::supervision_gave_up,
                          fmt::format("the {} crashed more than {}", name,
                                      st.intensity.describe())));
    return;
  }
  auto delay = st.intensity.backoff();
  log_eventf("supervisor: the {} crashed ({}); restarting it{} ({} of {})",
             name, reason,
             delay.count() > 0 ? fmt::format(" in {} ms", delay.count()) : "",
             st.intensity.recent(), st.intensity.describe());
  if (delay.count() > 0)
    self->delayed_send(self, delay, restart_atom_v, is_rm);
  else
    restart(self, is_rm);
}

supervisor_private_actor::behavior_type supervisor_impl(self_ptr self,
                                                job_store_actor store,
                                                supervisor_options opts) {
  auto& st = self->state;
  st.opts = opts;
  st.intensity = restart_intensity{opts.intensity.max_restarts,
                                   opts.intensity.within};
  st.store = std::move(store);
  start_resource_manager(self);
  start_dispatcher(self);
  self->set_down_handler([=](caf::down_msg& dm) { on_child_down(self, dm); });
  self->set_exit_handler([=](caf::exit_msg& msg) {
    auto& st = self->state;
    // Demonitor first: the children's ends are no crashes.
    if (st.dispatcher) {
      self->demonitor(st.dispatcher.address());
      self->send_exit(st.dispatcher, msg.reason);
    }
    if (st.rm) {
      self->demonitor(st.rm.address());
      self->send_exit(st.rm, msg.reason);
    }
    self->quit(msg.reason);
  });
  return {
    [=](lookup_atom) {
      return std::make_tuple(self->state.dispatcher, self->state.rm);
    },
    [=](restart_atom, bool rm) { restart(self, rm); },
    [=](start_atom, std::string& address) {
      auto& st = self->state;
      st.address = std::move(address);
      self->send(st.rm, start_atom_v, st.address);
    },
  };
}

} // namespace

supervisor_actor spawn_supervisor(caf::actor_system& sys, job_store_actor store,
                                  supervisor_options opts) {
  return sys.spawn(supervisor_impl, std::move(store), opts);
}

} // namespace weir
