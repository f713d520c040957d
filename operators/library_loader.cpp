#include "operators/library_loader.hpp"

#include <map>
#include <memory>
#include <mutex>

#include <dlfcn.h>

#include <fmt/format.h>

#include "operators/demangle.hpp"
#include "operators/in_process.hpp"
#include "operators/plugin.hpp"

namespace weir::ops {

namespace {

using version_fn = int (*)();
using register_fn = void (*)(plugin::registrar*);

/// Collects what one library registers, refusing names taken before.
class collecting_registrar : public plugin::registrar {
public:
  collecting_registrar(registry& target, std::string path,
                       std::map<std::string, std::string>& owners)
    : target_(target), path_(std::move(path)), owners_(owners) {
  }

  void add_operator(operator_factory f) override {
    claim("operator", f.name, registry::builtin().has_own(f.name));
    target_.add(std::move(f));
  }

  void add_driver(const std::string& name, plugin::driver_function f) override {
    claim("driver", name, false);
    target_.add_driver(name, std::move(f));
  }

private:
  void claim(const char* what, const std::string& name, bool builtin) {
    if (name.empty())
      throw operator_error(fmt::format("library '{}' registers an {} without "
                                       "a name",
                                       path_, what));
    if (is_in_process_name(name))
      throw operator_error(fmt::format("library '{}' registers {} '{}': a "
                                       "name may not contain '{}'",
                                       path_, what, name, in_process_mark));
    if (builtin)
      throw operator_error(fmt::format("library '{}' registers {} '{}', which "
                                       "is a built-in operator",
                                       path_, what, name));
    auto key = std::string{what} + " " + name;
    auto [i, fresh] = owners_.emplace(key, path_);
    if (!fresh)
      throw operator_error(fmt::format("library '{}' registers {} '{}', which "
                                       "library '{}' registers too",
                                       path_, what, name, i->second));
  }

  registry& target_;
  std::string path_;
  std::map<std::string, std::string>& owners_;
};

/// What a library registers: through its register function, and the
/// operators it names at static initialisation (WEIR_MAP and friends).
struct opened_library {
  register_fn reg = nullptr;
  std::vector<operator_factory> named;
};

/// dlopen()s `path` once per process.
const opened_library& open_library(const std::string& path) {
  static std::map<std::string, opened_library> opened;
  if (auto i = opened.find(path); i != opened.end())
    return i->second;
  begin_library_load();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  auto named = end_library_load();
  if (handle == nullptr) {
    const char* why = ::dlerror();
    // An undefined symbol is named as the user wrote it, not mangled.
    throw operator_error(fmt::format(
      "cannot load library '{}': {}", path,
      why != nullptr ? demangle_symbols(why) : "unknown error"));
  }
  auto version = reinterpret_cast<version_fn>(
    ::dlsym(handle, "weir_plugin_api_version"));
  auto reg = reinterpret_cast<register_fn>(
    ::dlsym(handle, "weir_plugin_register"));
  if (version == nullptr || reg == nullptr)
    throw operator_error(fmt::format(
      "library '{}' has no symbol '{}': it is not a weir library (it must use "
      "WEIR_PLUGIN)",
      path, version == nullptr ? "weir_plugin_api_version"
                               : "weir_plugin_register"));
  if (auto v = version(); v != WEIR_PLUGIN_API_VERSION)
    throw operator_error(fmt::format(
      "library '{}' was built against weir API version {}, this weir has "
      "version {} (weir_plugin_api_version)",
      path, v, WEIR_PLUGIN_API_VERSION));
  return opened.emplace(path, opened_library{reg, std::move(named)})
    .first->second;
}

} // namespace

const registry& registry_for(const std::vector<std::string>& paths) {
  if (paths.empty())
    return registry::builtin();
  static std::mutex mtx;
  static std::map<std::vector<std::string>, std::unique_ptr<registry>> cache;
  std::lock_guard<std::mutex> guard{mtx};
  if (auto i = cache.find(paths); i != cache.end())
    return *i->second;
  auto reg = std::make_unique<registry>(registry::builtin());
  std::map<std::string, std::string> owners;
  for (auto& path : paths) {
    auto& lib = open_library(path);
    collecting_registrar r{*reg, path, owners};
    try {
      for (auto& f : lib.named)
        r.add_operator(f);
      lib.reg(&r);
    } catch (const operator_error&) {
      throw;
    } catch (const std::exception& e) {
      throw operator_error(fmt::format("library '{}' failed to register: {}",
                                       path, e.what()));
    }
  }
  return *cache.emplace(paths, std::move(reg)).first->second;
}

} // namespace weir::ops
