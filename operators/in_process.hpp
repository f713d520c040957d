#pragma once

// Operators that live in this process only (docs/cpp-api.md § Lambdas
// and your own actors): a job builder's lambdas and actor sinks, which an embedded
// cluster runs as they are, and functions a program defines by name with
// WEIR_MAP and friends (operators/builtin/functions.hpp).

#include <cstddef>
#include <string>
#include <vector>

#include "operators/registry.hpp"

namespace weir::ops {

/// The separator of in-process operator names: "map#<process token>.3".
/// No library may register a name with it, so a name of one process is
/// never taken for a library's operator.
constexpr char in_process_mark = '#';

/// Whether `name` is one that add_in_process_operator made.
bool is_in_process_name(const std::string& name);

/// What an operator name reads as: an in-process one's label ("map#<process
/// token>.3" → "map"), any other as it is.
inline std::string operator_label(const std::string& name) {
  return name.substr(0, name.find(in_process_mark));
}

/// Adds `f` under a fresh name "<f.name>#<process token>.<n>" and returns
/// that name. It
/// stays for the life of the process (a closure is small; a host that
/// builds jobs in a loop keeps one per step). Thread-safe.
std::string add_in_process_operator(operator_factory f);

/// Registers an operator under its own stable name (WEIR_MAP and friends,
/// at static initialisation). While a library is being loaded
/// (library_loader.cpp) its registrations belong to that library; the rest
/// belong to the program and are found by every registry of the process.
void add_named_operator(operator_factory f);

/// "unknown operator 'NAME'", with why for an in-process name (a job that
/// outlived the process that built it, or went to another one).
std::string unknown_operator(const std::string& name);

/// The in-process or program-named operator `name`, or nullptr. Pointers
/// stay valid for the life of the process. Thread-safe.
const operator_factory* find_in_process_operator(const std::string& name);

/// Library loading: operators named while a library was opened are taken
/// out of the program's table and handed to the library's registry.
/// begin_library_load() marks the table, end_library_load() returns what
/// was added since. Called under the loader's lock.
void begin_library_load();
std::vector<operator_factory> end_library_load();

} // namespace weir::ops
