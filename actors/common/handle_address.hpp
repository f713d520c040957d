#pragma once

#include <type_traits>
#include <utility>

namespace weir {

/// The address type of an actor handle (or a unit test's stand-in): what
/// the actors' bookkeeping classes key their maps by.
template <class Handle>
using address_of_t
  = std::decay_t<decltype(std::declval<const Handle&>().address())>;

} // namespace weir
