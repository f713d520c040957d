#include "cli/job_command.hpp"

#include <fmt/format.h>

#include "cli/config_flags.hpp"
#include "cli/flag_table.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "process/exit_codes.hpp"

namespace weir::cli {

std::optional<job_command>
parse_job_command(const std::string& action, cxxopts::Options& opts,
                  const std::vector<std::string>& args, int& exit_code,
                  const std::string& more_help, bool spec_optional) {
  exit_code = exit_bad_input;
  job_args ja;
  if (auto err = split_job_args(action, args, flag_table{opts}, ja)) {
    fmt::print(stderr, "{}\n", describe(err));
    return std::nullopt;
  }
  try {
    std::vector<const char*> argv;
    for (auto& a : ja.weir_args)
      argv.push_back(a.c_str());
    auto res = opts.parse(static_cast<int>(argv.size()), argv.data());
    if (res.count("help") > 0) {
      fmt::print("{}{}", help_text(opts), more_help);
      exit_code = exit_ok;
      return std::nullopt;
    }
    if (ja.spec_path.empty() && !spec_optional) {
      fmt::print(stderr, "weir {}: missing job spec (see weir {} --help)\n",
                 action, action);
      return std::nullopt;
    }
    return job_command{std::move(ja), std::move(res)};
  } catch (const cxxopts::exceptions::exception& e) {
    fmt::print(stderr, "weir {}: {}\n", action, e.what());
    return std::nullopt;
  }
}

std::string typed_flag(const std::vector<std::string>& words,
                       const std::string& short_form, const std::string& flag) {
  auto long_form = "--" + flag;
  std::string typed = long_form;
  for (auto& w : words) {
    if (w.rfind(long_form, 0) == 0)
      typed = long_form;
    else if (w.rfind("--", 0) != 0 && w.rfind(short_form, 0) == 0)
      typed = short_form;
  }
  return typed;
}

bool default_parallelism(const std::string& action, configuration& cfg,
                         const job_command& cmd, std::optional<int32_t>& out) {
  auto typed = typed_flag(cmd.args.weir_args, "-p", "parallelism");
  if (auto err = flag_overrides<int32_t>(cfg, cmd.flags, "parallelism",
                                         keys::parallelism_default, "", typed);
      report_first(action, {err}))
    return false;
  out.reset();
  if (auto p = cfg.get_if_set(keys::parallelism_default))
    out = static_cast<int32_t>(*p); // within [1, 32768]: checked when set
  return true;
}

} // namespace weir::cli
