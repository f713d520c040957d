#pragma once

// The public API of user code. A shared library includes this header,
// defines operators and drivers, and registers them by name:
//
//   #include <weir/operators/plugin.hpp>
//   void setup(weir::plugin::registrar& r) {
//     r.add_operator(weir::plugin::map_operator("upper", [](weir::record&& x) {
//       for (auto& c : x.text) c = std::toupper(c);
//       return std::move(x);
//     }));
//   }
//   WEIR_PLUGIN(setup)
//
// Build it with the same compiler and weir version as the cluster (meson:
// shared_module with dependency('weir')); weir checks the API version when
// it loads the library.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operators/driver.hpp"
#include "operators/operator.hpp"
#include "operators/record_transform.hpp"
#include "operators/registry.hpp"

/// Changes whenever the operator interfaces or this API change
/// incompatibly; a library built against another version is refused.
#define WEIR_PLUGIN_API_VERSION 3

namespace weir::plugin {

/// What a library registers its operators and drivers with.
class registrar {
public:
  virtual ~registrar() = default;
  /// An operator usable by name in job specs.
  virtual void add_operator(ops::operator_factory f) = 0;
  /// A driver usable with `weir run -D -c NAME`.
  virtual void add_driver(const std::string& name, driver_function f) = 0;
};

namespace detail {

template <class F>
class function_transform : public ops::record_transform {
public:
  explicit function_transform(F f) : f_(std::move(f)) {}
  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in)
      f_(std::move(r), out);
    in.clear();
  }

private:
  F f_;
};

template <class F>
ops::operator_factory transform_operator(std::string name, F f,
                                         std::optional<schema> output) {
  ops::operator_factory factory;
  factory.name = std::move(name);
  factory.make_transform = [f](const ops::params&) {
    return std::unique_ptr<ops::transform>(new function_transform<F>(f));
  };
  auto op = factory.name;
  factory.output_schema = [op, output](const ops::params&,
                                       const ops::schema_query& q) {
    ops::derived_schema result;
    if (q.input == nullptr || !default_schema::matches(*q.input)) {
      result.problem =
        "operator '" + op + "' works on records: (value: int64|string) or "
        "(key: string, value: int64|string), not on "
        + (q.input ? to_string(*q.input) : std::string{"nothing"});
      return result;
    }
    result.value = output ? *output : *q.input;
    return result;
  };
  return factory;
}

} // namespace detail

// Operators on records (a string key and an int64 or string value): they
// take rows of the default schemas (default_schema::matches). `output` is
// the schema of what they emit (default: their input's), e.g.
// default_schema::keyed_numbers() for a function that turns lines into
// keyed counts.

/// A transform emitting `f(record)` for every record.
inline ops::operator_factory
map_operator(std::string name, std::function<record(record&&)> f,
             std::optional<schema> output = std::nullopt) {
  return detail::transform_operator(
    std::move(name),
    [f](record&& r, std::vector<record>& out) {
      out.push_back(f(std::move(r)));
    },
    std::move(output));
}

/// A transform that appends any number of records per record to `out`.
inline ops::operator_factory flat_map_operator(
  std::string name, std::function<void(record&&, std::vector<record>&)> f,
  std::optional<schema> output = std::nullopt) {
  return detail::transform_operator(std::move(name), std::move(f),
                                    std::move(output));
}

/// A transform keeping the records for which `f` is true.
inline ops::operator_factory
filter_operator(std::string name, std::function<bool(const record&)> f) {
  return detail::transform_operator(
    std::move(name),
    [f](record&& r, std::vector<record>& out) {
      if (f(r))
        out.push_back(std::move(r));
    },
    std::nullopt);
}

} // namespace weir::plugin

/// Defines the entry points weir looks for in a user library: its API
/// version and `register_function(weir::plugin::registrar&)`.
#define WEIR_PLUGIN(register_function)                                       \
  extern "C" int weir_plugin_api_version() {                                 \
    return WEIR_PLUGIN_API_VERSION;                                          \
  }                                                                          \
  extern "C" void weir_plugin_register(::weir::plugin::registrar* r) {      \
    register_function(*r);                                                   \
  }
