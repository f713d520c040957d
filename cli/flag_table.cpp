#include "cli/flag_table.hpp"

#include <fmt/format.h>

namespace weir::cli {

namespace {

/// The option groups --help shows.
std::vector<std::string> listed_groups(const cxxopts::Options& opts) {
  std::vector<std::string> groups;
  for (auto& g : opts.groups())
    if (g != positional_group)
      groups.push_back(g);
  return groups;
}

/// Calls `f(flag, takes_value)` for each spelling of each option of `groups`.
template <class F>
void for_each_flag(const cxxopts::Options& opts,
                   const std::vector<std::string>& groups, F f) {
  for (auto& g : groups)
    for (auto& o : opts.group_help(g).options) {
      bool takes_value = !o.is_boolean && !o.has_implicit;
      if (!o.s.empty())
        f("-" + o.s, takes_value);
      for (auto& l : o.l)
        f("--" + l, takes_value);
    }
}

} // namespace

flag_table::flag_table(const cxxopts::Options& opts) {
  add(opts);
}

void flag_table::add(const cxxopts::Options& more) {
  for_each_flag(more, more.groups(), [&](const std::string& flag, bool value) {
    takes_value_[flag] = value;
  });
}

std::string flag_table::check(const std::string& word,
                              bool& value_follows) const {
  value_follows = false;
  auto unknown = fmt::format("unknown flag '{}'", word);
  if (word.rfind("--", 0) == 0) {
    auto i = takes_value_.find(word.substr(0, word.find('=')));
    if (i == takes_value_.end())
      return unknown;
    value_follows = i->second && word.find('=') == std::string::npos;
    return {};
  }
  for (size_t at = 1; at < word.size(); ++at) {
    auto i = takes_value_.find(std::string{'-', word[at]});
    if (i == takes_value_.end())
      return unknown;
    if (!i->second)
      continue;
    if (at + 1 < word.size())
      return {}; // the rest of the word is the value
    if (word == "-D")
      return "-D needs key=value: -Dkey=value sets a configuration key";
    value_follows = true;
  }
  return {};
}

std::vector<std::string> flag_table::value_flags() const {
  std::vector<std::string> out;
  for (auto& [flag, value] : takes_value_)
    if (value)
      out.push_back(flag);
  return out;
}

std::string check_flags(const flag_table& table,
                        const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    auto& a = args[i];
    if (a == "--")
      return {};
    if (a.size() < 2 || a[0] != '-')
      continue;
    bool value_follows = false;
    if (auto problem = table.check(a, value_follows); !problem.empty())
      return problem;
    if (value_follows)
      ++i;
  }
  return {};
}

std::vector<std::string> listed_flags(const cxxopts::Options& opts) {
  std::vector<std::string> out;
  for_each_flag(opts, listed_groups(opts),
                [&](const std::string& flag, bool) { out.push_back(flag); });
  return out;
}

std::string help_text(const cxxopts::Options& opts) {
  return opts.help(listed_groups(opts));
}

} // namespace weir::cli
