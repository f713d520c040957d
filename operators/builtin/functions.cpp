// The named functions of map, flat_map and filter. Numeric functions act on
// integer records and leave text records alone (filters drop them); text
// functions act on text records. Case mapping is ASCII only.

#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include <fmt/format.h>

#include "operators/builtin/transforms.hpp"

namespace weir::ops {

namespace {

// -- byte classes -------------------------------------------------------------

struct byte_tables {
  std::array<bool, 256> word{};  ///< [A-Za-z0-9_], Java's \w without UNICODE
  std::array<bool, 256> space{}; ///< ' ', \t, \n, \v, \f, \r
  std::array<char, 256> lower{};
  std::array<char, 256> upper{};
};

constexpr byte_tables make_byte_tables() {
  byte_tables t;
  for (int c = 0; c < 256; ++c) {
    bool is_upper = c >= 'A' && c <= 'Z';
    bool is_lower = c >= 'a' && c <= 'z';
    bool is_digit = c >= '0' && c <= '9';
    auto i = static_cast<size_t>(c);
    t.word[i] = is_upper || is_lower || is_digit || c == '_';
    t.space[i] = c == ' ' || (c >= '\t' && c <= '\r');
    t.lower[i] = static_cast<char>(is_upper ? c + ('a' - 'A') : c);
    t.upper[i] = static_cast<char>(is_lower ? c - ('a' - 'A') : c);
  }
  return t;
}

constexpr byte_tables bytes = make_byte_tables();

inline size_t idx(char c) {
  return static_cast<unsigned char>(c);
}

template <template <class> class Transform, class F>
std::unique_ptr<transform> wrap(F f) {
  return std::make_unique<Transform<F>>(std::move(f));
}

// -- map ----------------------------------------------------------------------

/// key = decimal of (num mod modulus), in [0, modulus) also for negative num.
struct key_mod {
  int64_t modulus;
  void operator()(record& r) const {
    if (r.is_text)
      return;
    auto m = r.num % modulus;
    if (m < 0)
      m += modulus;
    fmt::format_int digits{m};
    r.key.assign(digits.data(), digits.size());
  }
};

/// key_mod on rows: integer values straight into the output columns (the
/// keyed sum's hot path); anything else through records.
class key_mod_transform final : public record_transform {
public:
  explicit key_mod_transform(int64_t modulus) : fn_{modulus} {}

  void process(row_batch& in, row_batch& out, bool partial) override {
    auto& v = in.columns.back();
    if (v.type != field_type::int64 || !v.nulls.empty()
        || out.columns.size() != 2) {
      record_transform::process(in, out, partial);
      return;
    }
    auto& keys = out.columns[0];
    auto& values = out.columns[1];
    if (!keys.nulls.empty() || !values.nulls.empty()) {
      record_transform::process(in, out, partial);
      return;
    }
    append_keys(v.ints.data(), in.rows, keys);
    values.ints.insert(values.ints.end(), v.ints.begin(), v.ints.end());
    auto first = out.rows;
    out.rows += in.rows;
    if (!in.times.empty() || !out.times.empty()) {
      out.times.resize(first, 0);
      for (size_t i = 0; i < in.rows; ++i)
        out.times.push_back(in.time(i));
    }
  }

protected:
  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in) {
      fn_(r);
      out.push_back(std::move(r));
    }
  }

private:
  /// The digits of every value's remainder, written in place: no append
  /// per row (keyed_sum.json spends a third of its time here otherwise).
  /// Small moduli read the digits from a table of 8-byte words.
  void append_keys(const int64_t* xs, size_t n, column& keys) {
    constexpr size_t max_digits = 20; // of a non-negative int64
    auto m = fn_.modulus;
    if (m <= max_table && digits_.empty())
      fill_table();
    auto used = keys.chars.size();
    keys.chars.resize(used + n * max_digits);
    keys.ends.reserve(keys.ends.size() + n);
    auto* p = keys.chars.data() + used;
    for (size_t i = 0; i < n; ++i) {
      auto r = xs[i] % m;
      if (r < 0)
        r += m;
      if (!digits_.empty()) {
        auto word = digits_[static_cast<size_t>(r)];
        std::memcpy(p, &word, sizeof word);
        p += word >> 56;
      } else {
        fmt::format_int digits{r};
        std::memcpy(p, digits.data(), digits.size());
        p += digits.size();
      }
      keys.ends.push_back(static_cast<uint32_t>(p - keys.chars.data()));
    }
    keys.chars.resize(static_cast<size_t>(p - keys.chars.data()));
  }

  /// One word per remainder: its digits (at most 5) in the low bytes, their
  /// count in the top byte.
  void fill_table() {
    digits_.resize(static_cast<size_t>(fn_.modulus));
    for (int64_t r = 0; r < fn_.modulus; ++r) {
      fmt::format_int d{r};
      uint64_t word = 0;
      std::memcpy(&word, d.data(), d.size());
      digits_[static_cast<size_t>(r)] = word | (uint64_t{d.size()} << 56);
    }
  }

