#pragma once

// The subtasks of the JobMaster's current round: each execution's handle
// by flat index, the execution of an actor that ended, and whether all are
// deployed. Plain bookkeeping over actor handles (any `Handle` with an
// `address()` and a bool conversion), so unit tests use stand-ins.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "actors/common/handle_address.hpp"

namespace weir {

template <class Handle>
class deployed_subtasks {
public:
  using address_type = address_of_t<Handle>;

  /// A new round of `executions` subtasks, none deployed.
  void reset(size_t executions) {
    handles_.assign(executions, Handle{});
    by_address_.clear();
    deployed_ = 0;
  }

  /// Execution `flat` runs as `h`.
  void deployed(int32_t flat, Handle h) {
    auto addr = h.address();
    handles_.at(static_cast<size_t>(flat)) = std::move(h);
    by_address_[addr] = flat;
    ++deployed_;
  }

  /// The execution whose subtask is the actor at `addr`.
  std::optional<int32_t> execution_of(const address_type& addr) const {
    auto i = by_address_.find(addr);
    if (i == by_address_.end())
      return std::nullopt;
    return i->second;
  }

  /// Execution `flat`'s subtask (empty: not deployed in this round).
  const Handle& operator[](size_t flat) const { return handles_.at(flat); }

  /// Every execution's subtask, by flat index (empty ones included).
  const std::vector<Handle>& all() const { return handles_; }

  /// Whether every execution of the round is deployed.
  bool complete() const { return deployed_ == handles_.size(); }

private:
  std::vector<Handle> handles_;
  std::map<address_type, int32_t> by_address_;
  size_t deployed_ = 0;
};

} // namespace weir
