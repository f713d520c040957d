#include "operators/in_process.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <utility>

#include <fmt/format.h>

namespace weir::ops {

namespace {

/// Factories by name. std::map nodes never move and nothing is erased, so
/// find() may hand out pointers.
struct table {
  std::shared_mutex mtx;
  std::map<std::string, operator_factory> factories;
  /// While a library loads: what it registers, kept apart from the
  /// program's.
  bool loading = false;
  std::vector<operator_factory> loaded;
};

table& the_table() {
  static table t;
  return t;
}

} // namespace

bool is_in_process_name(const std::string& name) {
  return name.find(in_process_mark) != std::string::npos;
}

/// Names carry a token of this process: a job recovered from a state
/// directory by a later run of the program must not find another lambda
/// under its step's old name.
const std::string& process_token() {
  static const std::string token = [] {
    std::random_device rd;
    return fmt::format("{:08x}", rd());
  }();
  return token;
}

std::string add_in_process_operator(operator_factory f) {
  static std::atomic<int64_t> next{1};
  auto name = fmt::format("{}{}{}.{}", f.name, in_process_mark,
                          process_token(), next++);
  f.name = name;
  auto& t = the_table();
  std::unique_lock<std::shared_mutex> guard{t.mtx};
  t.factories.emplace(name, std::move(f));
  return name;
}

void add_named_operator(operator_factory f) {
  auto& t = the_table();
  std::unique_lock<std::shared_mutex> guard{t.mtx};
  if (t.loading) {
    t.loaded.push_back(std::move(f));
    return;
  }
  // The first definition of a name in the program wins (two translation
  // units defining one name is the program's own ODR problem).
  auto name = f.name;
  t.factories.emplace(std::move(name), std::move(f));
}

std::string unknown_operator(const std::string& name) {
  if (!is_in_process_name(name))
    return fmt::format("unknown operator '{}' (not built in: an operator of "
                       "a user library needs --libjars LIB, and weir info "
                       "--libjars LIB lists them)",
                       name);
  return fmt::format("unknown operator '{}': a lambda or in-process operator "
                     "of a program that is not this one (or of an earlier "
                     "run of it); they exist only in the process that built "
                     "the job and do not survive it",
                     name);
}

const operator_factory* find_in_process_operator(const std::string& name) {
  auto& t = the_table();
  std::shared_lock<std::shared_mutex> guard{t.mtx};
  auto i = t.factories.find(name);
  return i == t.factories.end() ? nullptr : &i->second;
}

void begin_library_load() {
  auto& t = the_table();
  std::unique_lock<std::shared_mutex> guard{t.mtx};
  t.loading = true;
  t.loaded.clear();
}

std::vector<operator_factory> end_library_load() {
  auto& t = the_table();
  std::unique_lock<std::shared_mutex> guard{t.mtx};
  t.loading = false;
  return std::exchange(t.loaded, {});
}

} // namespace weir::ops
