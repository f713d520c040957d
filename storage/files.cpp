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

namespace {

caf::error io_error(const std::string& what, const std::string& path) {
  return make_error(errc::storage_failure,
                    fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
}

} // namespace

caf::expected<std::string> read_whole_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return io_error("cannot read", path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string temporary_name(const std::string& path) {
  return path + ".tmp";
}

durable_file::durable_file(std::string path)
  : path_(std::move(path)), tmp_(temporary_name(path_)) {
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    open_error_ = io_error("cannot create", tmp_);
}

durable_file::~durable_file() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

caf::error durable_file::fail(const char* what) {
  auto err = io_error(what, tmp_);
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
    fd_ = -1;
  }
  return err;
}

caf::error durable_file::append(std::string_view bytes) {
  if (fd_ < 0)
    return open_error_ ? open_error_ : fail("cannot write");
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail("cannot write");
    done += static_cast<size_t>(n);
  }
  return caf::none;
}

caf::error durable_file::commit() {
  if (fd_ < 0)
    return open_error_ ? open_error_ : fail("cannot write");
  if (::fsync(fd_) != 0)
    return fail("cannot sync");
  ::close(fd_);
  fd_ = -1;
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    auto err = io_error("cannot rename", tmp_);
    ::unlink(tmp_.c_str());
    return err;
  }
  return caf::none;
}

caf::error write_durably(const std::string& path, std::string_view bytes) {
  durable_file f{path};
  if (auto err = f.append(bytes))
    return err;
  return f.commit();
}

} // namespace weir::storage
