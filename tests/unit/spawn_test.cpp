// The one process spawner (os/spawn.hpp) and commands run on it.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "os/command.hpp"
#include "os/spawn.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_all(const std::string& path) {
  std::ifstream in{path};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

} // namespace

TEST_CASE("a child gets no descriptor of its parent beyond its streams") {
  test::temp_dir dir;
  // Not close-on-exec, as some of a jobmanager's files and sockets are.
  int fd = ::open(dir.sub("weir-leak-check").c_str(), O_CREAT | O_RDWR, 0600);
  REQUIRE(fd >= 3);
  auto r = os::run_command({"/bin/ls", "-l", "/proc/self/fd"}, 10s);
  ::close(fd);
  CHECK(r.ok());
  CHECK(r.out.find("weir-leak-check") == std::string::npos);
  // Its own three streams are there (stdin is /dev/null).
  CHECK(r.out.find("0 -> /dev/null") != std::string::npos);
}

TEST_CASE("a program that cannot be started is the errno of starting it") {
  os::spawn_options opts;
  opts.argv = {"weir-no-such-program"};
  opts.search_path = true;
  os::spawned child;
  CHECK(os::spawn(opts, child) == ENOENT);
  CHECK(child.pid == -1);
  opts.search_path = false;
  opts.argv = {"/nonexistent/weir"};
  CHECK(os::spawn(opts, child) == ENOENT);
  opts.argv = {"/tmp"}; // a directory
  CHECK(os::spawn(opts, child) == EACCES);
}

TEST_CASE("streams to files, in a session of its own, default signals") {
  test::temp_dir dir;
  // This process ignores SIGTERM and blocks SIGINT; the child does neither.
  auto old_term = ::signal(SIGTERM, SIG_IGN);
  sigset_t blocked, old_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  ::sigprocmask(SIG_BLOCK, &blocked, &old_mask);
  os::spawn_options opts;
  opts.argv = {"/bin/sh", "-c",
               "grep -E '^(SigIgn|SigBlk)' /proc/self/status; "
               "[ \"$(cut -d' ' -f6 /proc/$$/stat)\" = $$ ] && "
               "echo 'own session' >&2"};
  opts.out = opts.err = os::stream::file;
  opts.out_file = dir.sub("out.txt");
  opts.err_file = dir.sub("err.txt");
  opts.own_session = true;
  os::spawned child;
  REQUIRE(os::spawn(opts, child) == 0);
  CHECK(wait_for(child.pid) == 0);
  ::signal(SIGTERM, old_term);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  auto out = read_all(dir.sub("out.txt"));
  // grep's own status: no signal ignored, none blocked.
  CHECK(out.find("SigIgn:\t0000000000000000") != std::string::npos);
  CHECK(out.find("SigBlk:\t0000000000000000") != std::string::npos);
  CHECK(read_all(dir.sub("err.txt")) == "own session\n");
}

TEST_CASE("a child tied to its parent's thread gets the signal when it ends") {
  // Orphans come to this process (not to init), so it can wait for the
  // sleeper: ended by SIGTERM at once, or by its own end after 30 s.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t middle = ::fork();
  REQUIRE(middle >= 0);
  if (middle == 0) {
    // The parent: starts a sleeper tied to it, says its pid, ends.
    os::spawn_options opts;
    opts.argv = {"/bin/sleep", "30"};
    opts.parent_death_signal = SIGTERM;
    os::spawned child;
    if (os::spawn(opts, child) != 0)
      ::_exit(1);
    [[maybe_unused]] auto n = ::write(ready[1], &child.pid, sizeof child.pid);
    ::_exit(0);
  }
  ::close(ready[1]);
  pid_t sleeper = -1;
  REQUIRE(::read(ready[0], &sleeper, sizeof sleeper) == sizeof sleeper);
  ::close(ready[0]);
  CHECK(wait_for(middle) == 0);
  int status = 0;
  while (::waitpid(sleeper, &status, 0) < 0 && errno == EINTR) {
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
}
