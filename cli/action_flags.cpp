#include "cli/action_flags.hpp"

#include <stdexcept>

#include "cli/taskmanager_flags.hpp"

namespace weir::cli {

std::vector<std::string> command_forms() {
  return {"run",        "run -D",     "info",         "jobmanager",
          "taskmanager", "list",      "status",       "wait",
          "cancel",     "checkpoint", "savepoint",    "stop",
          "rescale",
          "repair-state", "cert ca",  "cert node",    "cert client"};
}

cxxopts::Options flags_of(const std::string& form) {
  if (form.rfind("cert ", 0) == 0)
    return cert_flags(form.substr(5));
  using builder = cxxopts::Options (*)();
  static const std::pair<const char*, builder> builders[] = {
    {"run", run_flags},
    {"run -D", driver_run_flags},
    {"info", info_flags},
    {"jobmanager", jobmanager_flags},
    {"taskmanager", taskmanager_flags},
    {"list", list_flags},
    {"status", status_flags},
    {"wait", wait_flags},
    {"cancel", cancel_flags},
    {"checkpoint", checkpoint_flags},
    {"savepoint", savepoint_flags},
    {"stop", stop_flags},
    {"rescale", rescale_flags},
    {"repair-state", repair_state_flags},
  };
  for (auto& [name, build] : builders)
    if (form == name)
      return build();
  throw std::invalid_argument("no command form '" + form + "'");
}

} // namespace weir::cli
