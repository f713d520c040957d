#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <caf/error.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>

#include "messages/schema.hpp"

namespace weir {

/// One field of every row of a batch, stored as a column: the layout the
/// hot path wants (docs/rows.md § Batches). Integers, booleans and
/// timestamps are `ints`, doubles `floats`; strings and bytes are one
/// buffer `chars` plus each row's end offset in `ends`. `nulls` is empty
/// while no row is null, else one byte per row (1: null; the value slot
/// then holds 0 or "").
struct column {
  field_type type = field_type::int64;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<uint32_t> ends;
  std::string chars;
  std::vector<uint8_t> nulls;

  column() = default;
  explicit column(field_type t) : type(t) {}

  size_t size() const {
    if (holds_chars(type))
      return ends.size();
    return type == field_type::float64 ? floats.size() : ints.size();
  }

  /// Row `i` of a string or bytes column.
  std::string_view str(size_t i) const {
    uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return {chars.data() + begin, ends[i] - begin};
  }

  bool is_null(size_t i) const { return !nulls.empty() && nulls[i] != 0; }

  void push_int(int64_t x) {
    ints.push_back(x);
    if (!nulls.empty())
      nulls.push_back(0);
  }
  void push_float(double x) {
    floats.push_back(x);
    if (!nulls.empty())
      nulls.push_back(0);
  }
  void push_str(std::string_view s) {
    chars.append(s.data(), s.size());
    ends.push_back(static_cast<uint32_t>(chars.size()));
    if (!nulls.empty())
      nulls.push_back(0);
  }
  /// Appends a null (the column's zero value, marked null).
  void push_null();

  /// Appends row `i` of `src` (a column of the same type).
  void push_from(const column& src, size_t i);

  /// Appends every row of `src` (a column of the same type).
  void append(const column& src);

  void reserve(size_t rows);
  void clear();

  /// Bytes held by the values (what batch size limits count).
  size_t byte_size() const;
};

bool operator==(const column& a, const column& b);

/// Rows travel in batches, a column per field (never one message per row).
/// The fields' names and types are the edge's schema, which both ends know
/// from the plan; a batch carries its columns' types so that a receiver
/// can check them. `times` holds each row's event time (milliseconds), or
/// is empty while every row's is 0.
struct row_batch {
  std::vector<column> columns;
  std::vector<int64_t> times;
  size_t rows = 0;

  row_batch() = default;
  explicit row_batch(const schema& s) { reset(s); }

  /// Empties the batch and gives it the columns of `s`.
  void reset(const schema& s);
  /// Empties every column, keeping their types.
  void clear();
  bool empty() const { return rows == 0; }
  size_t size() const { return rows; }

  int64_t time(size_t i) const { return times.empty() ? 0 : times[i]; }
  /// Sets the event time of the row just appended (the last one).
  void push_time(int64_t t);

  /// Appends row `i` of `src` (same column types), with its event time.
  void push_row(const row_batch& src, size_t i);
  /// Appends all rows of `src` (same column types).
  void append(const row_batch& src);

  /// Whether the columns have the types of `s`, each `rows` long.
  bool conforms_to(const schema& s) const;

  size_t byte_size() const;
  void reserve(size_t rows);
};

bool operator==(const row_batch& a, const row_batch& b);

/// The batch's wire and state form: a version byte, row and column counts,
/// then each column's raw values (little-endian).
std::string encode(const row_batch& b);

/// encode() into `out` (cleared first), reusing its memory: a sender that
/// encodes batch after batch into one buffer allocates once.
void encode_into(const row_batch& b, std::string& out);

/// Reads what encode() wrote; false (and `out` unspecified) when `bytes`
/// is not a well-formed batch (wrong lengths, offsets out of order, an
/// unknown type): bytes from the network are never trusted.
bool decode(std::string_view bytes, row_batch& out);

/// caf::error for a batch that does not decode.
[[nodiscard]] caf::error malformed_batch_error();

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_batch& x) {
  if constexpr (std::is_same<typename Inspector::result_type, void>::value) {
    // Printing (to_string): the size, not the bytes.
    auto n = x.rows;
    return f(caf::meta::type_name("row_batch"), n);
  } else if constexpr (Inspector::reads_state) {
    auto blob = encode(x);
    return f(caf::meta::type_name("row_batch"), blob);
  } else {
    std::string blob;
    auto load = caf::meta::load_callback([&]() -> caf::error {
      if (!decode(blob, x))
        return malformed_batch_error();
      return caf::none;
    });
    return f(caf::meta::type_name("row_batch"), blob, load);
  }
}

} // namespace weir
