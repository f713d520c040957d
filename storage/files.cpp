#include "storage/files.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

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

namespace {

caf::error io_error(const std::string& what, const std::string& path) {
  return make_error(errc::storage_failure,
                    fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
}

} // namespace

std::string temporary_name(const std::string& path) {
  return path + ".tmp";
}

caf::error write_durably(const std::string& path, const std::string& bytes) {
  auto tmp = temporary_name(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error("cannot create", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      auto err = io_error("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return err;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    auto err = io_error("cannot sync", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return err;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return io_error("cannot rename", tmp);
  return caf::none;
}

} // namespace weir::storage
