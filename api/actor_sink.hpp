#pragma once

#include <cstddef>
#include <vector>

#include "messages/record.hpp"
#include "messages/row_receiver.hpp"
#include "operators/registry.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// A sink that hands every batch it writes to `receiver`, an actor of this
/// program (docs/cpp-api.md § Lambdas and your own actors). It keeps at most
/// `credits` batches unanswered per subtask and waits for a reply before
/// it writes more, so a slow receiver slows the job down like any slow
/// sink (credit-based backpressure), and nothing is dropped. Use it with
/// stream::to(); the step runs in-process (embedded clusters only).
ops::operator_factory actor_sink(caf::actor_system& sys,
                                 row_receiver_actor receiver,
                                 size_t credits = 8);

/// The rows of `d` as records (docs/rows.md § Compatibility): the key and value
/// of a default schema; any other row as its fields' text.
std::vector<record> records_of(const row_delivery& d);

} // namespace weir
