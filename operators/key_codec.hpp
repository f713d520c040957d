#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "messages/row_batch.hpp"

namespace weir::ops {

/// The key of a row as bytes, for hash tables and keyed state (docs/rows.md
/// § Keys). One non-nullable string or bytes field is its bytes as they
/// are (so the keyed state of jobs from before rows restores); one
/// non-nullable int64, bool or timestamp field is its 8 bytes; anything
/// else a tag byte per field (0: null) then 8 bytes or a 4-byte length and
/// the bytes.
class key_codec {
public:
  key_codec() = default;
  /// `fields`: the key fields' indices in `s`.
  key_codec(const schema& s, std::vector<size_t> fields);

  /// Whether the key is one integer field (then int_key() applies).
  bool single_int() const { return mode_ == mode::single_int; }
  /// Whether the key is one string field (then encode is a view).
  bool single_str() const { return mode_ == mode::single_str; }

  int64_t int_key(const row_batch& b, size_t row) const {
    return b.columns[fields_[0]].ints[row];
  }

  /// Row `row`'s key bytes: a view into `b` or into `scratch`.
  std::string_view encode(const row_batch& b, size_t row,
                          std::string& scratch) const;

  /// Appends the key fields of `key` (what encode gave) to the key-count
  /// columns of `out` from `first` on (whose types are the key fields'
  /// types). Throws operator_error on malformed bytes (state from
  /// elsewhere).
  void decode(std::string_view key, row_batch& out, size_t first = 0) const;

  /// Appends the integer key `k` to column 0 of `out`.
  static void decode_int(int64_t k, row_batch& out) {
    out.columns[0].push_int(k);
  }

  const std::vector<size_t>& fields() const { return fields_; }
  const std::vector<field_type>& types() const { return types_; }

  /// The key of row `row` as text, for error messages.
  std::string describe(const row_batch& b, size_t row) const;

private:
  enum class mode { single_int, single_str, general };
  mode mode_ = mode::general;
  std::vector<size_t> fields_;
  std::vector<field_type> types_;
};

/// Hash of row `row`'s key, the hash partitioning uses: XXH3 of a single
/// string key's bytes (as before rows), of an integer key's 8 bytes, and
/// chained over several fields.
uint64_t key_hash(const row_batch& b, const std::vector<size_t>& key,
                  size_t row);

/// Fills `out` with key_hash of every row of `b`.
void key_hashes(const row_batch& b, const std::vector<size_t>& key,
                std::vector<uint64_t>& out);

/// Indices of the fields named `names` in `s`; throws operator_error for
/// a name `s` lacks.
std::vector<size_t> field_indices(const schema& s,
                                  const std::vector<std::string>& names);

} // namespace weir::ops
