#pragma once

// Functions that travel (docs/cpp-api.md § Step 2: the same job on a session cluster): a
// record function defined by name at namespace scope of a user library
//
//   WEIR_MAP(shout, [](weir::record&& r) {
//     for (auto& c : r.text) c = std::toupper(c);
//     return std::move(r);
//   });
//
// is an operator named "shout" wherever that library is loaded: in the
// program itself (an embedded cluster), and on every worker of a session
// or application cluster the library is shipped to (`--libjars`, a
// driver's library). A job refers to it as `.map(shout)`. The library
// still needs WEIR_PLUGIN(setup) or WEIR_LIBRARY() once, which weir looks
// for when it loads it.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "operators/in_process.hpp"
#include "operators/plugin.hpp"

namespace weir {

/// A function registered by name with WEIR_MAP, WEIR_FLAT_MAP or
/// WEIR_FILTER.
struct user_function {
  enum class kind { map, flat_map, filter };
  std::string name;
  kind what = kind::map;
};

namespace detail {

inline user_function name_map(std::string name,
                              std::function<record(record&&)> f,
                              std::optional<schema> output = std::nullopt) {
  ops::add_named_operator(plugin::map_operator(name, std::move(f),
                                               std::move(output)));
  return {std::move(name), user_function::kind::map};
}

inline user_function
name_flat_map(std::string name,
              std::function<void(record&&, std::vector<record>&)> f,
              std::optional<schema> output = std::nullopt) {
  ops::add_named_operator(plugin::flat_map_operator(name, std::move(f),
                                                    std::move(output)));
  return {std::move(name), user_function::kind::flat_map};
}

inline user_function name_filter(std::string name,
                                 std::function<bool(const record&)> f) {
  ops::add_named_operator(plugin::filter_operator(name, std::move(f)));
  return {std::move(name), user_function::kind::filter};
}

} // namespace detail

} // namespace weir

/// Defines `name` as a record function `record(record&&)` registered as
/// operator "name"; optional second argument: its output schema.
#define WEIR_MAP(name, ...)                                                  \
  const ::weir::user_function name =                                         \
    ::weir::detail::name_map(#name, __VA_ARGS__)

/// Defines `name` as `void(record&&, std::vector<record>& out)`.
#define WEIR_FLAT_MAP(name, ...)                                             \
  const ::weir::user_function name =                                         \
    ::weir::detail::name_flat_map(#name, __VA_ARGS__)

/// Defines `name` as `bool(const record&)`.
#define WEIR_FILTER(name, ...)                                               \
  const ::weir::user_function name =                                         \
    ::weir::detail::name_filter(#name, __VA_ARGS__)

/// The entry points of a library that only names functions (no
/// registrations of its own).
#define WEIR_LIBRARY()                                                       \
  static void weir_library_registers_nothing(::weir::plugin::registrar&) {} \
  WEIR_PLUGIN(weir_library_registers_nothing)
