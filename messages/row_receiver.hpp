#pragma once

#include <cstdint>
#include <string>

#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/row_batch.hpp"
#include "messages/schema.hpp"

namespace weir {

/// A batch of rows an actor sink (api/actor_sink.hpp) hands to a host
/// program's actor.
struct row_delivery {
  /// The sink step's id and the subtask that wrote the rows (batches of one
  /// subtask arrive in order).
  std::string step;
  int32_t subtask = 0;
  /// What the rows hold (the sink's input schema).
  schema fields;
  row_batch rows;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_delivery& x) {
  return f(caf::meta::type_name("row_delivery"), x.step, x.subtask, x.fields,
           x.rows);
}

/// A host program's actor that receives a job's rows as its actor sink
/// writes them.
using row_receiver_actor = caf::typed_actor<
  /// Actor sink: rows. The reply gives the sink its credit back (a reply
  /// held back with a response promise holds the sink, and the job, back);
  /// false fails the job ("the receiver refused the rows").
  caf::replies_to<data_atom, row_delivery>::with<bool>>;

} // namespace weir
