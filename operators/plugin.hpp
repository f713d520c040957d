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
#include <sstream>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "operators/driver.hpp"
#include "operators/operator.hpp"
#include "operators/plugin_params.hpp"
#include "operators/record_transform.hpp"
#include "operators/registry.hpp"
#include "operators/window_function.hpp"

/// Changes whenever the operator interfaces or this API change
/// incompatibly; a library built against another version is refused.
#define WEIR_PLUGIN_API_VERSION 7

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

/// The output_schema of an operator on records: its input must be a
/// default schema; it emits `output`, or its input's schema.
inline std::function<ops::derived_schema(const ops::params&,
                                         const ops::schema_query&)>
record_output(std::string op, std::optional<schema> output = std::nullopt) {
  return [op, output](const ops::params&, const ops::schema_query& q) {
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
}

namespace detail {

/// The function a made_transform applies to each record: it appends what
/// the record becomes to `out`.
using emit_function = std::function<void(record&&, std::vector<record>&)>;

/// A transform on records whose function `make` builds at open() from the
/// operator's arguments (and context, if it takes one); `adapt` turns what
/// `make` returns into an emit_function.
template <class Make, class Adapt>
class made_transform : public ops::record_transform {
public:
  made_transform(args a, Make make, Adapt adapt)
    : args_(std::move(a)), make_(std::move(make)), adapt_(std::move(adapt)) {}

protected:
  void open_records(const ops::operator_context& ctx) override {
    if constexpr (std::is_invocable_v<const Make&, const args&,
                                      const ops::operator_context&>)
      emit_ = adapt_(make_(args_, ctx));
    else
      emit_ = adapt_(make_(args_));
  }

  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in)
      emit_(std::move(r), out);
    in.clear();
  }

private:
  args args_;
  Make make_;
  Adapt adapt_;
  emit_function emit_;
};

/// A declared parameter's default as text ("" when none).
inline std::string fallback_text(const param_decl& d) {
  struct text {
    std::string operator()(std::monostate) const { return {}; }
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const {
      std::ostringstream out; // shortest form: 0.5, not 0.500000
      out << x;
      return out.str();
    }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& x) const {
      return "'" + x + "'";
    }
  };
  return std::visit(text{}, d.fallback);
}

/// A factory whose `validate` checks the declared parameters.
inline ops::operator_factory declared(const std::string& name,
                                      const std::vector<param_decl>& params) {
  ops::operator_factory f;
  f.name = name;
  for (auto& d : params)
    f.declared_params.push_back(ops::param_doc{d.spec.name, d.type,
                                               d.spec.required,
                                               fallback_text(d),
                                               d.description});
  f.validate = [name, specs = args::specs(params)](const ops::params& p,
                                                   ops::role) {
    return ops::check_params(name, p, specs);
  };
  return f;
}

template <class Make, class Adapt>
ops::operator_factory function_operator(std::string name,
                                        std::vector<param_decl> params,
                                        Make make, Adapt adapt,
                                        std::optional<schema> output) {
  static_assert(std::is_invocable_v<const Make&, const args&>
                  || std::is_invocable_v<const Make&, const args&,
                                         const ops::operator_context&>,
                "the factory of a map, flat_map or filter takes (const "
                "weir::plugin::args&) or (const weir::plugin::args&, const "
                "weir::ops::operator_context&)");
  auto f = declared(name, params);
  f.make_transform = [name, params, make, adapt](const ops::params& p) {
    return std::unique_ptr<ops::transform>(new made_transform<Make, Adapt>(
      args{name, p, params}, make, adapt));
  };
  f.output_schema = record_output(name, std::move(output));
  return f;
}

/// A make_source/make_transform/make_sink calling `make` with the
/// parameters checked and typed.
template <class Make>
auto with_args(const std::string& name, const std::vector<param_decl>& params,
               Make make) {
  return [name, params, make](const ops::params& p) {
    return make(args{name, p, params});
  };
}

/// A factory that ignores its arguments and returns `f`.
template <class F>
auto always(F f) {
  return [f](const args&) { return f; };
}

/// What map, flat_map and filter make of their functions' results.
struct as_map {
  template <class F>
  emit_function operator()(F f) const {
    return [f = std::move(f)](record&& r, std::vector<record>& out) mutable {
      out.push_back(f(std::move(r)));
    };
  }
};

struct as_flat_map {
  template <class F>
  emit_function operator()(F f) const {
    return f;
  }
};

