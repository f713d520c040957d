// A weir library (no operators) whose constructor does what the file named
// by WEIR_TEST_CONSTRUCTOR says, to show where libraries are loaded and
// what a bad one does there: "record:FILE" appends the loading process's
// pid to FILE; "crash" dereferences null; "hang" loops; "allocate"
// allocates until it cannot.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include <unistd.h>

#include "operators/plugin.hpp"

namespace {

__attribute__((constructor)) void on_load() {
  const char* mode_file = std::getenv("WEIR_TEST_CONSTRUCTOR");
  if (mode_file == nullptr)
    return;
  char mode[4096] = {0};
  if (auto* f = std::fopen(mode_file, "r")) {
    if (std::fgets(mode, sizeof mode, f) == nullptr)
      mode[0] = '\0';
    std::fclose(f);
  }
  mode[std::strcspn(mode, "\n")] = '\0';
  const char* what = mode;
  if (std::strncmp(what, "record:", 7) == 0) {
    if (auto* f = std::fopen(what + 7, "a")) {
      std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
      std::fclose(f);
    }
  } else if (std::strcmp(what, "crash") == 0) {
    volatile int* null = nullptr;
    *null = 1;
  } else if (std::strcmp(what, "hang") == 0) {
    for (volatile unsigned i = 0;; i = i + 1) {
    }
  } else if (std::strcmp(what, "allocate") == 0) {
    // 1 GiB at a time: the address space runs out at once, before any
    // page is written (meson's MALLOC_PERTURB_ writes what malloc hands
    // out, which is slow on a loaded machine).
    std::vector<char*> held;
    for (;;)
      held.push_back(new char[size_t{1} << 30]);
  }
}

void setup(weir::plugin::registrar&) {
}

} // namespace

WEIR_PLUGIN(setup)
