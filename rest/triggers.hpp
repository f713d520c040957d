#pragma once

// The REST API's asynchronous operations (savepoint, stop): Flink's
// "request-id" for a POST, polled at /jobs/{jobid}/savepoints/{triggerid}.
// Plain and thread-safe: httplib's threads add and read entries, the actor
// that waits for the Dispatcher's answer completes them.

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "messages/ids.hpp"

namespace weir::rest {

/// Where an operation stands: running, or done with a location or a
/// failure.
struct trigger_state {
  bool done = false;
  /// When done: the savepoint's path; empty if it failed.
  std::string location;
  /// When done and failed: why, one line.
  std::string failure;
  /// When done and failed with one of weir's errors: its code's name
  /// (errc, "unknown_job"...), for weir's client API.
  std::string code;
};

/// The operations the REST API started, by job and trigger id. Keeps at
/// most `capacity` of them: past that, the oldest finished one is dropped
/// (operations that still run are never dropped).
class trigger_table {
public:
  explicit trigger_table(size_t capacity = 1024) : capacity_(capacity) {}

  /// Registers a running operation of `job`; returns its new trigger id
  /// (32 hex characters, random).
  std::string start(const job_id& job);

  /// What `start(job, wanted)` did: the operation's id, and whether it is
  /// new (false: `job` already has an operation of that id).
  struct started {
    std::string id;
    bool fresh = false;
  };

  /// Registers an operation of `job` under `wanted`, a client's trigger id
  /// (Flink's idempotent triggering: a second request with the same id
  /// names the first operation instead of starting another). Nothing when
  /// another job's operation has that id.
  std::optional<started> start(const job_id& job, const std::string& wanted);

  /// Marks trigger `id` done with the savepoint's path (nothing if unknown).
  void complete(const std::string& id, const std::string& location);

  /// Marks trigger `id` failed with `why` (nothing if unknown); `code`:
  /// weir's error code's name, if it is one of weir's errors.
  void fail(const std::string& id, const std::string& why,
            const std::string& code = {});

  /// Operation `id` of `job`; nothing when there is none (another job's
  /// trigger id included).
  std::optional<trigger_state> find(const job_id& job,
                                    const std::string& id) const;

  /// How many operations it keeps.
  size_t size() const;

private:
  struct entry {
    job_id job;
    trigger_state state;
  };

  void finish(const std::string& id, trigger_state s);
  void trim();

  mutable std::mutex mutex_;
  size_t capacity_;
  std::map<std::string, entry> entries_;
  std::deque<std::string> order_; // trigger ids, oldest first
};

/// GET /jobs/{jobid}/savepoints/{triggerid}: {"status": {"id":
/// "IN_PROGRESS"}}, or "COMPLETED" with "operation": {"location"} (a
/// file: URI, as Flink's) or {"failure-cause": {"class", "stack-trace",
/// "serialized-throwable"}} (Flink's fields).
nlohmann::json operation_status(const trigger_state& s);

} // namespace weir::rest
