#pragma once

#include <string>
#include <string_view>

// C++ names as a user wrote them, for messages about user code.

namespace weir::ops {

/// `mangled` (an Itanium C++ ABI name: a symbol such as "_ZN4weir1fEv" or a
/// type such as "St16invalid_argument") demangled; unchanged when it is
/// not one.
std::string demangle(const std::string& mangled);

/// `text` with every word that starts with "_Z" demangled, e.g. dlerror's
/// "lib.so: undefined symbol: _ZN4weir1fEv" → "... undefined symbol:
/// weir::f()".
std::string demangle_symbols(std::string_view text);

/// The exception being handled (call it inside a catch block): its
/// demangled type and, for a std::exception, its message, e.g.
/// "std::invalid_argument: stoll".
std::string describe_current_exception();

} // namespace weir::ops
