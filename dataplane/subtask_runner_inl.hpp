#pragma once

// The subtask runner's wrappers around every handler, for its own source
// files only (subtask_runner*.cpp).

#include <exception>

#include "dataplane/operator_chain.hpp"
#include "dataplane/subtask_runner.hpp"

namespace weir {

template <class F>
void subtask_runner::guarded(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    fail_with_cause(cause_of(e));
  }
}

template <class F>
void subtask_runner::metered(F&& f) {
  meter_.enter();
  f();
  meter_.leave(processing() && chain_->backlogged());
  after_handler();
}

} // namespace weir
