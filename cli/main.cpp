#include <string>
#include <vector>

#include "cli/actions.hpp"

int main(int argc, char** argv) {
  return weir::cli::weir_main(std::vector<std::string>(argv + 1, argv + argc));
}
