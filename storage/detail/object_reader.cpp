#include "storage/detail/object_reader.hpp"

#include <limits>

#include <fmt/format.h>

#include "storage/kv_store.hpp"

namespace weir::storage::detail {

namespace {

const nlohmann::json& empty_object() {
  static const auto result = nlohmann::json::object();
  return result;
}

} // namespace

object_reader::object_reader(const nlohmann::json& obj, std::string path,
                             std::string& problem)
  : obj_(&obj), path_(std::move(path)), problem_(&problem) {
  // nop
}

std::string object_reader::text(std::string_view name) {
  auto x = field(name, &nlohmann::json::is_string, "a string");
  return x ? x->get<std::string>() : std::string{};
}

int64_t object_reader::int64(std::string_view name) {
  auto x = field(name, &nlohmann::json::is_number_integer, "an integer");
  if (x == nullptr)
    return 0;
  if (x->is_number_unsigned()
      && x->get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) {
    fail(name, "is out of range");
    return 0;
  }
  return x->get<int64_t>();
}

int32_t object_reader::int32(std::string_view name) {
  auto x = int64(name);
  if (x < std::numeric_limits<int32_t>::min()
      || x > std::numeric_limits<int32_t>::max()) {
    fail(name, "is out of range");
    return 0;
  }
  return static_cast<int32_t>(x);
}

bool object_reader::boolean(std::string_view name) {
  auto x = field(name, &nlohmann::json::is_boolean, "a boolean");
  return x ? x->get<bool>() : false;
}

job_id object_reader::id(std::string_view name) {
  auto x = field(name, &nlohmann::json::is_string, "a job id");
  if (x == nullptr)
    return job_id{};
  if (auto result = job_id::parse(x->get_ref<const std::string&>()))
    return *result;
  fail(name, "is not a job id");
  return job_id{};
}

template <class T>
std::map<std::string, T> object_reader::map_of(std::string_view name,
                                               predicate is_value,
                                               std::string_view value_name) {
  std::map<std::string, T> result;
  auto x = field(name, &nlohmann::json::is_object, "an object");
  if (x == nullptr)
    return result;
  for (auto& [key, value] : x->items()) {
    if (!(value.*is_value)()) {
      fail(name, fmt::format("has a value that is not {} at '{}'", value_name,
                             printable(key)));
      return {};
    }
    result.emplace(key, value.template get<T>());
  }
  return result;
}

std::map<std::string, std::string>
object_reader::text_map(std::string_view name) {
  return map_of<std::string>(name, &nlohmann::json::is_string, "a string");
}

std::map<std::string, int64_t>
object_reader::int64_map(std::string_view name) {
  return map_of<int64_t>(name, &nlohmann::json::is_number_integer,
                         "an integer");
}

std::vector<std::string> object_reader::texts(std::string_view name) {
  std::vector<std::string> result;
  auto x = field(name, &nlohmann::json::is_array, "an array");
  if (x == nullptr)
    return result;
  for (size_t i = 0; i < x->size(); ++i) {
    if (!(*x)[i].is_string()) {
      *problem_ = fmt::format("field '{}[{}]' is not a string", path_of(name),
                              i);
      return {};
    }
    result.push_back((*x)[i].get<std::string>());
  }
  return result;
}

bool object_reader::has(std::string_view name) const {
  return obj_->contains(std::string{name});
}

std::vector<std::string> object_reader::keys() const {
  std::vector<std::string> out;
  if (obj_->is_object())
    for (auto& item : obj_->items())
      out.push_back(item.key());
  return out;
}

object_reader object_reader::object(std::string_view name) {
  auto x = field(name, &nlohmann::json::is_object, "an object");
  return object_reader{x ? *x : empty_object(), path_of(name), *problem_};
}

std::vector<object_reader> object_reader::objects(std::string_view name) {
  std::vector<object_reader> result;
  auto x = field(name, &nlohmann::json::is_array, "an array");
  if (x == nullptr)
    return result;
  for (size_t i = 0; i < x->size(); ++i) {
    auto element_path = fmt::format("{}[{}]", path_of(name), i);
    if (!(*x)[i].is_object()) {
      *problem_ = fmt::format("field '{}' is not an object", element_path);
      return {};
    }
    result.emplace_back((*x)[i], std::move(element_path), *problem_);
  }
  return result;
}

void object_reader::fail(std::string_view name, std::string_view reason) {
  if (problem_->empty())
    *problem_ = fmt::format("field '{}' {}", path_of(name), reason);
}

const nlohmann::json* object_reader::field(std::string_view name,
                                           predicate is_type,
                                           std::string_view type_name) {
  if (!problem_->empty())
    return nullptr;
  auto i = obj_->find(std::string{name});
  if (i == obj_->end()) {
    *problem_ = fmt::format("missing field '{}'", path_of(name));
    return nullptr;
  }
  if (!((*i).*is_type)()) {
    fail(name, fmt::format("is not {}", type_name));
    return nullptr;
  }
  return &*i;
}

std::string object_reader::path_of(std::string_view name) const {
  if (path_.empty())
    return std::string{name};
  return fmt::format("{}.{}", path_, name);
}

} // namespace weir::storage::detail
