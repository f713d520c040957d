#pragma once

// Starting a child process: the one spawner of every process weir starts
// (workers, an application cluster's jobmanager, commands such as sbatch
// and `weir inspect-job`).

#include <sys/types.h>

#include <string>
#include <vector>

namespace weir::os {

/// Where one of the child's standard streams goes.
enum class stream {
  inherit, ///< this process's own
  null,    ///< /dev/null
  file,    ///< a file, created or truncated (spawn_options::*_file)
  pipe,    ///< a pipe this process reads (spawned::out, spawned::err)
};

struct spawn_options {
  /// argv[0]: a path, or with `search_path` a name looked up on PATH.
  std::vector<std::string> argv;
  bool search_path = false;
  stream in = stream::inherit;
  stream out = stream::inherit;
  stream err = stream::inherit;
  std::string out_file;
  std::string err_file;
  /// The environment's variables starting with one of these are left out.
  std::vector<std::string> drop_env;
  /// A process group of its own (a terminal's Ctrl-C does not reach it;
  /// killing the group ends what it started too).
  bool own_group = false;
  /// A session of its own (it outlives this process's terminal).
  bool own_session = false;
  /// Sent to the child when the thread that spawned it ends, however this
  /// process ends (SIGKILL included): 0 for none.
  int parent_death_signal = 0;
};

/// A started child.
struct spawned {
  pid_t pid = -1;
  /// The read ends of stream::pipe outputs (-1 otherwise), close-on-exec;
  /// the caller closes them.
  int out = -1;
  int err = -1;
};

/// Where exec would find program `name` on PATH, as execvp looks (an
/// empty entry is the working directory; without PATH, the system's
/// default directories); "" when it is in none. A name with a '/' is
/// returned as it is.
std::string find_on_path(const std::string& name);

/// Starts `opts.argv`. The child gets no descriptor of this process's
/// beyond its three standard streams (not its listening sockets, not its
/// state directory's files), default signal handling and an empty signal
/// mask, whatever this process set up for its stop signals. Returns 0,
/// or the errno of starting it (fork, exec: ENOENT for no such program),
/// reported only once exec failed or succeeded.
int spawn(const spawn_options& opts, spawned& child);

} // namespace weir::os
