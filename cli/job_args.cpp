#include "cli/job_args.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/flag_table.hpp"
#include "config/input_file.hpp"
#include "messages/errors.hpp"
#include "plan/job_spec.hpp"
#include "storage/checkpoint_store.hpp"

namespace weir::cli {

namespace {

bool is_flag(const std::string& a) {
  return a.size() > 1 && a[0] == '-';
}

/// "--name=value" → "name"; "--name" → "name".
std::string flag_name(const std::string& a) {
  auto start = a.find_first_not_of('-');
  if (start == std::string::npos)
    return {}; // "--" alone
  auto eq = a.find('=');
  return a.substr(start, eq == std::string::npos ? std::string::npos : eq - start);
}

} // namespace

caf::error split_job_args(const std::string& action,
                          const std::vector<std::string>& args,
                          const flag_table& flags, job_args& out) {
  auto invalid = [](std::string what) {
    return make_error(errc::invalid_config, std::move(what));
  };
  out.weir_args.push_back("weir " + action);
  std::vector<std::string> params;
  std::string job_name;
  /// The problem with flag `a`, in the words of the spec when there is one.
  auto refuse = [&](const std::string& a, const std::string& problem) {
    if (out.spec_path.empty())
      return fmt::format("weir {}: {} (see weir {} --help)", action, problem,
                         action);
    auto takes = params.empty()
                   ? std::string{"no parameters"}
                   : fmt::format("--{}", fmt::join(params, ", --"));
    if (!is_flag(a))
      return fmt::format("weir {}: unexpected argument '{}' after the job "
                         "spec (job '{}' takes {}; see weir {} --help)",
                         action, a, job_name, takes, action);
    return fmt::format("weir {}: {} (job '{}' takes {}; see weir {} --help)",
                       action, problem, job_name, takes, action);
  };
  for (size_t i = 0; i < args.size(); ++i) {
    auto& a = args[i];
    if (!is_flag(a) && out.spec_path.empty()) {
      out.spec_path = a;
      auto spec = parse_job_spec(out.spec_path);
      if (!spec)
        return spec.error();
      params = param_names(*spec);
      job_name = spec->name;
      continue;
    }
    if (!out.spec_path.empty() && a.rfind("--", 0) == 0
        && std::binary_search(params.begin(), params.end(), flag_name(a))) {
      auto name = flag_name(a);
      if (auto eq = a.find('='); eq != std::string::npos)
        out.program_args[name] = a.substr(eq + 1);
      else if (i + 1 < args.size())
        out.program_args[name] = args[++i];
      else
        return invalid(fmt::format(
          "weir {}: program argument --{} needs a value", action, name));
      continue;
    }
    if (!is_flag(a))
      return invalid(refuse(a, ""));
    bool value_follows = false;
    if (a == "--")
      return invalid(refuse(a, "unknown flag '--'"));
    if (auto problem = flags.check(a, value_follows); !problem.empty())
      return invalid(refuse(a, problem));
    out.weir_args.push_back(a);
    if (value_follows && i + 1 < args.size())
      out.weir_args.push_back(args[++i]);
  }
  return {};
}

caf::error load_job(const job_args& args, std::optional<int32_t> parallelism,
                    job_graph& out, const ops::registry* operators) {
  auto spec = parse_job_spec(args.spec_path);
  if (!spec)
    return spec.error();
  auto graph = resolve_job_graph(*spec, args.program_args, parallelism,
                                 operators);
  if (!graph)
    return graph.error();
  out = std::move(*graph);
  for (auto& [key, value] : out.config)
    out.config_origins[key] = "spec " + args.spec_path;
  return {};
}

caf::expected<std::string> newest_checkpoint(const std::string& dir) {
  std::string best;
  int64_t best_n = -1;
  std::set<std::string> jobs;
  std::error_code ec;
  for (auto i = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && i != std::filesystem::recursive_directory_iterator(); i.increment(ec)) {
    auto name = i->path().filename().string();
    if (name.rfind("chk-", 0) != 0 || !i->is_regular_file())
      continue;
    jobs.insert(i->path().parent_path().filename().string());
    auto n = std::strtoll(name.c_str() + 4, nullptr, 10);
    if (n > best_n) {
      best_n = n;
      best = i->path().string();
    }
  }
  if (jobs.size() > 1)
    return make_error(errc::invalid_config,
                      fmt::format("'{}' holds checkpoints of {} jobs ({}): "
                                  "give one job's directory, e.g. {}/{}",
                                  dir, jobs.size(), fmt::join(jobs, ", "),
                                  std::filesystem::path{dir}
                                    .lexically_normal()
                                    .string(),
                                  *jobs.begin()));
  return best;
}

} // namespace weir::cli
