#include "config/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace weir {

namespace {

/// What a file that is not a regular one is, for the message.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

} // namespace

input_file read_input_file(const std::string& path) {
  input_file result;
  // O_NONBLOCK: opening a FIFO without a writer returns at once (it is then
  // refused below) instead of waiting for one.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    result.problem = std::strerror(errno);
    return result;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    result.problem = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    result.problem = fmt::format("not a regular file ({})", kind_of(st.st_mode));
  } else if (static_cast<size_t>(st.st_size) > max_input_file_bytes) {
    result.problem = fmt::format("larger than {} MiB",
                                 max_input_file_bytes >> 20);
  } else {
    result.text.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < result.text.size()) {
      auto n = ::read(fd, result.text.data() + done, result.text.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        result.problem = std::strerror(errno);
        break;
      }
      if (n == 0)
        break; // the file shrank meanwhile
      done += static_cast<size_t>(n);
    }
    result.text.resize(done);
  }
  ::close(fd);
  if (!result.problem.empty())
    result.text.clear();
  return result;
}

std::string special_file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode))
    return {};
  return fmt::format("not a regular file ({})", kind_of(st.st_mode));
}

} // namespace weir
