#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <caf/meta/type_name.hpp>

namespace weir {

/// Makes this thread's random ids a function of `seed` from now on: the
/// simulation (`weir-sim`) replays a run with the same ids.
void seed_random_ids(uint64_t seed);

/// A 128-bit random identifier, printed as 32 lowercase hex characters like
/// Flink's AbstractID (JobID, AllocationID, ExecutionAttemptID).
template <class Tag>
struct uuid_id {
  uint64_t hi = 0;
  uint64_t lo = 0;

  /// A fresh random id (never the nil id).
  static uuid_id random();

  /// Parses exactly 32 hex characters; nothing otherwise.
  static std::optional<uuid_id> parse(std::string_view text);

  /// The 32-character lowercase hex form.
  std::string to_string() const;

  bool valid() const { return hi != 0 || lo != 0; }

  friend bool operator==(const uuid_id& a, const uuid_id& b) {
    return a.hi == b.hi && a.lo == b.lo;
  }
  friend bool operator!=(const uuid_id& a, const uuid_id& b) { return !(a == b); }
  friend bool operator<(const uuid_id& a, const uuid_id& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
  }
};

template <class Inspector, class Tag>
typename Inspector::result_type inspect(Inspector& f, uuid_id<Tag>& x) {
  return f(caf::meta::type_name(Tag::name), x.hi, x.lo);
}

template <class Tag>
std::string to_string(const uuid_id<Tag>& x) {
  return x.to_string();
}

struct job_id_tag { static constexpr const char* name = "job_id"; };
struct allocation_id_tag { static constexpr const char* name = "allocation_id"; };
struct attempt_id_tag { static constexpr const char* name = "attempt_id"; };
struct job_master_id_tag { static constexpr const char* name = "jm_id"; };
struct resource_manager_id_tag { static constexpr const char* name = "rm_id"; };

/// Identifies a job across its whole life (submission, restarts, recovery).
using job_id = uuid_id<job_id_tag>;
/// Identifies one slot allocation made for a job.
using allocation_id = uuid_id<allocation_id_tag>;
/// Identifies one execution attempt of one subtask.
using execution_attempt_id = uuid_id<attempt_id_tag>;
/// Fencing token of a JobMaster leader: requests carrying an old one are refused.
using job_master_id = uuid_id<job_master_id_tag>;
/// Fencing token of a ResourceManager leader.
using resource_manager_id = uuid_id<resource_manager_id_tag>;

/// Names a TaskExecutor (a worker process or an embedded worker).
struct resource_id {
  std::string value;
  friend bool operator==(const resource_id& a, const resource_id& b) { return a.value == b.value; }
  friend bool operator!=(const resource_id& a, const resource_id& b) { return !(a == b); }
  friend bool operator<(const resource_id& a, const resource_id& b) { return a.value < b.value; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resource_id& x) {
  return f(caf::meta::type_name("resource_id"), x.value);
}

inline std::string to_string(const resource_id& x) { return x.value; }

} // namespace weir

template <class Tag>
struct std::hash<weir::uuid_id<Tag>> {
  size_t operator()(const weir::uuid_id<Tag>& x) const noexcept {
    return static_cast<size_t>(x.hi ^ (x.lo * 0x9e3779b97f4a7c15ULL));
  }
};
