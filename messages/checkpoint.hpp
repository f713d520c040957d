#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/deployment.hpp"

namespace weir {

/// A savepoint: the state of a job by vertex id (stable across changed
/// graphs), one entry per subtask index (its size is the parallelism).
struct savepoint_data {
  std::map<std::string, std::vector<std::string>> vertices;
  /// Each vertex's max parallelism: its number of key groups, by which its
  /// keyed state is split (messages/key_groups.hpp). A vertex missing here
  /// was snapshotted before key groups (its state is redistributed by key
  /// when it restores).
  std::map<std::string, int32_t> max_parallelism;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, savepoint_data& x) {
  return f(caf::meta::type_name("savepoint_data"), x.vertices,
           x.max_parallelism);
}

/// A completed checkpoint as stored: its id and the job's state in the form
/// of a savepoint (by vertex id and subtask index). An id of 0 means
/// "none".
struct checkpoint_snapshot {
  int64_t id = 0;
  savepoint_data state;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_snapshot& x) {
  return f(caf::meta::type_name("checkpoint_snapshot"), x.id, x.state);
}

/// What a restarted JobMaster finds: the newest checkpoint that read back
/// (id 0: none), and a line for each newer one that did not.
struct loaded_checkpoint {
  checkpoint_snapshot cp;
  std::vector<std::string> problems;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, loaded_checkpoint& x) {
  return f(caf::meta::type_name("loaded_checkpoint"), x.cp, x.problems);
}

inline bool operator==(const checkpoint_snapshot& a,
                       const checkpoint_snapshot& b) {
  return a.id == b.id && a.state.vertices == b.state.vertices
         && a.state.max_parallelism == b.state.max_parallelism;
}

} // namespace weir
