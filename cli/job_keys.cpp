#include "cli/job_keys.hpp"

#include <array>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "config/config.hpp"
#include "config/keys.hpp"
#include "config/parse.hpp"
#include "messages/errors.hpp"
#include "messages/job_graph.hpp"

namespace weir::cli {

namespace {

/// The cluster keys a client reads itself: where the REST API is, how to
/// reach it (security.* as a whole: one set of TLS flags is often given to
/// every command), how long to wait for a leader, and the parallelism it
/// gives the job's vertices.
bool read_by_client(std::string_view key) {
  static constexpr std::array<std::string_view, 7> prefixes{
    "rest.address", "rest.port", "security.", "jobmanager.rpc.",
    "high-availability.", "client.", "parallelism.default"};
  for (auto p : prefixes)
    if (key.rfind(p, 0) == 0)
      return key != "high-availability.storageDir";
  return false;
}

/// Keys whose value is a file or directory: the client's relative path
/// means nothing to a jobmanager elsewhere.
bool is_path(std::string_view key) {
  return key == keys::savepoint_dir.name || key == keys::savepoint_path.name;
}

std::string absolute(const std::string& path) {
  if (path.empty())
    return path;
  return std::filesystem::absolute(path).lexically_normal().string();
}

} // namespace

caf::error carry_job_keys(const configuration& cfg, job_graph& g,
                          job_target target) {
  for (auto& e : cfg.entries()) {
    auto* k = find_key(e.key);
    if (k == nullptr)
      continue; // checked when loaded
    if (k->scope != config_scope::job) {
      if (target == job_target::session && from_command_line(e.origin)
          && !read_by_client(e.key))
        return make_error(
          errc::invalid_config,
          fmt::format("{}: '{}' configures the session cluster's processes, "
                      "not a job; it cannot apply to a job on it (set it "
                      "where the cluster starts)",
                      e.origin, e.key));
      continue;
    }
    auto own = g.config.find(e.key);
    if (own == g.config.end()) {
      g.config[e.key] = is_path(e.key) ? absolute(e.value) : e.value;
      g.config_origins[e.key] = e.origin;
      continue;
    }
    // A file gives defaults, which the job's own settings replace; a value
    // on the command line is as explicit as the job's.
    if (from_command_line(e.origin)
        && !detail::same_value(*k, own->second, e.value)) {
      auto i = g.config_origins.find(e.key);
      auto where = i == g.config_origins.end() ? std::string{"the job's config"}
                                               : i->second;
      return make_error(
        errc::invalid_config,
        fmt::format("{} and {} ('{}') both set '{}'; give one", e.origin,
                    where, own->second, e.key));
    }
  }
  return caf::none;
}

} // namespace weir::cli
