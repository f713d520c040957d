#include "operators/builtin/file_io.hpp"

#include <cerrno>
#include <cstring>

#include <unistd.h>

#include <fmt/format.h>

#include "operators/operator.hpp"

namespace weir::ops {

void write_fully(int fd, const std::string& buf, const std::string& path) {
  size_t done = 0;
  while (done < buf.size()) {
    auto n = ::write(fd, buf.data() + done, buf.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw operator_error(
        fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
}

} // namespace weir::ops
