#include "operators/key_codec.hpp"

#include <cstring>

#include <fmt/format.h>
#include <xxhash.h>

#include "messages/record.hpp"
#include "operators/operator.hpp"

namespace weir::ops {

key_codec::key_codec(const schema& s, std::vector<size_t> fields)
  : fields_(std::move(fields)) {
  for (auto i : fields_)
    types_.push_back(s.fields[i].type);
  if (fields_.size() == 1 && !s.fields[fields_[0]].nullable) {
    if (holds_ints(types_[0]))
      mode_ = mode::single_int;
    else if (holds_chars(types_[0]))
      mode_ = mode::single_str;
  }
}

std::string_view key_codec::encode(const row_batch& b, size_t row,
                                   std::string& scratch) const {
  switch (mode_) {
    case mode::single_str:
      return b.columns[fields_[0]].str(row);
    case mode::single_int: {
      scratch.resize(8);
      auto k = b.columns[fields_[0]].ints[row];
      std::memcpy(scratch.data(), &k, 8);
      return scratch;
    }
    case mode::general:
      break;
  }
  scratch.clear();
  for (auto f : fields_) {
    auto& c = b.columns[f];
    if (c.is_null(row)) {
      scratch += '\0';
      continue;
    }
    scratch += '\1';
    if (holds_chars(c.type)) {
      auto s = c.str(row);
      auto n = static_cast<uint32_t>(s.size());
      scratch.append(reinterpret_cast<const char*>(&n), 4);
      scratch.append(s.data(), s.size());
    } else if (c.type == field_type::float64) {
      scratch.append(reinterpret_cast<const char*>(&c.floats[row]), 8);
    } else {
      scratch.append(reinterpret_cast<const char*>(&c.ints[row]), 8);
    }
  }
  return scratch;
}

void key_codec::decode(std::string_view key, row_batch& out,
                       size_t first) const {
  auto bad = [] {
    throw operator_error("a key in keyed state is malformed (state written "
                         "by another job or version?)");
  };
  switch (mode_) {
    case mode::single_str:
      out.columns[first].push_str(key);
      return;
    case mode::single_int: {
      if (key.size() != 8)
        bad();
      int64_t k = 0;
      std::memcpy(&k, key.data(), 8);
      out.columns[first].push_int(k);
      return;
    }
    case mode::general:
      break;
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    auto& c = out.columns[first + i];
    if (key.empty())
      bad();
    char tag = key.front();
    key.remove_prefix(1);
    if (tag == '\0') {
      c.push_null();
      continue;
    }
    if (holds_chars(c.type)) {
      uint32_t n = 0;
      if (key.size() < 4)
        bad();
      std::memcpy(&n, key.data(), 4);
      key.remove_prefix(4);
      if (key.size() < n)
        bad();
      c.push_str(key.substr(0, n));
      key.remove_prefix(n);
    } else {
      if (key.size() < 8)
        bad();
      if (c.type == field_type::float64) {
        double d = 0;
        std::memcpy(&d, key.data(), 8);
        c.push_float(d);
      } else {
        int64_t k = 0;
        std::memcpy(&k, key.data(), 8);
        c.push_int(k);
      }
      key.remove_prefix(8);
    }
  }
  if (!key.empty())
    bad();
}

std::string key_codec::describe(const row_batch& b, size_t row) const {
  std::string out;
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (i > 0)
      out += ", ";
    append_value_text(out, b.columns[fields_[i]], row);
  }
  return out;
}

uint64_t key_hash(const row_batch& b, const std::vector<size_t>& key,
                  size_t row) {
  uint64_t h = 0;
  bool first = true;
  for (auto f : key) {
    auto& c = b.columns[f];
    const void* data;
    size_t n;
    std::string_view s;
    if (c.is_null(row)) {
      data = "";
      n = 0;
    } else if (holds_chars(c.type)) {
      s = c.str(row);
      data = s.data();
      n = s.size();
    } else if (c.type == field_type::float64) {
      data = &c.floats[row];
      n = 8;
    } else {
      data = &c.ints[row];
      n = 8;
    }
    h = first ? XXH3_64bits(data, n) : XXH3_64bits_withSeed(data, n, h);
    first = false;
  }
  return h;
}

void key_hashes(const row_batch& b, const std::vector<size_t>& key,
                std::vector<uint64_t>& out) {
  out.resize(b.rows);
  if (key.size() == 1 && b.columns[key[0]].nulls.empty()) {
    auto& c = b.columns[key[0]];
    if (holds_ints(c.type)) {
      for (size_t i = 0; i < b.rows; ++i)
        out[i] = XXH3_64bits(&c.ints[i], 8);
      return;
    }
    if (holds_chars(c.type)) {
      for (size_t i = 0; i < b.rows; ++i) {
        auto s = c.str(i);
        out[i] = XXH3_64bits(s.data(), s.size());
      }
      return;
    }
  }
  for (size_t i = 0; i < b.rows; ++i)
    out[i] = key_hash(b, key, i);
}

std::vector<size_t> field_indices(const schema& s,
                                  const std::vector<std::string>& names) {
  std::vector<size_t> out;
  for (auto& n : names) {
    auto i = s.find(n);
    if (!i)
      throw operator_error(
        fmt::format("key field '{}' is not in {}", n, to_string(s)));
    out.push_back(*i);
  }
  return out;
}

} // namespace weir::ops