  static constexpr int64_t max_table = 65536;
  std::vector<uint64_t> digits_;
  key_mod fn_;
};

/// Fault injection for failover tests: passes records through, but once a
/// subtask has seen more than `after` records it creates the file `marker`
/// and fails, unless the marker exists already (so only the first attempt of
/// one subtask fails, whatever the restarts).
struct fail_once {
  std::string marker;
  int64_t after = 0;
  int64_t seen = 0;
  bool armed = true;
  void operator()(record&) {
    if (!armed || ++seen <= after)
      return;
    armed = false;
    int fd = ::open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
      return; // another attempt failed already
    ::close(fd);
    throw operator_error(
      fmt::format("injected failure (fail_once, marker '{}')", marker));
  }
};

/// key = the value as text, value = 1 (ready for a count or sum).
struct key_by_value {
  void operator()(record& r) const {
    if (r.is_text) {
      r.key.swap(r.text);
      r.text.clear();
    } else {
      fmt::format_int digits{r.num};
      r.key.assign(digits.data(), digits.size());
    }
    r.is_text = false;
    r.num = 1;
  }
};

/// Maps each byte of a text value through a table.
struct recase {
  const std::array<char, 256>* table;
  void operator()(record& r) const {
    if (!r.is_text)
      return;
    for (auto& c : r.text)
      c = (*table)[idx(c)];
  }
};

/// value = length of the value's text form.
struct length {
  void operator()(record& r) const {
    if (r.is_text) {
      r.num = static_cast<int64_t>(r.text.size());
      r.text.clear();
      r.is_text = false;
    } else {
      r.num = static_cast<int64_t>(fmt::format_int{r.num}.size());
    }
  }
};

/// num*num; fails the job when it does not fit an int64.
struct square {
  void operator()(record& r) const {
    if (int64_t n = 0; !r.is_text && __builtin_mul_overflow(r.num, r.num, &n))
      throw_overflow("square", r.key, r.num);
    else if (!r.is_text)
      r.num = n;
  }
};

/// -num; fails the job for the one int64 without a negative.
struct negate {
  void operator()(record& r) const {
    if (int64_t n = 0; !r.is_text && __builtin_sub_overflow(0, r.num, &n))
      throw_overflow("negate", r.key, r.num);
    else if (!r.is_text)
      r.num = n;
  }
};

// -- flat_map -----------------------------------------------------------------

/// Flink's WordCount tokenizer (see tokenize()).
struct tokenize_fn {
  void operator()(record&& r, std::vector<record>& out) const {
    if (r.is_text) {
      tokenize(r.text, r.timestamp, out);
    } else {
      fmt::format_int digits{r.num};
      tokenize({digits.data(), digits.size()}, r.timestamp, out);
    }
  }
};

/// Splits text values on whitespace into unkeyed text records.
struct split_fn {
  void operator()(record&& r, std::vector<record>& out) const {
    if (!r.is_text) {
      out.push_back(std::move(r));
      return;
    }
    const auto& s = r.text;
    size_t i = 0;
    size_t n = s.size();
    while (i < n) {
      while (i < n && bytes.space[idx(s[i])])
        ++i;
      size_t start = i;
      while (i < n && !bytes.space[idx(s[i])])
        ++i;
      if (i > start)
        out.push_back(record::string({}, s.substr(start, i - start),
                                     r.timestamp));
    }
  }
};

/// tokenize on rows: text values are tokenized straight into the output
/// columns (word count's hot path); integer values through their digits.
class tokenize_transform final : public record_transform {
public:
  void process(row_batch& in, row_batch& out, bool partial) override {
    auto value = in.columns.size() - 1; // the default schemas end in value
    if (in.columns[value].type != field_type::string) {
      record_transform::process(in, out, partial);
      return;
    }
    auto& c = in.columns[value];
    for (size_t i = 0; i < in.rows; ++i)
      tokenize(c.str(i), in.time(i), out);
  }

protected:
  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in)
      tokenize_fn{}(std::move(r), out);
  }
};

// -- filter -------------------------------------------------------------------

struct even {
  bool operator()(const record& r) const {
    return !r.is_text && r.num % 2 == 0;
  }
};

struct odd {
  bool operator()(const record& r) const {
    return !r.is_text && r.num % 2 != 0;
  }
};

/// Drops empty text values (integers pass).
struct nonempty {
  bool operator()(const record& r) const {
    return !r.is_text || !r.text.empty();
  }
};

struct greater_than {
  int64_t threshold;
  bool operator()(const record& r) const {
    return !r.is_text && r.num > threshold;
  }
};

/// Whether the value's text form contains `substring`.
struct contains {
  std::string substring;
  bool operator()(const record& r) const {
    if (r.is_text)
      return r.text.find(substring) != std::string::npos;
    fmt::format_int digits{r.num};
    return std::string_view{digits.data(), digits.size()}.find(substring)
           != std::string_view::npos;
  }
};

} // namespace

