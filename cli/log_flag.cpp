#include "cli/log_flag.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "actors/common/event_log.hpp"

namespace weir::cli {

bool start_event_log(const cxxopts::ParseResult& flags,
                     const std::string& action, std::string component,
                     std::FILE* fallback) {
  auto* out = fallback;
  if (flags.count("log") > 0) {
    auto path = flags["log"].as<std::string>();
    out = std::fopen(path.c_str(), "a");
    if (out == nullptr) {
      fmt::print(stderr, "{}: --log: cannot open '{}': {}\n", action, path,
                 std::strerror(errno));
      return false;
    }
    set_event_log_path(std::filesystem::absolute(path).string());
  }
  if (out != nullptr)
    enable_event_log(out, std::move(component));
  return true;
}

} // namespace weir::cli
