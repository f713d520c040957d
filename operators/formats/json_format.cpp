// JSON lines: row_formats.hpp. A reader of one flat object per line that
// copies only the values of the schema's fields (other members are checked
// and skipped), and a writer.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "messages/record.hpp"
#include "operators/formats/row_formats.hpp"
#include "operators/formats/row_formats_internal.hpp"

namespace weir::ops {

namespace {

using detail::text_value;

/// How deep objects and arrays may nest in a member the schema ignores.
constexpr int max_depth = 64;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// The four hex digits at `p` (checked by the scanner).
uint32_t hex4(const char* p) {
  uint32_t x = 0;
  std::from_chars(p, p + 4, x, 16);
  return x;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// Appends the value of a string's text between its quotes (`raw`, whose
/// escapes the scanner checked). For bytes, \u0000..\u00ff are one byte
/// each. A lone surrogate becomes U+FFFD.
void append_decoded(std::string& out, std::string_view raw, bool bytes) {
  size_t i = 0;
  while (i < raw.size()) {
    auto slash = raw.find('\\', i);
    if (slash == std::string_view::npos)
      slash = raw.size();
    out.append(raw.data() + i, slash - i);
    if (slash == raw.size())
      return;
    char e = raw[slash + 1];
    i = slash + 2;
    switch (e) {
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp = hex4(raw.data() + i);
        i += 4;
        if (bytes && cp <= 0xFF) {
          out += static_cast<char>(cp);
          break;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= raw.size()
            && raw[i] == '\\' && raw[i + 1] == 'u') {
          uint32_t lo = hex4(raw.data() + i + 2);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF)
          cp = 0xFFFD;
        append_utf8(out, cp);
        break;
      }
      default: // '"', '\\', '/'
        out += e;
    }
  }
}

/// The length of the valid UTF-8 sequence at `p` (a byte >= 0x80), or 0.
size_t utf8_length(const unsigned char* p, const unsigned char* end) {
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return p + k < end && p[k] >= lo && p[k] <= hi;
  };
  unsigned char c = p[0];
  if (c >= 0xC2 && c <= 0xDF)
    return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    bool second = c == 0xE0   ? cont(1, 0xA0)
                  : c == 0xED ? cont(1, 0x80, 0x9F)
                              : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    bool second = c == 0xF0   ? cont(1, 0x90)
                  : c == 0xF4 ? cont(1, 0x80, 0x8F)
                              : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  const auto* run = p; // the start of bytes that need no escape
  while (p < end) {
    unsigned char c = *p;
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++p;
      continue;
    }
    if (c >= 0x80) {
      if (auto n = utf8_length(p, end); n > 0) {
        p += n;
        continue;
      }
    }
    out.append(reinterpret_cast<const char*>(run),
               static_cast<size_t>(p - run));
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    }
    run = ++p;
  }
  out.append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
  out += '"';
}

/// Reads one line's object, member by member, straight into the columns.
class json_reader {
public:
  json_reader(std::string_view line, const schema& s, row_batch& out)
    : begin_(line.data()), p_(begin_), end_(begin_ + line.size()), s_(s),
      out_(out) {
  }

