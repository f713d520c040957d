#include "plan/paths.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "operators/registry.hpp"
#include "plan/chaining.hpp"

namespace weir {

namespace {

namespace fs = std::filesystem;

/// A path parameter of one vertex.
struct path_use {
  size_t vertex;
  std::string param;
  std::string path;
};

/// The path parameters of the vertices in `r` (sources or sinks).
std::vector<path_use> paths_of(const job_graph& g, const ops::registry& reg,
                               ops::role r) {
  std::vector<path_use> out;
  for (size_t i = 0; i < g.vertices.size(); ++i) {
    auto& v = g.vertices[i];
    auto* f = reg.find(v.op);
    if (f == nullptr || vertex_role(g, static_cast<int32_t>(i)) != r)
      continue;
    for (auto& name : f->path_params)
      if (auto p = v.params.find(name); p != v.params.end() && p->second != "-")
        out.push_back({i, name, p->second});
  }
  return out;
}

/// Device and inode of an existing file or directory.
std::optional<std::pair<dev_t, ino_t>> identity(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0)
    return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

enum class overlap_kind { none, same, inside };

/// Whether `in` is the file `out` names, or lies inside the directory.
overlap_kind overlap(const std::string& in, const std::string& out,
                    ops::file_checks files) {
  auto lexical = [](const std::string& p) {
    auto n = fs::path{p}.lexically_normal();
    return n.has_filename() ? n : n.parent_path(); // "dir/" is "dir"
  };
  auto in_path = lexical(in);
  auto out_path = lexical(out);
  if (in_path == out_path)
    return overlap_kind::same;
  auto rel = in_path.lexically_relative(out_path);
  if (!rel.empty() && *rel.begin() != "..")
    return overlap_kind::inside;
  if (files == ops::file_checks::off)
    return overlap_kind::none;
  auto out_id = identity(out_path);
  if (!out_id)
    return overlap_kind::none; // a new output is no existing input
  std::error_code ec;
  auto real = fs::canonical(in_path, ec);
  if (ec)
    return overlap_kind::none;
  if (identity(real) == out_id)
    return overlap_kind::same;
  for (auto dir = real.parent_path(); dir.has_relative_path();
       dir = dir.parent_path())
    if (identity(dir) == out_id)
      return overlap_kind::inside;
  return overlap_kind::none;
}

} // namespace

void make_paths_absolute(job_graph& g, const ops::registry& operators) {
  for (auto& v : g.vertices) {
    auto* f = operators.find(v.op);
    if (f == nullptr)
      continue;
    for (auto& name : f->path_params) {
      auto p = v.params.find(name);
      if (p == v.params.end() || p->second == "-" || p->second.empty()
          || fs::path{p->second}.is_absolute())
        continue;
      auto trailing = p->second.back() == '/';
      auto abs = fs::absolute(p->second).lexically_normal().string();
      if (!trailing)
        while (abs.size() > 1 && abs.back() == '/')
          abs.pop_back();
      p->second = abs;
    }
  }
}

caf::error
check_output_paths(const job_graph& g, const ops::registry& operators,
                   ops::file_checks files,
                   const std::function<std::string(size_t)>& vertex_name) {
  auto inputs = paths_of(g, operators, ops::role::source);
  for (auto& out : paths_of(g, operators, ops::role::sink)) {
    for (auto& in : inputs) {
      auto how = overlap(in.path, out.path, files);
      if (how == overlap_kind::same)
        return make_error(errc::invalid_job, fmt::format(
                           "{}: parameter '{}': '{}' is the input of {} "
                           "('{}'); writing it would replace the input",
                           vertex_name(out.vertex), out.param, out.path,
                           vertex_name(in.vertex), in.path));
      if (how == overlap_kind::inside)
        return make_error(errc::invalid_job, fmt::format(
                           "{}: parameter '{}': the input of {} ('{}') lies "
                           "inside the output directory '{}'; writing it "
                           "could replace the input",
                           vertex_name(out.vertex), out.param,
                           vertex_name(in.vertex), in.path, out.path));
    }
  }
  return caf::none;
}

} // namespace weir