struct as_filter {
  template <class F>
  emit_function operator()(F f) const {
    return [f = std::move(f)](record&& r, std::vector<record>& out) mutable {
      if (f(static_cast<const record&>(r)))
        out.push_back(std::move(r));
    };
  }
};

} // namespace detail

// Operators on records (a string key and an int64 or string value): they
// take rows of the default schemas (default_schema::matches). `output` is
// the schema of what they emit (default: their input's), e.g.
// default_schema::keyed_numbers() for a function that turns lines into
// keyed counts.
//
// Each comes in two forms. Without parameters, the function itself:
//
//   map_operator("upper", [](record&& r) { ...; return std::move(r); })
//
// With declared parameters (plugin_params.hpp), a factory that weir calls
// when the operator opens, with the parameters typed (and, if it takes a
// second argument, the operator_context), and that returns the function:
//
//   filter_operator("longer_than",
//     {param<int64_t>("min", "shortest length kept")},
//     [](const args& a) {
//       auto min = a.get<int64_t>("min");
//       return [min](const record& r) { return (int64_t)r.text.size() >= min; };
//     })
//
// Either form refuses parameters it does not declare (none for the first).

/// A transform emitting `f(record)` for every record.
inline ops::operator_factory
map_operator(std::string name, std::function<record(record&&)> f,
             std::optional<schema> output = std::nullopt) {
  return detail::function_operator(std::move(name), {},
                                   detail::always(std::move(f)),
                                   detail::as_map{}, std::move(output));
}

/// A map with declared parameters: `make(args)` or `make(args, context)`
/// returns the function from record&& to record.
template <class Make>
ops::operator_factory map_operator(std::string name,
                                   std::vector<param_decl> params, Make make,
                                   std::optional<schema> output = std::nullopt) {
  return detail::function_operator(std::move(name), std::move(params),
                                   std::move(make), detail::as_map{},
                                   std::move(output));
}

/// A transform that appends any number of records per record to `out`.
inline ops::operator_factory flat_map_operator(
  std::string name, std::function<void(record&&, std::vector<record>&)> f,
  std::optional<schema> output = std::nullopt) {
  return detail::function_operator(std::move(name), {},
                                   detail::always(std::move(f)),
                                   detail::as_flat_map{}, std::move(output));
}

/// A flat_map with declared parameters: `make` returns the function
/// (record&&, std::vector<record>& out).
template <class Make>
ops::operator_factory
flat_map_operator(std::string name, std::vector<param_decl> params, Make make,
                  std::optional<schema> output = std::nullopt) {
  return detail::function_operator(std::move(name), std::move(params),
                                   std::move(make), detail::as_flat_map{},
                                   std::move(output));
}

/// A transform keeping the records for which `f` is true.
inline ops::operator_factory
filter_operator(std::string name, std::function<bool(const record&)> f) {
  return detail::function_operator(std::move(name), {},
                                   detail::always(std::move(f)),
                                   detail::as_filter{}, std::nullopt);
}

/// A filter with declared parameters: `make` returns the predicate on
/// const record&.
template <class Make>
ops::operator_factory filter_operator(std::string name,
                                      std::vector<param_decl> params,
                                      Make make) {
  return detail::function_operator(std::move(name), std::move(params),
                                   std::move(make), detail::as_filter{},
                                   std::nullopt);
}

// Operators of any kind with declared parameters: `make` builds the
// operator from its typed arguments (it gets its operator_context at
// open()). Set more fields of the returned factory as needed (e.g.
// output_schema, bounded).

/// A source (its default output schema: default_schema::keyed_lines()).
inline ops::operator_factory source_operator(
  std::string name, std::vector<param_decl> params,
  std::function<std::unique_ptr<ops::source>(const args&)> make) {
  auto f = detail::declared(name, params);
  f.make_source = detail::with_args(name, params, std::move(make));
  return f;
}

/// A transform (its default output schema: its input's).
inline ops::operator_factory transform_operator(
  std::string name, std::vector<param_decl> params,
  std::function<std::unique_ptr<ops::transform>(const args&)> make) {
  auto f = detail::declared(name, params);
  f.make_transform = detail::with_args(name, params, std::move(make));
  return f;
}

/// A sink.
inline ops::operator_factory
sink_operator(std::string name, std::vector<param_decl> params,
              std::function<std::unique_ptr<ops::sink>(const args&)> make) {
  auto f = detail::declared(name, params);
  f.make_sink = detail::with_args(name, params, std::move(make));
  return f;
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