  /// "" or the problem (the row is then partly appended).
  std::string read() {
    skip_ws();
    if (p_ == end_)
      return "an empty line, not a JSON object";
    if (*p_ != '{')
      return "not a JSON object";
    ++p_;
    skip_ws();
    if (!elements('}', 0))
      return std::move(problem_);
    skip_ws();
    if (p_ != end_) {
      syntax("text after the object");
      return std::move(problem_);
    }
    return fill_missing();
  }

private:
  /// After a '{' or '[' and blanks: the members or elements up to `close`
  /// and it. At depth 0 (the line's object) members that name a field are
  /// stored, the others skipped.
  bool elements(char close, int depth) {
    if (p_ != end_ && *p_ == close) {
      ++p_;
      return true;
    }
    for (;;) {
      std::string_view key;
      bool escaped = false;
      if (close == '}' && !member_name(key, escaped))
        return false;
      auto i = depth == 0 ? find_field(key, escaped) : s_.size();
      if (!(i < s_.size() ? store(i) : skip_value(depth + 1)))
        return false;
      skip_ws();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        skip_ws();
        continue;
      }
      if (p_ != end_ && *p_ == close) {
        ++p_;
        return true;
      }
      return syntax(close == '}' ? "expected ',' or '}'"
                                 : "expected ',' or ']'");
    }
  }

  /// A member's name and the ':' after it (and blanks).
  bool member_name(std::string_view& key, bool& escaped) {
    if (p_ == end_ || *p_ != '"')
      return syntax("expected '\"' (a member name)");
    if (!scan_string(key, escaped))
      return false;
    skip_ws();
    if (p_ == end_ || *p_ != ':')
      return syntax("expected ':'");
    ++p_;
    skip_ws();
    return true;
  }

  /// The index of the field named `key`, or s_.size(). Members usually
  /// come in schema order: the field after the last one found is tried
  /// first.
  size_t find_field(std::string_view key, bool escaped) {
    std::string decoded;
    if (escaped) {
      append_decoded(decoded, key, false);
      key = decoded;
    }
    auto n = s_.size();
    for (size_t k = 0; k < n; ++k) {
      auto i = hint_ + k < n ? hint_ + k : hint_ + k - n;
      if (s_.fields[i].name == key) {
        hint_ = i + 1;
        return i;
      }
    }
    return n;
  }

  /// Reads the value of field `i` into its column.
  bool store(size_t i) {
    const auto& f = s_.fields[i];
    auto& c = out_.columns[i];
    if (c.size() > out_.rows) // a repeated member: the last counts
      detail::truncate_column(c, out_.rows);
    const char* start = p_;
    if (p_ == end_)
      return syntax("expected a value");
    switch (*p_) {
      case '"':
        return store_string(f, c, start);
      case 't':
      case 'f': {
        bool value = *p_ == 't';
        if (!literal(value ? "true" : "false"))
          return false;
        if (c.type != field_type::boolean)
          return mismatch(f, start, "a bool");
        c.push_int(value ? 1 : 0);
        return true;
      }
      case 'n':
        if (!literal("null"))
          return false;
        if (!f.nullable)
          return fail(fmt::format("field '{}' is null and not nullable",
                                  f.name));
        c.push_null();
        return true;
      case '{':
      case '[':
        if (!skip_value(1))
          return false;
        return mismatch(f, start, *start == '{' ? "an object" : "an array");
      default:
        return store_number(f, c, start);
    }
  }

  bool store_string(const field& f, column& c, const char* start) {
    std::string_view raw;
    bool escaped = false;
    if (!scan_string(raw, escaped))
      return false;
    if (holds_chars(c.type)) {
      if (!escaped) {
        c.push_str(raw);
      } else {
        append_decoded(c.chars, raw, c.type == field_type::bytes);
        detail::end_chars(c);
      }
      return true;
    }
    std::string decoded;
    std::string_view text = raw;
    if (escaped) {
      append_decoded(decoded, raw, false);
      text = decoded;
    }
    if (c.type == field_type::timestamp) {
      auto r = detail::push_parsed(c, detail::trim_blanks(text));
      return r == text_value::ok || value_problem(f, start, r);
    }
    if (c.type == field_type::float64) {
      if (text == "NaN" || text == "Infinity" || text == "-Infinity") {
        c.push_float(text == "NaN"        ? std::nan("")
                     : text == "Infinity" ? HUGE_VAL
                                          : -HUGE_VAL);
        return true;
      }
    }
    return mismatch(f, start, "a string");
  }

  bool store_number(const field& f, column& c, const char* start) {
    std::string_view raw;
    bool integer = false;
    if (!scan_number(raw, integer))
      return false;
    if (c.type == field_type::boolean || holds_chars(c.type))
      return mismatch(f, start, "a number");
    if (!integer && c.type != field_type::float64)
      return value_problem(f, start, text_value::invalid);
    auto r = detail::push_parsed(c, raw);
    return r == text_value::ok || value_problem(f, start, r);
  }

  // -- problems ---------------------------------------------------------------

  bool fail(std::string problem) {
    problem_ = std::move(problem);
    return false;
  }

  bool syntax(const char* what) {
    return fail(fmt::format("not valid JSON: {} at column {}", what,
                            p_ - begin_ + 1));
  }

  /// The value from `start` to here, for a problem.
  std::string shown(const field& f, const char* start) const {
    std::string out = fmt::format("field '{}': ", f.name);
    detail::append_shown(out, {start, static_cast<size_t>(p_ - start)});
    return out;
  }

  bool mismatch(const field& f, const char* start, const char* kind) {
    auto out = shown(f, start);
    fmt::format_to(std::back_inserter(out), " is {}, the schema says {}", kind,
                   to_string(f.type));
    return fail(std::move(out));
  }

  bool value_problem(const field& f, const char* start, text_value r) {
    auto out = shown(f, start);
    if (r == text_value::out_of_range)
      fmt::format_to(std::back_inserter(out), " is out of the {} range",
                     to_string(f.type));
    else
      fmt::format_to(std::back_inserter(out), " is not {}",
                     detail::with_article(f.type));
    return fail(std::move(out));
  }

  // -- scanning ---------------------------------------------------------------

  void skip_ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n'
                          || *p_ == '\r'))
      ++p_;
  }

  bool literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size()
        || std::memcmp(p_, word.data(), word.size()) != 0)
      return syntax("an invalid value");
    p_ += word.size();
    return true;
  }

  /// At a '"': the text up to the closing quote, escapes checked.
  bool scan_string(std::string_view& raw, bool& escaped) {
    const char* first = ++p_;
    for (;;) {
      if (p_ == end_)
        return syntax("a string without its closing quote");
      auto c = static_cast<unsigned char>(*p_);
      if (c == '"')
        break;
      if (c < 0x20)
        return syntax("a control character in a string");
      if (c == '\\') {
        escaped = true;
        if (!scan_escape())
          return false;
        continue;
      }
      ++p_;
    }
    raw = {first, static_cast<size_t>(p_ - first)};
    ++p_;
    return true;
  }

  /// At a backslash: steps over a valid escape.
  bool scan_escape() {
    if (end_ - p_ < 2)
      return syntax("an invalid escape");
    char e = p_[1];
    if (e == 'u') {
      if (end_ - p_ < 6)
        return syntax("an invalid \\u escape");
      for (int k = 2; k < 6; ++k)
        if (!std::isxdigit(static_cast<unsigned char>(p_[k])))
          return syntax("an invalid \\u escape");
      p_ += 6;
      return true;
    }
    if (std::strchr("\"\\/bfnrt", e) == nullptr || e == 0)
      return syntax("an invalid escape");
    p_ += 2;
    return true;
  }

  /// A number by JSON's grammar; `integer`: no fraction, no exponent.
  bool scan_number(std::string_view& raw, bool& integer) {
    const char* first = p_;
    auto digits = [&] {
      const char* from = p_;
      while (p_ != end_ && is_digit(*p_))
        ++p_;
      return p_ != from;
    };
    if (p_ != end_ && *p_ == '-')
      ++p_;
    if (p_ != end_ && *p_ == '0')
      ++p_;
    else if (!digits())
      return syntax(first == p_ ? "an invalid value" : "an invalid number");
    integer = true;
    if (p_ != end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (!digits())
        return syntax("an invalid number");
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-'))
        ++p_;
      if (!digits())
        return syntax("an invalid number");
    }
    raw = {first, static_cast<size_t>(p_ - first)};
    return true;
  }

  /// Steps over any value, checking it.
  bool skip_value(int depth) {
    if (depth > max_depth)
      return syntax("nesting deeper than 64 levels");
    if (p_ == end_)
      return syntax("expected a value");
    std::string_view raw;
    bool flag = false;
    switch (*p_) {
      case '"':
        return scan_string(raw, flag);
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      case '{':
      case '[':
        return skip_container(depth);
      default:
        return scan_number(raw, flag);
    }
  }

  bool skip_container(int depth) {
    char close = *p_ == '{' ? '}' : ']';
    ++p_;
    skip_ws();
    return elements(close, depth);
  }

  /// Nulls for the fields no member named; a problem for those that may
  /// not be null.
  std::string fill_missing() {
    for (size_t i = 0; i < s_.size(); ++i) {
      auto& c = out_.columns[i];
      if (c.size() > out_.rows)
        continue;
      if (!s_.fields[i].nullable)
        return fmt::format("field '{}' is missing and not nullable",
                           s_.fields[i].name);
      c.push_null();
    }
    return {};
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  const schema& s_;
  row_batch& out_;
  size_t hint_ = 0;
  std::string problem_;
};

} // namespace

