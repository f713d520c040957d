#pragma once

// Declared, typed parameters of user operators (docs/user-operators.md):
// a library declares each parameter with a name, a type and a line of
// description; weir checks job specs against the declarations before
// anything runs, with the messages of the built-ins, and the operator reads
// the values typed:
//
//   weir::plugin::param<int64_t>("min", "shortest length kept")      // required
//   weir::plugin::param<int64_t>("n", 10, "how many records to keep") // default 10
//   args.get<int64_t>("min")

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "operators/operator.hpp"
#include "operators/params.hpp"

namespace weir::plugin {

/// The types a parameter may have, with what weir checks and calls them.
template <class T>
struct param_type {
  static_assert(sizeof(T) == 0, "a parameter is an int64_t, double, bool or "
                                "std::string");
};

template <>
struct param_type<int64_t> {
  static constexpr ops::param_kind kind = ops::param_kind::integer;
  static constexpr const char* name = "int64";
};

template <>
struct param_type<double> {
  static constexpr ops::param_kind kind = ops::param_kind::number;
  static constexpr const char* name = "double";
};

template <>
struct param_type<bool> {
  static constexpr ops::param_kind kind = ops::param_kind::boolean;
  static constexpr const char* name = "bool";
};

template <>
struct param_type<std::string> {
  static constexpr ops::param_kind kind = ops::param_kind::text;
  static constexpr const char* name = "string";
};

/// One declared parameter (made by param<T>).
struct param_decl {
  /// Name, kind of value, whether required: what ops::check_params checks.
  ops::param_spec spec;
  /// "int64", "double", "bool" or "string".
  std::string type;
  /// The value of an optional parameter the job spec leaves out.
  std::variant<std::monostate, int64_t, double, bool, std::string> fallback;
  /// One line saying what it does.
  std::string description;
};

/// A required parameter of type T.
template <class T>
param_decl param(std::string name, std::string description) {
  return {{std::move(name), param_type<T>::kind, true},
          param_type<T>::name,
          {},
          std::move(description)};
}

/// An optional parameter of type T, `fallback` when the spec leaves it out.
template <class T>
param_decl param(std::string name, T fallback, std::string description) {
  return {{std::move(name), param_type<T>::kind, false},
          param_type<T>::name,
          decltype(param_decl::fallback){std::in_place_type<T>,
                                         std::move(fallback)},
          std::move(description)};
}

/// An operator's parameters, checked against its declarations and read
/// typed. Built by weir from the job spec before the operator is made.
class args {
public:
  /// Throws ops::operator_error with check_params' line when `given` does
  /// not fit `declared` (a job that skipped the checks at submission).
  args(std::string op, ops::params given, std::vector<param_decl> declared)
    : op_(std::move(op)), given_(std::move(given)),
      declared_(std::move(declared)) {
    ops::throw_if(ops::check_params(op_, given_, specs(declared_)));
  }

  /// The value of parameter `name` (its default when the spec leaves it
  /// out). T must be the declared type; an undeclared name throws.
  template <class T>
  T get(const std::string& name) const {
    const auto& d = declaration(name);
    if (d.type != param_type<T>::name)
      throw ops::operator_error("operator '" + op_ + "': parameter '" + name
                                + "' is declared " + d.type + ", read as "
                                + param_type<T>::name);
    auto i = given_.find(name);
    if (i == given_.end()) {
      if (auto* v = std::get_if<T>(&d.fallback))
        return *v;
      throw ops::operator_error("parameter '" + name + "': missing");
    }
    if constexpr (std::is_same_v<T, std::string>)
      return i->second;
    else
      return *parse<T>(i->second); // checked by the constructor
  }

  /// Whether the job spec gives parameter `name`.
  bool has(const std::string& name) const { return given_.count(name) > 0; }

  /// The parameters as the job spec gives them (text).
  const ops::params& given() const { return given_; }

  /// The specs ops::check_params checks declarations by.
  static std::vector<ops::param_spec>
  specs(const std::vector<param_decl>& declared) {
    std::vector<ops::param_spec> out;
    out.reserve(declared.size());
    for (const auto& d : declared)
      out.push_back(d.spec);
    return out;
  }

private:
  const param_decl& declaration(const std::string& name) const {
    for (const auto& d : declared_)
      if (d.spec.name == name)
        return d;
    throw ops::operator_error("operator '" + op_
                              + "' reads parameter '" + name
                              + "', which it does not declare");
  }

  template <class T>
  static auto parse(const std::string& text) {
    if constexpr (std::is_same_v<T, int64_t>)
      return ops::parse_int64(text);
    else if constexpr (std::is_same_v<T, double>)
      return ops::parse_double(text);
    else
      return ops::parse_bool(text);
  }

  std::string op_;
  ops::params given_;
  std::vector<param_decl> declared_;
};

} // namespace weir::plugin
