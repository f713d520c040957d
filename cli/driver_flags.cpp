#include "cli/driver_flags.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace weir::cli {

namespace {

const std::map<std::string, std::string>& short_driver_flags() {
  static const std::map<std::string, std::string> flags{
    {"-Dhm", "--driverheapmemory"},
    {"-Ddm", "--driverdirectmemory"},
    {"-Dc", "--drivercpus"},
    {"-Dnm", "--drivernativememory"},
  };
  return flags;
}

bool is_flag(const std::string& a) {
  return a.size() > 1 && a[0] == '-';
}

} // namespace

std::vector<std::string> driver_resource_flags() {
  std::vector<std::string> out;
  for (auto& entry : short_driver_flags())
    out.push_back(entry.first);
  return out;
}

bool wants_driver_mode(const std::vector<std::string>& args,
                       const std::vector<std::string>& value_flags) {
  auto& shorts = short_driver_flags();
  for (size_t i = 0; i < args.size(); ++i) {
    auto& a = args[i];
    if (!is_flag(a))
      return false;
    if (a == "-D" || a == "--driver")
      return true;
    if (shorts.count(a) > 0 || a == "-c" || a == "--class"
        || std::find(value_flags.begin(), value_flags.end(), a)
             != value_flags.end())
      ++i; // its value
  }
  return false;
}

driver_args split_driver_args(const std::vector<std::string>& args,
                              const std::vector<std::string>& value_flags) {
  driver_args out;
  auto& shorts = short_driver_flags();
  for (size_t i = 0; i < args.size(); ++i) {
    auto& a = args[i];
    if (!is_flag(a)) {
      out.library = a;
      out.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                         args.end());
      return out;
    }
    if (a == "-D") {
      out.flags.push_back("--driver");
      continue;
    }
    if (auto s = shorts.find(a); s != shorts.end()) {
      if (i + 1 >= args.size() || is_flag(args[i + 1])) {
        out.error = fmt::format("{} needs a value ({} VALUE, the same as {} "
                                "VALUE)",
                                a, a, s->second);
        return out;
      }
      out.flags.push_back(s->second);
      out.flags.push_back(args[++i]);
      continue;
    }
    if (a.rfind("-D", 0) == 0) {
      auto eq = a.find('=');
      if (eq == std::string::npos) {
        out.error = fmt::format(
          "'{}' is neither -D (driver mode), -Dhm/-Ddm/-Dc/-Dnm VALUE (the "
          "driver's resources) nor -Dkey=value (a configuration property)",
          a);
        return out;
      }
      auto as_short = a.substr(0, eq);
      if (auto s = shorts.find(as_short); s != shorts.end()) {
        out.error = fmt::format(
          "'{}' is ambiguous: it reads as the configuration property '{}'; "
          "for the driver's resources write {} {} or {} {}",
          a, a.substr(2), as_short, a.substr(eq + 1), s->second,
          a.substr(eq + 1));
        return out;
      }
      out.flags.push_back(a);
      continue;
    }
    out.flags.push_back(a);
    bool takes_value = a.find('=') == std::string::npos
                       && std::find(value_flags.begin(), value_flags.end(), a)
                            != value_flags.end();
    if (takes_value && i + 1 < args.size())
      out.flags.push_back(args[++i]);
  }
  return out;
}

std::vector<std::string>
weir_looking_args(const std::vector<std::string>& program,
                  const std::vector<std::string>& flags) {
  auto known = [&](const std::string& name) {
    if (name == "-h" || name == "--help")
      return false; // a driver may well have its own
    return std::find(flags.begin(), flags.end(), name) != flags.end()
           || short_driver_flags().count(name) > 0;
  };
  std::vector<std::string> out;
  for (auto& a : program) {
    auto eq = a.find('=');
    bool looks = known(a)
                 || (a.rfind("--", 0) == 0 && eq != std::string::npos
                     && known(a.substr(0, eq)))
                 || (a.rfind("-D", 0) == 0 && a.size() > 2
                     && eq != std::string::npos && eq > 2);
    if (looks)
      out.push_back(a);
  }
  return out;
}

} // namespace weir::cli