std::string parse_json_line(std::string_view line, const schema& s,
                            row_batch& out) {
  if (auto problem = detail::check_columns(s, out); !problem.empty())
    return problem;
  auto problem = json_reader{line, s, out}.read();
  if (!problem.empty()) {
    drop_partial_row(out);
    return problem;
  }
  detail::end_row(out);
  return {};
}

void append_json_line(std::string& out, const row_batch& b, size_t row,
                      const schema& s) {
  out += '{';
  for (size_t i = 0; i < b.columns.size(); ++i) {
    if (i > 0)
      out += ',';
    if (i < s.size())
      append_json_string(out, s.fields[i].name);
    else
      fmt::format_to(std::back_inserter(out), "\"f{}\"", i);
    out += ':';
    const auto& c = b.columns[i];
    if (c.is_null(row)) {
      out += "null";
      continue;
    }
    switch (c.type) {
      case field_type::string:
      case field_type::bytes:
        append_json_string(out, c.str(row));
        break;
      case field_type::timestamp:
        out += '"';
        append_value_text(out, c, row);
        out += '"';
        break;
      case field_type::float64: {
        double x = c.floats[row];
        if (std::isnan(x))
          out += "\"NaN\"";
        else if (std::isinf(x))
          out += x > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        else
          append_value_text(out, c, row);
        break;
      }
      default: // int64, bool
        append_value_text(out, c, row);
    }
  }
  out += "}\n";
}

} // namespace weir::ops
