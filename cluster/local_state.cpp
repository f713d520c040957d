#include "cluster/local_state.hpp"

#include <cerrno>
#include <atomic>
#include <cstdlib>
#include <filesystem>

#include <signal.h>
#include <unistd.h>

namespace weir {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view prefix = "weir-tm-";

bool process_gone(const std::string& pid_text) {
  char* end = nullptr;
  auto pid = std::strtol(pid_text.c_str(), &end, 10);
  if (end == pid_text.c_str() || *end != '\0' || pid <= 0)
    return false; // not ours to judge
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

} // namespace

std::string claim_local_state_dir(const std::string& root) {
  std::string base = root;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::error_code ec;
  for (fs::directory_iterator i{base, ec}, end; !ec && i != end;
       i.increment(ec)) {
    auto name = i->path().filename().string();
    if (name.rfind(prefix, 0) != 0)
      continue;
    auto pid = name.substr(prefix.size(),
                           name.find('-', prefix.size()) - prefix.size());
    if (process_gone(pid)) {
      std::error_code ignored;
      fs::remove_all(i->path(), ignored);
    }
  }
  static std::atomic<int> claims{0};
  return base + "/" + std::string{prefix} + std::to_string(::getpid()) + "-"
         + std::to_string(claims++);
}

void release_local_state_dir(const std::string& dir) {
  // Backends that are closing remove their own directories meanwhile, which
  // can make one pass of remove_all stop early.
  for (int attempt = 0; attempt < 10; ++attempt) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (!fs::exists(dir, ec))
      return;
  }
}

} // namespace weir
