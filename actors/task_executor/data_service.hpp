#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <caf/expected.hpp>

#include "messages/data_service.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// The subtasks of this process that frames may go to, by attempt. The
/// TaskExecutor adds a subtask when it spawns it, before any producer can
/// send to it, and removes it when it ends; the data service reads it on
/// every frame. Thread-safe.
class data_registry {
public:
  void add(const execution_attempt_id& attempt, subtask_actor subtask);
  void remove(const execution_attempt_id& attempt);
  /// The subtask running `attempt` here (empty: none, or it ended).
  subtask_actor find(const execution_attempt_id& attempt) const;

private:
  mutable std::mutex mtx_;
  std::unordered_map<execution_attempt_id, subtask_actor> subtasks_;
};

/// Where a process's data service listens and who it is.
struct data_service_options {
  /// The taskmanager (its hello names it; the smaller id of two dials).
  resource_id tm;
  /// taskmanager.host and taskmanager.data.port (0: any free port).
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  /// How long dialling a peer's data port may take
  /// (security.ssl.internal.handshake-timeout).
  std::chrono::milliseconds connect_timeout{5000};
};

/// A running data service.
struct data_service {
  data_service_actor actor;
  /// Its data port as peers reach it.
  data_endpoint endpoint;
  std::shared_ptr<data_registry> registry;
};

/// Starts the data service of a taskmanager process (its transport
/// started): listens on host:port. Fails with one line naming
/// taskmanager.host and taskmanager.data.port when it cannot.
[[nodiscard]] caf::expected<data_service>
start_data_service(caf::actor_system& sys, const data_service_options& opts);

} // namespace weir
