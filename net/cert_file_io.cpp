#include "net/cert_file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "net/certificates.hpp"

namespace weir::net {

namespace {

/// PEM certificates and keys are a few KiB; a larger file is a wrong one.
constexpr size_t max_file_size = 1 << 20;

[[noreturn]] void fail_errno(const std::string& path, const char* doing) {
  throw cert_error(path + ": " + doing + ": " + std::strerror(errno));
}

/// Closes a file descriptor on every path out.
class fd_closer {
public:
  explicit fd_closer(int fd) : fd_(fd) {}
  ~fd_closer() { ::close(fd_); }
  fd_closer(const fd_closer&) = delete;
  fd_closer& operator=(const fd_closer&) = delete;

private:
  int fd_;
};

void write_all(int fd, const std::string& path, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      fail_errno(path, "cannot write");
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0)
    fail_errno(path, "cannot write");
}

void write_new_file(const new_file& file) {
  int fd = ::open(file.path.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  file.mode);
  if (fd < 0 && errno == EEXIST)
    throw cert_error(file.path + ": already exists (not overwritten)");
  if (fd < 0)
    fail_errno(file.path, "cannot create");
  fd_closer closer{fd};
  try {
    write_all(fd, file.path, file.content);
  } catch (const cert_error&) {
    ::unlink(file.path.c_str());
    throw;
  }
}

} // namespace

std::string read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail_errno(path, "cannot read");
  fd_closer closer{fd};
  std::string content;
  char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      fail_errno(path, "cannot read");
    if (n == 0)
      return content;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > max_file_size)
      throw cert_error(path + ": cannot read: larger than 1 MiB, not a PEM "
                              "file");
  }
}

void write_new_files(const std::vector<new_file>& files) {
  // Refuse before writing anything, so that a pair is never half replaced.
  for (auto& file : files) {
    struct stat st;
    if (::lstat(file.path.c_str(), &st) == 0)
      throw cert_error(file.path + ": already exists (not overwritten)");
  }
  std::vector<std::string> written;
  try {
    for (auto& file : files) {
      write_new_file(file);
      written.push_back(file.path);
    }
  } catch (const cert_error&) {
    for (auto& path : written)
      ::unlink(path.c_str());
    throw;
  }
}

} // namespace weir::net
