#include "messages/row_batch.hpp"

#include <cstring>

#include "messages/errors.hpp"

namespace weir {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "batches are encoded as the host's raw little-endian values");

// -- column -------------------------------------------------------------------

void column::push_null() {
  if (nulls.empty())
    nulls.assign(size(), 0);
  if (holds_chars(type))
    ends.push_back(static_cast<uint32_t>(chars.size()));
  else if (type == field_type::float64)
    floats.push_back(0);
  else
    ints.push_back(0);
  nulls.push_back(1);
}

void column::push_from(const column& src, size_t i) {
  if (src.is_null(i)) {
    push_null();
    return;
  }
  if (holds_chars(type))
    push_str(src.str(i));
  else if (type == field_type::float64)
    push_float(src.floats[i]);
  else
    push_int(src.ints[i]);
}

void column::append(const column& src) {
  auto before = size();
  if (holds_chars(type)) {
    auto base = static_cast<uint32_t>(chars.size());
    chars += src.chars;
    ends.reserve(ends.size() + src.ends.size());
    for (auto e : src.ends)
      ends.push_back(base + e);
  } else if (type == field_type::float64) {
    floats.insert(floats.end(), src.floats.begin(), src.floats.end());
  } else {
    ints.insert(ints.end(), src.ints.begin(), src.ints.end());
  }
  if (!src.nulls.empty() || !nulls.empty()) {
    nulls.resize(before, 0);
    if (src.nulls.empty())
      nulls.resize(before + src.size(), 0);
    else
      nulls.insert(nulls.end(), src.nulls.begin(), src.nulls.end());
  }
}

void column::reserve(size_t rows) {
  if (holds_chars(type))
    ends.reserve(rows);
  else if (type == field_type::float64)
    floats.reserve(rows);
  else
    ints.reserve(rows);
}

void column::clear() {
  ints.clear();
  floats.clear();
  ends.clear();
  chars.clear();
  nulls.clear();
}

size_t column::byte_size() const {
  if (holds_chars(type))
    return chars.size() + 4 * ends.size();
  return 8 * size();
}

bool operator==(const column& a, const column& b) {
  if (a.type != b.type || a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.is_null(i) != b.is_null(i))
      return false;
    if (a.is_null(i))
      continue;
    if (holds_chars(a.type) ? a.str(i) != b.str(i)
        : a.type == field_type::float64
          ? std::memcmp(&a.floats[i], &b.floats[i], 8) != 0
          : a.ints[i] != b.ints[i])
      return false;
  }
  return true;
}

// -- row_batch ----------------------------------------------------------------

void row_batch::reset(const schema& s) {
  columns.clear();
  columns.reserve(s.fields.size());
  for (auto& f : s.fields)
    columns.emplace_back(f.type);
  times.clear();
  rows = 0;
}

void row_batch::clear() {
  for (auto& c : columns)
    c.clear();
  times.clear();
  rows = 0;
}

void row_batch::push_time(int64_t t) {
  if (times.empty()) {
    if (t == 0)
      return;
    times.assign(rows, 0);
  }
  times.resize(rows, 0);
  times[rows - 1] = t;
}

void row_batch::push_row(const row_batch& src, size_t i) {
  for (size_t c = 0; c < columns.size(); ++c)
    columns[c].push_from(src.columns[c], i);
  ++rows;
  if (!src.times.empty() || !times.empty())
    push_time(src.time(i));
}

void row_batch::append(const row_batch& src) {
  for (size_t c = 0; c < columns.size(); ++c)
    columns[c].append(src.columns[c]);
  if (!src.times.empty() || !times.empty()) {
    times.resize(rows, 0);
    if (src.times.empty())
      times.resize(rows + src.rows, 0);
    else
      times.insert(times.end(), src.times.begin(), src.times.end());
  }
  rows += src.rows;
}

bool row_batch::conforms_to(const schema& s) const {
  if (columns.size() != s.fields.size())
    return false;
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].type != s.fields[i].type || columns[i].size() != rows)
      return false;
  return times.empty() || times.size() == rows;
}

size_t row_batch::byte_size() const {
  size_t n = 8 * times.size();
  for (auto& c : columns)
    n += c.byte_size();
  return n;
}

void row_batch::reserve(size_t n) {
  for (auto& c : columns)
    c.reserve(n);
}

