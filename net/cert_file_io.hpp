#pragma once

// Reading a certificate or key file, and writing new ones without ever
// replacing an existing file (a CA key overwritten by mistake cannot be
// recovered, and every certificate it signed would stop being trusted).

#include <sys/types.h>

#include <string>
#include <vector>

namespace weir::net {

/// The whole of a (small) file; throws cert_error "PATH: cannot read: ...".
std::string read_small_file(const std::string& path);

/// A file to create: it must not exist yet.
struct new_file {
  std::string path;
  std::string content;
  mode_t mode; ///< 0600 for a private key (before the umask)
};

/// Creates all of `files` (O_EXCL, synced) or none: when one exists or
/// fails, those already written are removed again. Throws cert_error
/// "PATH: already exists (not overwritten)" or "PATH: cannot ...: REASON".
void write_new_files(const std::vector<new_file>& files);

} // namespace weir::net
