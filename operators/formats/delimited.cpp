// Delimited lines (CSV, TSV, whitespace-separated): row_formats.hpp. The
// reader looks at each byte about once and copies only string values into
// their column; fields are string_views into the line.
#include <cstring>

#include <fmt/format.h>

#include "messages/record.hpp"
#include "operators/formats/row_formats.hpp"
#include "operators/formats/row_formats_internal.hpp"

namespace weir::ops {

namespace {

using detail::text_value;

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

/// One field of a line.
struct token {
  std::string_view text; ///< without its quotes
  bool quoted = false;   ///< was in "..."
  bool escaped = false;  ///< holds "" for a quote
};

enum class split { field, last, no_closing_quote, text_after_quote };

/// Splits a line into fields, left to right.
class splitter {
public:
  splitter(std::string_view line, const delimited_format& f)
    : p_(line.data()), end_(line.data() + line.size()), f_(f),
      blanks_(f.separator == ' ') {
    if (blanks_) {
      while (p_ != end_ && is_blank(*p_))
        ++p_;
      while (end_ != p_ && is_blank(end_[-1]))
        --end_;
    }
  }

  /// Whether the line has no field at all (a blank line, whitespace
  /// format; in the others an empty line is one empty field).
  bool empty() const { return blanks_ && p_ == end_; }

  /// Reads the next field: `field` when another one follows, `last` for
  /// the last one, or a quoting problem.
  split next(token& t) {
    t.quoted = t.escaped = false;
    if (f_.quoted && p_ != end_ && *p_ == '"')
      return next_quoted(t);
    const char* stop = find_separator(p_);
    t.text = {p_, static_cast<size_t>(stop - p_)};
    p_ = stop;
    return after_field();
  }

  /// How many fields follow (the last next() returned `field`); a field
  /// with a quoting problem ends the count.
  size_t count_rest() {
    token t;
    size_t n = 0;
    for (;;) {
      auto r = next(t);
      ++n;
      if (r != split::field)
        return n;
    }
  }

private:
  split next_quoted(token& t) {
    const char* q = p_ + 1;
    for (;;) {
      const auto* close = static_cast<const char*>(
        std::memchr(q, '"', static_cast<size_t>(end_ - q)));
      if (close == nullptr)
        return split::no_closing_quote;
      if (close + 1 != end_ && close[1] == '"') {
        t.escaped = true;
        q = close + 2;
        continue;
      }
      t.text = {p_ + 1, static_cast<size_t>(close - p_ - 1)};
      t.quoted = true;
      p_ = close + 1;
      break;
    }
    if (p_ != end_ && !is_separator(*p_))
      return split::text_after_quote;
    return after_field();
  }

  bool is_separator(char c) const {
    return blanks_ ? is_blank(c) : c == f_.separator;
  }

  const char* find_separator(const char* from) const {
    if (!blanks_) {
      const auto* s = static_cast<const char*>(
        std::memchr(from, f_.separator, static_cast<size_t>(end_ - from)));
      return s == nullptr ? end_ : s;
    }
    while (from != end_ && !is_blank(*from))
      ++from;
    return from;
  }

  /// At the end of a field: steps over the separator (a run of blanks).
  split after_field() {
    if (p_ == end_)
      return split::last;
    ++p_;
    if (blanks_)
      while (is_blank(*p_)) // the line's last byte is no blank
        ++p_;
    return split::field;
  }

  const char* p_;
  const char* end_;
  delimited_format f_;
  bool blanks_;
};

// -- problems (cold) ----------------------------------------------------------

std::string count_problem(size_t fields, size_t expected) {
  return fmt::format("{} field{}, the schema has {}", fields,
                     fields == 1 ? "" : "s", expected);
}

std::string not_a(const field& f, std::string_view value) {
  std::string out = fmt::format("field '{}': '", f.name);
  detail::append_shown(out, value);
  out += "' is not ";
  out += detail::with_article(f.type);
  return out;
}

std::string out_of_range(const field& f, std::string_view value) {
  std::string out = fmt::format("field '{}': ", f.name);
  detail::append_shown(out, value);
  fmt::format_to(std::back_inserter(out), " is out of the {} range",
                 to_string(f.type));
  return out;
}

std::string field_problem(const field& f, split r) {
  return fmt::format("field '{}': {}", f.name,
                     r == split::no_closing_quote
                       ? "no closing quote"
                       : "text after the closing quote");
}

// -- values -------------------------------------------------------------------

/// Appends a quoted field's text with each "" as one quote.
void append_unquoted(std::string& out, std::string_view s) {
  for (;;) {
    auto q = s.find('"');
    if (q == std::string_view::npos) {
      out.append(s.data(), s.size());
      return;
    }
    out.append(s.data(), q + 1);
    s.remove_prefix(q + 2); // the second quote of the pair
  }
}

/// Appends a TSV field's text reading \t \n \r \\.
void append_tsv_unescaped(std::string& out, std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size()) {
      char e = s[i + 1];
      char r = e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r'
                                : e == '\\' ? '\\' : 0;
      if (r != 0) {
        out += r;
        ++i;
        continue;
      }
    }
    out += c;
  }
}

