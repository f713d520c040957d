#include "cli/user_code.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "operators/library_loader.hpp"
#include "storage/blob_store.hpp"

namespace weir::cli {

namespace {

using namespace std::chrono_literals;

/// The comma-separated values of a repeatable flag.
std::vector<std::string> list_flag(const cxxopts::ParseResult& flags,
                                   const std::string& name) {
  std::vector<std::string> out;
  if (flags.count(name) == 0)
    return out;
  for (auto& value : flags[name].as<std::vector<std::string>>()) {
    std::stringstream in{value};
    std::string item;
    while (std::getline(in, item, ','))
      if (!item.empty())
        out.push_back(item);
  }
  return out;
}

/// Reads `path` into a blob; prints an error naming `flag` when it cannot.
std::optional<blob_ref> read_blob(const std::string& action,
                                  const std::string& flag,
                                  const std::string& path, prepared_code& out) {
  auto file = storage::read_user_file(path);
  if (file.not_a_file) {
    fmt::print(stderr, "weir {}: {}: '{}' is not a readable file\n", action,
               flag, path);
    return std::nullopt;
  }
  if (!file.ok()) {
    fmt::print(stderr, "weir {}: {}: cannot read '{}': {}\n", action, flag,
               path, file.read_error);
    return std::nullopt;
  }
  out.blobs.emplace_back(file.ref.hash, std::move(file.bytes));
  return file.ref;
}

} // namespace

void add_user_code_flags(cxxopts::Options& opts) {
  opts.add_options()
    ("libjars", "user libraries (shared objects with weir operators or "
     "drivers) shipped with the job, comma-separated",
     cxxopts::value<std::vector<std::string>>())
    ("file", "files attached to the job (operators and drivers find them by "
     "file name), comma-separated", cxxopts::value<std::vector<std::string>>())
    ("C,classpath", "a library, or a directory of .so libraries, that every "
     "node loads from its own file system (not shipped); repeatable",
     cxxopts::value<std::vector<std::string>>())
    ("b,disableSubmitOptimization", "always ship libraries and files through "
     "the blob store, even to nodes that see them at the same path");
}

std::optional<prepared_code>
prepare_user_code(const std::string& action, const cxxopts::ParseResult& flags,
                  const std::vector<std::string>& extra_libraries) {
  prepared_code out;
  auto libraries = extra_libraries;
  for (auto& l : list_flag(flags, "libjars"))
    libraries.push_back(l);
  std::vector<std::string> paths;
  for (auto& path : libraries) {
    auto b = read_blob(action, "--libjars", path, out);
    if (!b)
      return std::nullopt;
    paths.push_back(b->origin);
    out.code.libraries.push_back(std::move(*b));
  }
  for (auto& path : list_flag(flags, "file")) {
    auto b = read_blob(action, "--file", path, out);
    if (!b)
      return std::nullopt;
    for (auto& other : out.code.files)
      if (other.name == b->name) {
        fmt::print(stderr, "weir {}: --file: two files are named '{}'\n",
                   action, b->name);
        return std::nullopt;
      }
    out.code.files.push_back(std::move(*b));
  }
  std::vector<std::string> classpath; // loaded first, as on the workers
  for (auto& entry : list_flag(flags, "classpath")) {
    auto path = entry.rfind("file://", 0) == 0 ? entry.substr(7) : entry;
    out.code.classpath.push_back(
      std::filesystem::absolute(path).lexically_normal().string());
    // Checked here with what this host sees at that path.
    std::error_code ec;
    auto& at = out.code.classpath.back();
    if (std::filesystem::is_regular_file(at, ec)) {
      classpath.push_back(at);
    } else if (std::filesystem::is_directory(at, ec)) {
      std::vector<std::string> libs;
      for (auto& f : std::filesystem::directory_iterator{at, ec})
        if (f.path().extension() == ".so")
          libs.push_back(f.path().string());
      std::sort(libs.begin(), libs.end());
      classpath.insert(classpath.end(), libs.begin(), libs.end());
    }
  }
  paths.insert(paths.begin(), classpath.begin(), classpath.end());
  out.code.always_ship = flags.count("disableSubmitOptimization") > 0;
  try {
    out.operators = &ops::registry_for(paths);
  } catch (const std::exception& e) {
    fmt::print(stderr, "weir {}: --libjars: {}\n", action, e.what());
    return std::nullopt;
  }
  return out;
}

bool upload_blobs(client::job_service& jobs, const prepared_code& code,
                  const std::string& action) {
  for (auto& [hash, bytes] : code.blobs)
    if (auto err = jobs.put_blob(hash, bytes)) {
      fmt::print(stderr, "weir {}: could not ship user code: {}\n", action,
                 describe(err));
      return false;
    }
  return true;
}

} // namespace weir::cli
