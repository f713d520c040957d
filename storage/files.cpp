#include "storage/files.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir::storage {

caf::expected<std::string> read_whole_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return make_error(errc::storage_failure,
                      fmt::format("cannot read '{}': {}", path,
                                  std::strerror(errno)));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

} // namespace weir::storage