/// Stores field `t` in column `c`; "" or the problem.
std::string store(const token& t, const field& f, column& c,
                  const delimited_format& df) {
  if (holds_chars(c.type)) {
    if (t.text.empty() && !t.quoted && f.nullable) {
      c.push_null();
    } else if (t.escaped) {
      append_unquoted(c.chars, t.text);
      detail::end_chars(c);
    } else if (!df.quoted && df.separator == '\t'
               && std::memchr(t.text.data(), '\\', t.text.size()) != nullptr) {
      append_tsv_unescaped(c.chars, t.text);
      detail::end_chars(c);
    } else {
      c.push_str(t.text);
    }
    return {};
  }
  auto v = detail::trim_blanks(t.text);
  if (v.empty()) {
    if (!f.nullable)
      return fmt::format("field '{}' is empty and not nullable", f.name);
    c.push_null();
    return {};
  }
  auto r = detail::push_parsed(c, v);
  if (r == text_value::ok)
    return {};
  return r == text_value::invalid ? not_a(f, v) : out_of_range(f, v);
}

// -- writing ------------------------------------------------------------------

void append_csv(std::string& out, std::string_view s, char separator) {
  if (s.empty()) {
    out += "\"\"";
    return;
  }
  bool quote = false;
  for (char c : s)
    if (c == '"' || c == '\n' || c == '\r'
        || (separator == ' ' ? is_blank(c) : c == separator)) {
      quote = true;
      break;
    }
  if (!quote) {
    out.append(s.data(), s.size());
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"')
      out += '"';
    out += c;
  }
  out += '"';
}

void append_tsv(std::string& out, std::string_view s) {
  for (char c : s) {
    const char* escape = c == '\t'   ? "\\t"
                         : c == '\n' ? "\\n"
                         : c == '\r' ? "\\r"
                         : c == '\\' ? "\\\\"
                                     : nullptr;
    if (escape != nullptr)
      out += escape;
    else
      out += c;
  }
}

} // namespace

std::string parse_delimited(std::string_view line, const delimited_format& f,
                            const schema& s, row_batch& out) {
  if (auto problem = detail::check_columns(s, out); !problem.empty())
    return problem;
  const size_t n = s.size();
  splitter sp{line, f};
  size_t i = 0;
  if (!sp.empty()) {
    token t;
    for (;;) {
      auto r = sp.next(t);
      if (i == n) { // one field too many
        drop_partial_row(out);
        return count_problem(n + 1 + (r == split::field ? sp.count_rest() : 0),
                             n);
      }
      if (r == split::no_closing_quote || r == split::text_after_quote) {
        drop_partial_row(out);
        return field_problem(s.fields[i], r);
      }
      auto problem = store(t, s.fields[i], out.columns[i], f);
      if (!problem.empty()) {
        // A wrong number of fields says more than a wrong value.
        auto total = i + 1 + (r == split::field ? sp.count_rest() : 0);
        drop_partial_row(out);
        return total != n ? count_problem(total, n) : problem;
      }
      ++i;
      if (r == split::last)
        break;
    }
  }
  if (i != n) {
    drop_partial_row(out);
    return count_problem(i, n);
  }
  detail::end_row(out);
  return {};
}

void append_delimited(std::string& out, const row_batch& b, size_t row,
                      const delimited_format& f) {
  for (size_t i = 0; i < b.columns.size(); ++i) {
    if (i > 0)
      out += f.separator;
    const auto& c = b.columns[i];
    if (c.is_null(row))
      continue;
    if (!holds_chars(c.type)) {
      append_value_text(out, c, row);
      continue;
    }
    auto s = c.str(row);
    if (f.quoted)
      append_csv(out, s, f.separator);
    else if (f.separator == '\t')
      append_tsv(out, s);
    else
      out.append(s.data(), s.size());
  }
  out += '\n';
}

} // namespace weir::ops
