#pragma once

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "operators/operator.hpp"
#include "operators/record_transform.hpp"
#include "operators/params.hpp"

// Batch transforms around a per-record function object. The function is a
// template parameter, so applying it to each record is an inlined call, not a
// virtual or std::function call.

namespace weir::ops {

/// Moves all of `in` to the end of `out` (a swap when `out` is empty) and
/// leaves `in` empty, as every transform does.
inline void append_all(std::vector<record>& in, std::vector<record>& out) {
  if (out.empty()) {
    out.swap(in);
    return;
  }
  out.reserve(out.size() + in.size());
  std::move(in.begin(), in.end(), std::back_inserter(out));
  in.clear();
}

/// Applies `F(record&)` to each record in place.
template <class F>
class map_transform final : public record_transform {
public:
  explicit map_transform(F f) : f_(std::move(f)) {
  }

  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in)
      f_(r);
    append_all(in, out);
  }

private:
  F f_;
};

/// Keeps the records for which `P(const record&)` is true.
template <class P>
class filter_transform final : public record_transform {
public:
  explicit filter_transform(P p) : p_(std::move(p)) {
  }

  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    auto end = std::remove_if(in.begin(), in.end(),
                              [this](const record& r) { return !p_(r); });
    in.erase(end, in.end());
    append_all(in, out);
  }

private:
  P p_;
};

/// Appends what `F(record&&, std::vector<record>&)` makes of each record.
template <class F>
class flat_map_transform final : public record_transform {
public:
  explicit flat_map_transform(F f) : f_(std::move(f)) {
  }

  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    // Grow once per batch: reserve what the largest batch so far produced.
    auto first = out.size();
    out.reserve(first + std::max(in.size() * 4, peak_));
    for (auto& r : in)
      f_(std::move(r), out);
    in.clear();
    peak_ = std::max(peak_, out.size() - first);
  }

private:
  F f_;
  size_t peak_ = 0;
};

/// What a named function emits, given a default-schema input.
enum class function_output {
  same,          ///< the input's schema
  keyed,         ///< (key: string, value: the input's value type)
  keyed_numbers, ///< (key: string, value: int64)
  numbers,       ///< the input's, with an int64 value
  split,         ///< (value: string) from text, the input's otherwise
};

/// A named function of map, flat_map or filter (they act on records: the
/// default schemas).
struct named_function {
  std::string name;
  /// Parameters it takes besides `function`.
  std::vector<param_spec> extra_params;
  /// Builds the transform; parameters are already checked.
  std::function<std::unique_ptr<transform>(const params&)> make;
  function_output output = function_output::same;
};

/// The output schema of `f` on `input`, or the problem that `input` is
/// not one of the default schemas.
derived_schema function_schema(const std::string& op, const named_function& f,
                               const schema& input);

/// The functions of `map`: identity, key_mod, key_by_value, upper, lower,
/// length, square, negate.
const std::vector<named_function>& map_functions();

/// The functions of `flat_map`: tokenize, split.
const std::vector<named_function>& flat_map_functions();

/// The functions of `filter`: even, odd, nonempty, greater_than, contains.
const std::vector<named_function>& filter_functions();

/// Flink's WordCount tokenizer: lower-cases `line` and appends each run of
/// ASCII letters, digits and '_' as a record key=token, num=1, timestamp
/// `ts`. Every other byte (including all non-ASCII bytes) separates tokens.
void tokenize(std::string_view line, int64_t ts, std::vector<record>& out);

/// The same into a (key: string, value: int64) batch.
void tokenize(std::string_view line, int64_t ts, row_batch& out);

} // namespace weir::ops
