#include "os/command.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <algorithm>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "os/spawn.hpp"


namespace weir::os {

std::string command_result::problem() const {
  if (start_error != 0)
    return fmt::format("cannot run it: {}", std::strerror(start_error));
  if (timed_out)
    return "it did not end in time (killed)";
  auto line = err.substr(0, err.find('\n'));
  if (exit_code < 0)
    return fmt::format("it was killed by a signal{}",
                       line.empty() ? "" : ": " + line);
  return fmt::format("it exited with code {}{}", exit_code,
                     line.empty() ? "" : ": " + line);
}

command_result run_command(const std::vector<std::string>& argv,
                           std::chrono::milliseconds deadline,
                           const std::vector<std::string>& drop_env,
                           size_t max_output) {
  command_result r;
  // stdin from /dev/null; a group of its own, so the deadline kills what it
  // started too (a wrapper script's sbatch).
  spawn_options opts;
  opts.argv = argv;
  opts.search_path = true;
  opts.in = stream::null;
  opts.out = opts.err = stream::pipe;
  opts.drop_env = drop_env;
  opts.own_group = true;
  spawned child;
  if (int rc = spawn(opts, child); rc != 0) {
    r.start_error = rc;
    return r;
  }
  auto pid = child.pid;
  auto until = std::chrono::steady_clock::now() + deadline;
  pollfd fds[2] = {{child.out, POLLIN, 0}, {child.err, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open = 2;
  while (open > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) {
      ::kill(-pid, SIGKILL); // cannot watch it: it must not run on
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0)
        continue;
      char buf[4096];
      auto got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        auto room = max_output - std::min(max_output, sinks[i]->size());
        auto kept = std::min(room, static_cast<size_t>(got));
        sinks[i]->append(buf, kept);
        r.output_cut = r.output_cut || kept < static_cast<size_t>(got);
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0)
      ::close(f.fd);
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited == pid && !r.timed_out && WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  if (waited == pid && WIFSIGNALED(status))
    r.signal = WTERMSIG(status);
  return r;
}

} // namespace weir::os