bool operator==(const row_batch& a, const row_batch& b) {
  if (a.rows != b.rows || a.columns != b.columns)
    return false;
  for (size_t i = 0; i < a.rows; ++i)
    if (a.time(i) != b.time(i))
      return false;
  return true;
}

// -- encoding -----------------------------------------------------------------

namespace {

constexpr uint8_t format_version = 1;
constexpr uint32_t max_rows = 1u << 28;
constexpr uint32_t max_columns = 4096;

template <class T>
void put(std::string& out, T x) {
  out.append(reinterpret_cast<const char*>(&x), sizeof(T));
}

template <class T>
void put_array(std::string& out, const std::vector<T>& v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

struct reader {
  std::string_view in;
  bool ok = true;

  template <class T>
  T get() {
    T x{};
    if (in.size() < sizeof(T)) {
      ok = false;
      return x;
    }
    std::memcpy(&x, in.data(), sizeof(T));
    in.remove_prefix(sizeof(T));
    return x;
  }

  template <class T>
  void get_array(std::vector<T>& v, size_t n) {
    if (!ok || in.size() / sizeof(T) < n) {
      ok = false;
      return;
    }
    v.resize(n);
    std::memcpy(v.data(), in.data(), n * sizeof(T));
    in.remove_prefix(n * sizeof(T));
  }
};

bool valid_type(uint8_t t) {
  return t <= static_cast<uint8_t>(field_type::timestamp);
}

} // namespace

std::string encode(const row_batch& b) {
  std::string out;
  encode_into(b, out);
  return out;
}

void encode_into(const row_batch& b, std::string& out) {
  out.clear();
  out.reserve(16 + b.byte_size() + 2 * b.columns.size());
  put<uint8_t>(out, format_version);
  put<uint32_t>(out, static_cast<uint32_t>(b.rows));
  put<uint32_t>(out, static_cast<uint32_t>(b.columns.size()));
  put<uint8_t>(out, b.times.empty() ? 0 : 1);
  put_array(out, b.times);
  for (auto& c : b.columns) {
    put<uint8_t>(out, static_cast<uint8_t>(c.type));
    put<uint8_t>(out, c.nulls.empty() ? 0 : 1);
    put_array(out, c.nulls);
    if (holds_chars(c.type)) {
      put_array(out, c.ends);
      put<uint32_t>(out, static_cast<uint32_t>(c.chars.size()));
      out += c.chars;
    } else if (c.type == field_type::float64) {
      put_array(out, c.floats);
    } else {
      put_array(out, c.ints);
    }
  }
}

bool decode(std::string_view bytes, row_batch& out) {
  reader r{bytes};
  if (r.get<uint8_t>() != format_version)
    return false;
  auto rows = r.get<uint32_t>();
  auto ncols = r.get<uint32_t>();
  auto has_times = r.get<uint8_t>();
  if (!r.ok || rows > max_rows || ncols > max_columns || has_times > 1)
    return false;
  out.rows = rows;
  out.times.clear();
  if (has_times)
    r.get_array(out.times, rows);
  out.columns.clear();
  out.columns.reserve(ncols);
  for (uint32_t i = 0; i < ncols && r.ok; ++i) {
    auto type = r.get<uint8_t>();
    auto has_nulls = r.get<uint8_t>();
    if (!r.ok || !valid_type(type) || has_nulls > 1)
      return false;
    auto& c = out.columns.emplace_back(static_cast<field_type>(type));
    if (has_nulls)
      r.get_array(c.nulls, rows);
    if (holds_chars(c.type)) {
      r.get_array(c.ends, rows);
      auto n = r.get<uint32_t>();
      if (!r.ok || r.in.size() < n)
        return false;
      uint32_t prev = 0;
      for (auto e : c.ends) {
        if (e < prev || e > n)
          return false;
        prev = e;
      }
      if (prev != n)
        return false;
      c.chars.assign(r.in.data(), n);
      r.in.remove_prefix(n);
    } else if (c.type == field_type::float64) {
      r.get_array(c.floats, rows);
    } else {
      r.get_array(c.ints, rows);
    }
  }
  return r.ok && r.in.empty();
}

caf::error malformed_batch_error() {
  return make_error(errc::invalid_job, "a malformed row batch");
}

} // namespace weir