namespace {

/// Calls `f(word)` for each run of word bytes in `line` (tokenize's split).
template <class F>
void for_each_word(std::string_view line, F&& f) {
  size_t i = 0;
  size_t n = line.size();
  while (i < n) {
    while (i < n && !bytes.word[idx(line[i])])
      ++i;
    size_t start = i;
    while (i < n && bytes.word[idx(line[i])])
      ++i;
    if (i > start)
      f(line.substr(start, i - start));
  }
}

/// Lower-cases [first, last) in place, ASCII only.
void lower_in_place(char* first, char* last) {
  for (; first != last; ++first)
    *first = bytes.lower[idx(*first)];
}

} // namespace

void tokenize(std::string_view line, int64_t ts, std::vector<record>& out) {
  for_each_word(line, [&](std::string_view word) {
    record r;
    r.key.assign(word.data(), word.size());
    lower_in_place(r.key.data(), r.key.data() + r.key.size());
    r.num = 1;
    r.timestamp = ts;
    out.push_back(std::move(r));
  });
}

void tokenize(std::string_view line, int64_t ts, row_batch& out) {
  auto& words = out.columns[0];
  auto& ones = out.columns[1];
  for_each_word(line, [&](std::string_view word) {
    // Copy, then lower-case in place: append is a memcpy, where a resize
    // per word zero-filled first.
    auto first = words.chars.size();
    words.chars.append(word.data(), word.size());
    lower_in_place(words.chars.data() + first,
                   words.chars.data() + words.chars.size());
    words.ends.push_back(static_cast<uint32_t>(words.chars.size()));
    ones.ints.push_back(1);
    ++out.rows;
    out.push_time(ts);
  });
}

derived_schema function_schema(const std::string& op, const named_function& f,
                               const schema& input) {
  if (!default_schema::matches(input))
    return {{},
            fmt::format("{} function '{}' works on (value: int64|string) or "
                        "(key: string, value: int64|string), not on {}",
                        op, f.name, to_string(input))};
  auto value_type = input.fields.back().type;
  switch (f.output) {
    case function_output::same:
      return {input, {}};
    case function_output::keyed:
      return {value_type == field_type::int64 ? default_schema::keyed_numbers()
                                              : default_schema::keyed_lines(),
              {}};
    case function_output::keyed_numbers:
      return {default_schema::keyed_numbers(), {}};
    case function_output::numbers:
      return {input.size() == 2 ? default_schema::keyed_numbers()
                                : default_schema::numbers(),
              {}};
    case function_output::split:
      return {value_type == field_type::string ? default_schema::lines()
                                               : input,
              {}};
  }
  return {input, {}};
}

const std::vector<named_function>& map_functions() {
  static const std::vector<named_function> table{
    {"identity", {},
     [](const params&) { return wrap<map_transform>([](record&) {}); }},
    {"key_mod", {{"modulus", param_kind::positive, true}},
     [](const params& p) {
       return std::make_unique<key_mod_transform>(int_param(p, "modulus", 1));
     },
     function_output::keyed},
    {"key_by_value", {},
     [](const params&) { return wrap<map_transform>(key_by_value{}); },
     function_output::keyed_numbers},
    {"upper", {},
     [](const params&) { return wrap<map_transform>(recase{&bytes.upper}); }},
    {"lower", {},
     [](const params&) { return wrap<map_transform>(recase{&bytes.lower}); }},
    {"length", {}, [](const params&) { return wrap<map_transform>(length{}); },
     function_output::numbers},
    {"square", {}, [](const params&) { return wrap<map_transform>(square{}); }},
    {"negate", {}, [](const params&) { return wrap<map_transform>(negate{}); }},
    {"fail_once",
     {{"marker", param_kind::text, true}, {"after", param_kind::non_negative, false}},
     [](const params& p) {
       return wrap<map_transform>(
         fail_once{text_param(p, "marker", ""), int_param(p, "after", 0)});
     }},
  };
  return table;
}

const std::vector<named_function>& flat_map_functions() {
  static const std::vector<named_function> table{
    {"tokenize", {},
     [](const params&) { return std::make_unique<tokenize_transform>(); },
     function_output::keyed_numbers},
    {"split", {},
     [](const params&) { return wrap<flat_map_transform>(split_fn{}); },
     function_output::split},
  };
  return table;
}

const std::vector<named_function>& filter_functions() {
  static const std::vector<named_function> table{
    {"even", {}, [](const params&) { return wrap<filter_transform>(even{}); }},
    {"odd", {}, [](const params&) { return wrap<filter_transform>(odd{}); }},
    {"nonempty", {},
     [](const params&) { return wrap<filter_transform>(nonempty{}); }},
    {"greater_than", {{"threshold", param_kind::integer, true}},
     [](const params& p) {
       return wrap<filter_transform>(
         greater_than{int_param(p, "threshold", 0)});
     }},
    {"contains", {{"substring", param_kind::text, true}},
     [](const params& p) {
       return wrap<filter_transform>(contains{text_param(p, "substring")});
     }},
  };
  return table;
}

} // namespace weir::ops
