// A library that needs a C++ function no one defines: dlopen fails with an
// undefined (mangled) symbol, which weir shows demangled.
#include "operators/plugin.hpp"

namespace weir::test_only {
void missing_function(int);
} // namespace weir::test_only

namespace {

void setup(weir::plugin::registrar&) {
  weir::test_only::missing_function(1);
}

} // namespace

WEIR_PLUGIN(setup)
