#include <string>
#include <vector>

#ifdef WEIR_MIMALLOC
#include <mimalloc.h>
#endif

#include "cli/actions.hpp"

namespace {

// The malloc this program runs on, for `weir --version`. Calling into
// mimalloc also keeps the linker from dropping it as unused: linked, it
// replaces malloc for the whole process.
std::string allocator() {
#ifdef WEIR_MIMALLOC
  int v = mi_version();
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10)
         + "." + std::to_string(v % 10);
#else
  return "the system's malloc";
#endif
}

} // namespace

int main(int argc, char** argv) {
  return weir::cli::weir_main(std::vector<std::string>(argv + 1, argv + argc),
                              allocator());
}
