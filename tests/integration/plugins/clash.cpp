// A library registering an operator name the example library has too.
#include "operators/plugin.hpp"

namespace {

void setup(weir::plugin::registrar& r) {
  r.add_operator(weir::plugin::map_operator(
    "upper", [](weir::record&& x) { return std::move(x); }));
}

} // namespace

WEIR_PLUGIN(setup)
