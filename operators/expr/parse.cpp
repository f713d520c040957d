// Parsing and typing of expressions and select lists (operators/expr/expr.hpp).

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "operators/expr/expr.hpp"
#include "operators/expr/tree.hpp"

namespace weir::ops::expr {

std::string excerpt(std::string_view s) {
  constexpr size_t limit = 80;
  std::string out;
  bool space = false;
  for (char c : s) {
    if (is_space(c)) {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c;
    if (out.size() > limit) {
      out.resize(limit - 3);
      out += "...";
      break;
    }
  }
  return out;
}

namespace {

// -- tokens -------------------------------------------------------------------

enum class tok : uint8_t {
  end,
  integer,
  decimal,
  string,
  ident,
  quoted,
  punct,
};

struct token {
  tok kind = tok::end;
  uint32_t begin = 0;
  uint32_t end = 0;
  /// The decoded string or name; the punctuation as written.
  std::string text;
  uint64_t u = 0;
  double d = 0;
};

/// A compile error: where (0-based) and what. Positions print 1-based.
struct problem {
  uint32_t pos;
  std::string what;
};

/// A compile error about a select list's item, not a position.
struct item_problem {
  std::string what;
};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident(char c) {
  return is_ident_start(c) || is_digit(c);
}
bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z')
      x = static_cast<char>(x - 'A' + 'a');
    if (x != b[i])
      return false;
  }
  return true;
}

std::string lowercase(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// A character that starts no token, as text for a message (a whole UTF-8
/// sequence).
std::string char_at(std::string_view src, size_t i) {
  size_t j = i + 1;
  if (static_cast<unsigned char>(src[i]) >= 0x80)
    while (j < src.size() && j < i + 4
           && (static_cast<unsigned char>(src[j]) & 0xC0) == 0x80)
      ++j;
  auto c = src.substr(i, j - i);
  if (c.size() == 1 && static_cast<unsigned char>(c[0]) < 0x20)
    return fmt::format("\\x{:02x}", static_cast<unsigned char>(c[0]));
  return std::string{c};
}

std::vector<token> lex(std::string_view src) {
  std::vector<token> out;
  size_t i = 0;
  auto at = [](size_t p) { return static_cast<uint32_t>(p); };
  while (true) {
    while (i < src.size() && is_space(src[i]))
      ++i;
    token t;
    t.begin = at(i);
    if (i == src.size()) {
      t.end = t.begin;
      out.push_back(std::move(t));
      return out;
    }
    char c = src[i];
    bool fraction = c == '.' && i + 1 < src.size() && is_digit(src[i + 1]);
    if (is_digit(c) || fraction) {
      size_t j = i;
      bool decimal = false;
      while (j < src.size() && is_digit(src[j]))
        ++j;
      if (j < src.size() && src[j] == '.') {
        decimal = true;
        ++j;
        while (j < src.size() && is_digit(src[j]))
          ++j;
      }
      if (j < src.size() && (src[j] == 'e' || src[j] == 'E')) {
        size_t k = j + 1;
        if (k < src.size() && (src[k] == '+' || src[k] == '-'))
          ++k;
        if (k < src.size() && is_digit(src[k])) {
          decimal = true;
          j = k;
          while (j < src.size() && is_digit(src[j]))
            ++j;
        }
      }
      if (j < src.size() && (is_ident(src[j]) || src[j] == '.')) {
        size_t k = j;
        while (k < src.size() && (is_ident(src[k]) || src[k] == '.'))
          ++k;
        throw problem{at(i), fmt::format("bad number '{}'",
                                         excerpt(src.substr(i, k - i)))};
      }
      auto text = src.substr(i, j - i);
      if (decimal) {
        t.kind = tok::decimal;
        auto end = text.data() + text.size();
        auto [p, ec] = std::from_chars(text.data(), end, t.d);
        if (ec != std::errc{} || p != end)
          throw problem{at(i), fmt::format("number {} is out of range",
                                           excerpt(text))};
      } else {
        t.kind = tok::integer;
        auto end = text.data() + text.size();
        auto [p, ec] = std::from_chars(text.data(), end, t.u);
        if (ec != std::errc{} || p != end || t.u > uint64_t{1} << 63)
          throw problem{at(i), fmt::format("integer {} is out of range for "
                                           "int64",
                                           excerpt(text))};
      }
      t.text = std::string{text};
      i = j;
    } else if (c == '\'' || c == '"') {
      t.kind = tok::string;
      size_t j = i + 1;
      while (true) {
        if (j >= src.size())
          throw problem{at(i), "unterminated string"};
        char d = src[j];
        if (d == c) {
          ++j;
          break;
        }
        if (d != '\\') {
          t.text += d;
          ++j;
          continue;
        }
        if (j + 1 >= src.size())
          throw problem{at(i), "unterminated string"};
        char e = src[j + 1];
        switch (e) {
          case '\\': t.text += '\\'; break;
          case '\'': t.text += '\''; break;
          case '"': t.text += '"'; break;
          case 'n': t.text += '\n'; break;
          case 'r': t.text += '\r'; break;
          case 't': t.text += '\t'; break;
          case '0': t.text += '\0'; break;
          case 'x': {
            auto hex = src.substr(j + 2, 2);
            uint8_t byte = 0;
            auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(),
                                           byte, 16);
            if (hex.size() != 2 || ec != std::errc{} || p != hex.data() + 2)
              throw problem{at(j), "'\\x' needs two hex digits"};
            t.text += static_cast<char>(byte);
            j += 2;
            break;
          }
          default:
            throw problem{at(j), fmt::format("unknown escape '\\{}'",
                                             char_at(src, j + 1))};
        }
        j += 2;
      }
      i = j;
    } else if (c == '`') {
      t.kind = tok::quoted;
      size_t j = i + 1;
      while (true) {
        if (j >= src.size())
          throw problem{at(i), "unterminated `name`"};
        if (src[j] == '`') {
          if (j + 1 < src.size() && src[j + 1] == '`') {
            t.text += '`';
            j += 2;
            continue;
          }
          ++j;
          break;
        }
        t.text += src[j++];
      }
      if (t.text.empty())
        throw problem{at(i), "empty `name`"};
      i = j;
    } else if (is_ident_start(c)) {
      t.kind = tok::ident;
      size_t j = i;
      while (j < src.size() && is_ident(src[j]))
        ++j;
      t.text = std::string{src.substr(i, j - i)};
      i = j;
    } else {
      t.kind = tok::punct;
      static constexpr std::string_view two[] = {"||", "==", "!=", "<>", "<=",
                                                 ">="};
      auto rest = src.substr(i);
      std::string_view p;
      for (auto x : two)
        if (rest.substr(0, 2) == x)
          p = x;
      if (p.empty() && std::strchr("()+-*/%=<>,", c) != nullptr)
        p = rest.substr(0, 1);
      if (p.empty())
        throw problem{at(i), fmt::format("unexpected character '{}'",
                                         char_at(src, i))};
      t.text = std::string{p};
      i += p.size();
    }
    t.end = at(i);
    out.push_back(std::move(t));
  }
}

// -- typing -------------------------------------------------------------------

using node_ptr = std::unique_ptr<node>;

problem too_deep(uint32_t pos) {
  return problem{pos, fmt::format("expression nested deeper than {} levels",
                                  max_depth)};
}

bool is_number(field_type t) {
  return t == field_type::int64 || t == field_type::float64;
}

struct function_info {
  std::string_view name;
  op kind;
  size_t min_args;
  size_t max_args;
};

constexpr size_t many = std::numeric_limits<size_t>::max();

constexpr function_info functions[] = {
  {"lower", op::lower, 1, 1},
  {"upper", op::upper, 1, 1},
  {"length", op::length, 1, 1},
  {"trim", op::trim, 1, 1},
  {"substr", op::substr, 2, 3},
  {"contains", op::contains, 2, 2},
  {"starts_with", op::starts_with, 2, 2},
  {"ends_with", op::ends_with, 2, 2},
  {"concat", op::concat, 1, many},
  {"abs", op::abs, 1, 1},
  {"to_int", op::to_int, 1, 1},
  {"to_double", op::to_double, 1, 1},
  {"to_string", op::to_string, 1, 1},
  {"if", op::if_, 3, 3},
  {"is_null", op::is_null, 1, 1},
  {"coalesce", op::coalesce, 1, many},
};

class parser {
public:
  parser(std::string_view src, const schema& input)
    : src_(src), input_(input), toks_(lex(src)) {
  }

  const token& peek(size_t ahead = 0) const {
    return toks_[std::min(at_ + ahead, toks_.size() - 1)];
  }

  bool at_end() const { return peek().kind == tok::end; }

  bool at_punct(std::string_view p, size_t ahead = 0) const {
    return peek(ahead).kind == tok::punct && peek(ahead).text == p;
  }

  bool at_keyword(std::string_view k) const {
    return peek().kind == tok::ident && iequals(peek().text, k);
  }

  const token& next() {
    auto& t = toks_[at_];
    if (at_ + 1 < toks_.size())
      ++at_;
    last_end_ = t.end;
    return t;
  }

  /// Where the first token begins.
  uint32_t first() const { return toks_.front().begin; }

  /// Where the last token consumed ends.
  uint32_t last_end() const { return last_end_; }

  [[noreturn]] void unexpected(const char* what = "expression") const {
    auto& t = peek();
    if (t.kind == tok::end)
      throw problem{t.begin, fmt::format("unexpected end of {}", what)};
    throw problem{t.begin, fmt::format("unexpected '{}'",
                                       excerpt(src_.substr(t.begin,
                                                           t.end - t.begin)))};
  }

  node_ptr expression() { return parse_or(); }

  /// A node's text for a message: a string literal as written, anything
  /// else quoted.
  std::string quote(const node& n) const {
    auto text = src_.substr(n.begin, n.end - n.begin);
    if (n.kind == op::literal && holds_chars(n.type) && !text.empty()
        && (text[0] == '\'' || text[0] == '"'))
      return excerpt(text);
    return fmt::format("'{}'", excerpt(text));
  }

  std::string describe(const node& n) const {
    if (n.untyped)
      return "null";
    return fmt::format("{} {}", to_string(n.type), quote(n));
  }

private:
  struct nesting {
    explicit nesting(parser& p, uint32_t pos) : p(p) {
      if (++p.nest_ > max_depth)
        throw too_deep(pos);
    }
    ~nesting() { --p.nest_; }
    parser& p;
  };

  node_ptr make(op kind, uint32_t pos, uint32_t begin, uint32_t end) {
    auto n = std::make_unique<node>();
    n->kind = kind;
    n->pos = pos;
    n->begin = begin;
    n->end = end;
    return n;
  }

  /// Sets the depth of `n` from its arguments, refusing a tree too deep,
  /// and whether it can fail.
  void finish(node& n) {
    uint32_t d = 0;
    for (auto& a : n.args) {
      d = std::max(d, a->depth);
      n.can_fail = n.can_fail || a->can_fail;
    }
    switch (n.kind) {
      case op::div:
      case op::mod:
        n.can_fail = true;
        break;
      case op::add:
      case op::sub:
      case op::mul:
      case op::neg:
      case op::abs:
        n.can_fail = n.can_fail || n.type != field_type::float64;
        break;
      default:
        break;
    }
    n.depth = d + 1;
    if (n.depth > max_depth)
      throw too_deep(n.pos);
  }

  static void set_null_literal(node& n, field_type t) {
    n.type = t;
    n.nullable = true;
    n.lit = column{t};
    n.lit.push_null();
  }

  /// Gives an untyped null (and the untyped nulls it passes on) type `t`.
  static void adopt(node& n, field_type t) {
    if (!n.untyped)
      return;
    n.untyped = false;
    n.type = t;
    if (n.kind == op::literal) {
      set_null_literal(n, t);
      return;
    }
    // if() passes its branches on, coalesce() all its arguments.
    for (size_t i = n.kind == op::if_ ? 1 : 0; i < n.args.size(); ++i)
      adopt(*n.args[i], t);
  }

  /// Wraps an int64 `n` in a promotion to double.
  void promote(node_ptr& n) {
    if (n->type != field_type::int64 || n->untyped)
      return;
    auto p = make(op::to_double, n->pos, n->begin, n->end);
    p->type = field_type::float64;
    p->nullable = n->nullable;
    p->args.push_back(std::move(n));
    finish(*p);
    n = std::move(p);
  }

  bool any_nullable(const node& n) const {
    return std::any_of(n.args.begin(), n.args.end(),
                       [](auto& a) { return a->nullable; });
  }

  // -- operators --------------------------------------------------------------

  node_ptr binary(op kind, const token& optok, node_ptr a, node_ptr b) {
    auto n = make(kind, optok.begin, a->begin, b->end);
    std::string name = lowercase(optok.text);
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(b));
    type_binary(*n, name);
    finish(*n);
    return n;
  }

  void type_binary(node& n, const std::string& name) {
    auto& a = n.args[0];
    auto& b = n.args[1];
    switch (n.kind) {
      case op::add:
      case op::sub:
      case op::mul:
      case op::div:
      case op::mod:
        type_arithmetic(n, name);
        break;
      case op::cat:
        for (auto* x : {&a, &b}) {
          auto& arg = **x;
          if (!arg.untyped && !holds_chars(arg.type))
            throw problem{n.pos, fmt::format("'||' needs strings, got {} "
                                             "(write to_string({}) or use "
                                             "concat())",
                                             describe(arg),
                                             excerpt(text_of(arg)))};
        }
        if (a->untyped && b->untyped)
          adopt(*a, field_type::string);
        adopt(*a, b->type);
        adopt(*b, a->type);
        n.type = a->type == field_type::bytes || b->type == field_type::bytes
                   ? field_type::bytes
                   : field_type::string;
        break;
      case op::eq:
      case op::ne:
      case op::lt:
      case op::le:
      case op::gt:
      case op::ge:
        type_comparison(n, name);
        break;
      case op::and_:
      case op::or_:
        for (auto* x : {&a, &b}) {
          adopt(**x, field_type::boolean);
          if ((*x)->type != field_type::boolean)
            throw problem{n.pos, fmt::format("'{}' needs bool operands, got {}",
                                             name, describe(**x))};
        }
        n.type = field_type::boolean;
        break;
      default:
        break;
    }
    n.nullable = any_nullable(n);
  }

  std::string_view text_of(const node& n) const {
    return src_.substr(n.begin, n.end - n.begin);
  }

  void type_arithmetic(node& n, const std::string& name) {
    auto& a = n.args[0];
    auto& b = n.args[1];
    auto ts = field_type::timestamp;
    bool plus_minus = n.kind == op::add || n.kind == op::sub;
    for (auto* x : {&a, &b}) {
      auto t = (*x)->type;
      if ((*x)->untyped || is_number(t) || (t == ts && plus_minus))
        continue;
      std::string hint;
      if (n.kind == op::add && holds_chars(t))
        hint = " (use || or concat() to join strings)";
      throw problem{n.pos, fmt::format("'{}' needs numbers, got {}{}", name,
                                       describe(**x), hint)};
    }
    if (a->untyped && b->untyped)
      adopt(*a, field_type::int64);
    // A null beside a timestamp is a number of milliseconds.
    adopt(*a, b->type == ts ? field_type::int64 : b->type);
    adopt(*b, a->type == ts ? field_type::int64 : a->type);
    if (a->type == ts || b->type == ts) {
      // timestamp ± int64, int64 + timestamp, timestamp - timestamp.
      bool ok = n.kind == op::add ? a->type != b->type
                                  : b->type == field_type::int64
                                      || a->type == ts;
      if (!ok || a->type == field_type::float64
          || b->type == field_type::float64)
        throw problem{n.pos, fmt::format("'{}' does not apply to {} and {}",
                                         name, describe(*a), describe(*b))};
      n.type = a->type == b->type ? field_type::int64 : ts;
      return;
    }
    if (a->type == field_type::float64 || b->type == field_type::float64) {
      promote(a);
      promote(b);
      n.type = field_type::float64;
    } else {
      n.type = field_type::int64;
    }
  }

  static int type_class(field_type t) {
    switch (t) {
      case field_type::int64:
      case field_type::float64:
        return 0;
      case field_type::string:
      case field_type::bytes:
        return 1;
      case field_type::timestamp:
        return 2;
      case field_type::boolean:
        return 3;
    }
    return 4;
  }

  void type_comparison(node& n, const std::string& name) {
    auto& a = n.args[0];
    auto& b = n.args[1];
    if (a->untyped && b->untyped)
      adopt(*a, field_type::int64);
    adopt(*a, b->type);
    adopt(*b, a->type);
    if (type_class(a->type) != type_class(b->type))
      throw problem{n.pos, fmt::format("'{}' compares {} with {}", name,
                                       describe(*a), describe(*b))};
    if (a->type != b->type && is_number(a->type)) {
      promote(a);
      promote(b);
    }
    n.type = field_type::boolean;
  }

  /// One type for the values if() or coalesce() chooses from (int64 and
  /// double make double), or untyped while all are null.
  void unify(node& n, size_t first, const char* fname, const char* what) {
    std::optional<field_type> t;
    size_t from = 0;
    for (size_t i = first; i < n.args.size(); ++i) {
      auto& a = *n.args[i];
      if (a.untyped)
        continue;
      if (!t) {
        t = a.type;
        from = i;
      } else if (*t != a.type) {
        if (is_number(*t) && is_number(a.type))
          t = field_type::float64;
        else
          throw problem{n.pos, fmt::format("{}() {} differ: {} and {}", fname,
                                           what, describe(*n.args[from]),
                                           describe(a))};
      }
    }
    if (!t) {
      n.untyped = true;
      return;
    }
    for (size_t i = first; i < n.args.size(); ++i) {
      adopt(*n.args[i], *t);
      if (*t == field_type::float64)
        promote(n.args[i]);
    }
    n.type = *t;
  }

  [[noreturn]] void bad_argument(const node& n, std::string_view fname,
                                 const char* needs, const node& arg) const {
    throw problem{n.pos, fmt::format("{}() needs {}, got {}", fname, needs,
                                     describe(arg))};
  }

  /// Requires argument `i` to be a string or bytes (a null: a string).
  void need_chars(node& n, size_t i, std::string_view fname) {
    auto& a = *n.args[i];
    adopt(a, field_type::string);
    if (!holds_chars(a.type))
      bad_argument(n, fname, "a string", a);
  }

  void need_type(node& n, size_t i, std::string_view fname, field_type t,
                 const char* needs) {
    auto& a = *n.args[i];
    adopt(a, t);
    if (a.type != t)
      bad_argument(n, fname, needs, a);
  }

  void type_call(node& n, std::string_view fname) {
    auto& args = n.args;
    n.nullable = any_nullable(n);
    switch (n.kind) {
      case op::lower:
      case op::upper:
      case op::trim:
        need_chars(n, 0, fname);
        n.type = args[0]->type;
        break;
      case op::length:
        need_chars(n, 0, fname);
        n.type = field_type::int64;
        break;
      case op::substr:
        need_chars(n, 0, fname);
        for (size_t i = 1; i < args.size(); ++i)
          need_type(n, i, fname, field_type::int64, "int64 positions");
        n.type = args[0]->type;
        break;
      case op::contains:
      case op::starts_with:
      case op::ends_with:
        need_chars(n, 0, fname);
        need_chars(n, 1, fname);
        n.type = field_type::boolean;
        break;
      case op::concat:
        n.type = field_type::string;
        for (auto& a : args) {
          adopt(*a, field_type::string);
          if (a->type == field_type::bytes)
            n.type = field_type::bytes;
        }
        n.nullable = false;
        break;
      case op::abs:
        adopt(*args[0], field_type::int64);
        if (!is_number(args[0]->type))
          bad_argument(n, fname, "a number", *args[0]);
        n.type = args[0]->type;
        break;
      case op::to_int:
      case op::to_double: {
        auto& a = *args[0];
        adopt(a, field_type::int64);
        if (a.type == field_type::bytes)
          bad_argument(n, fname,
                       "a number, bool, timestamp or string", a);
        n.type = n.kind == op::to_int ? field_type::int64 : field_type::float64;
        // Text that is no number, and doubles beyond int64, give null.
        if (a.type == field_type::string
            || (n.kind == op::to_int && a.type == field_type::float64))
          n.nullable = true;
        break;
      }
      case op::to_string:
        adopt(*args[0], field_type::string);
        n.type = field_type::string;
        break;
      case op::if_:
        need_type(n, 0, fname, field_type::boolean, "a bool condition");
        unify(n, 1, "if", "branches");
        n.nullable = args[1]->nullable || args[2]->nullable;
        break;
      case op::is_null:
        adopt(*args[0], field_type::int64);
        n.type = field_type::boolean;
        n.nullable = false;
        break;
      case op::coalesce:
        unify(n, 0, "coalesce", "arguments");
        n.nullable = std::all_of(args.begin(), args.end(),
                                 [](auto& a) { return a->nullable; });
        break;
      default:
        break;
    }
  }

  // -- grammar ----------------------------------------------------------------

  node_ptr parse_or() {
    auto left = parse_and();
    while (at_keyword("or")) {
      auto& t = next();
      left = binary(op::or_, t, std::move(left), parse_and());
    }
    return left;
  }

  node_ptr parse_and() {
    auto left = parse_not();
    while (at_keyword("and")) {
      auto& t = next();
      left = binary(op::and_, t, std::move(left), parse_not());
    }
    return left;
  }

  node_ptr parse_not() {
    if (!at_keyword("not"))
      return parse_comparison();
    auto& t = next();
    nesting guard{*this, t.begin};
    auto a = parse_not();
    auto n = make(op::not_, t.begin, t.begin, a->end);
    adopt(*a, field_type::boolean);
    if (a->type != field_type::boolean)
      throw problem{n->pos, fmt::format("'not' needs a bool operand, got {}",
                                        describe(*a))};
    n->type = field_type::boolean;
    n->nullable = a->nullable;
    n->args.push_back(std::move(a));
    finish(*n);
    return n;
  }

  node_ptr parse_comparison() {
    auto left = parse_concat();
    while (peek().kind == tok::punct) {
      auto& p = peek().text;
      op kind;
      if (p == "=" || p == "==")
        kind = op::eq;
      else if (p == "!=" || p == "<>")
        kind = op::ne;
      else if (p == "<")
        kind = op::lt;
      else if (p == "<=")
        kind = op::le;
      else if (p == ">")
        kind = op::gt;
      else if (p == ">=")
        kind = op::ge;
      else
        break;
      auto& t = next();
      left = binary(kind, t, std::move(left), parse_concat());
    }
    return left;
  }

  node_ptr parse_concat() {
    auto left = parse_additive();
    while (at_punct("||")) {
      auto& t = next();
      left = binary(op::cat, t, std::move(left), parse_additive());
    }
    return left;
  }

  node_ptr parse_additive() {
    auto left = parse_multiplicative();
    while (at_punct("+") || at_punct("-")) {
      auto& t = next();
      auto kind = t.text == "+" ? op::add : op::sub;
      left = binary(kind, t, std::move(left), parse_multiplicative());
    }
    return left;
  }

  node_ptr parse_multiplicative() {
    auto left = parse_unary();
    while (at_punct("*") || at_punct("/") || at_punct("%")) {
      auto& t = next();
      auto kind = t.text == "*" ? op::mul : t.text == "/" ? op::div : op::mod;
      left = binary(kind, t, std::move(left), parse_unary());
    }
    return left;
  }

  node_ptr parse_unary() {
    if (!at_punct("-"))
      return parse_primary();
    auto& t = next();
    nesting guard{*this, t.begin};
    // A negative number is a literal (so that -9223372036854775808 is one).
    if (peek().kind == tok::integer) {
      auto& num = next();
      auto n = make(op::literal, t.begin, t.begin, num.end);
      n->lit = column{field_type::int64};
      n->lit.push_int(static_cast<int64_t>(0 - num.u));
      return n;
    }
    if (peek().kind == tok::decimal) {
      auto& num = next();
      auto n = make(op::literal, t.begin, t.begin, num.end);
      n->type = field_type::float64;
      n->lit = column{field_type::float64};
      n->lit.push_float(-num.d);
      return n;
    }
    auto a = parse_unary();
    auto n = make(op::neg, t.begin, t.begin, a->end);
    adopt(*a, field_type::int64);
    if (!is_number(a->type))
      throw problem{n->pos, fmt::format("'-' needs a number, got {}",
                                        describe(*a))};
    n->type = a->type;
    n->nullable = a->nullable;
    n->args.push_back(std::move(a));
    finish(*n);
    return n;
  }

  node_ptr parse_primary() {
    auto& t = peek();
    switch (t.kind) {
      case tok::integer: {
        if (t.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          throw problem{t.begin, fmt::format("integer {} is out of range for "
                                             "int64", t.text)};
        auto n = make(op::literal, t.begin, t.begin, t.end);
        n->lit = column{field_type::int64};
        n->lit.push_int(static_cast<int64_t>(t.u));
        next();
        return n;
      }
      case tok::decimal: {
        auto n = make(op::literal, t.begin, t.begin, t.end);
        n->type = field_type::float64;
        n->lit = column{field_type::float64};
        n->lit.push_float(t.d);
        next();
        return n;
      }
      case tok::string: {
        auto n = make(op::literal, t.begin, t.begin, t.end);
        n->type = field_type::string;
        n->lit = column{field_type::string};
        n->lit.push_str(t.text);
        next();
        return n;
      }
      case tok::quoted:
        return field_ref(next());
      case tok::ident: {
        if (at_punct("(", 1))
          return call();
        if (iequals(t.text, "true") || iequals(t.text, "false")) {
          auto n = make(op::literal, t.begin, t.begin, t.end);
          n->type = field_type::boolean;
          n->lit = column{field_type::boolean};
          n->lit.push_int(iequals(t.text, "true") ? 1 : 0);
          next();
          return n;
        }
        if (iequals(t.text, "null")) {
          auto n = make(op::literal, t.begin, t.begin, t.end);
          n->untyped = true;
          n->nullable = true;
          next();
          return n;
        }
        if (iequals(t.text, "and") || iequals(t.text, "or")
            || iequals(t.text, "not"))
          unexpected();
        return field_ref(next());
      }
      case tok::punct:
        if (t.text == "(") {
          auto& open = next();
          nesting guard{*this, open.begin};
          auto n = expression();
          if (!at_punct(")")) {
            if (at_end())
              throw problem{peek().begin,
                            fmt::format("unexpected end of expression (the '(' "
                                        "at {} is not closed)",
                                        open.begin + 1)};
            unexpected();
          }
          n->begin = open.begin;
          n->end = next().end;
          return n;
        }
        unexpected();
      case tok::end:
        unexpected();
    }
    unexpected();
  }

  node_ptr field_ref(const token& t) {
    auto index = input_.find(t.text);
    if (!index) {
      std::string names;
      size_t shown = 0;
      for (auto& f : input_.fields) {
        if (shown == 30) {
          names += fmt::format(", ... ({} in all)", input_.size());
          break;
        }
        if (shown++ > 0)
          names += ", ";
        names += f.name;
      }
      throw problem{t.begin, fmt::format("unknown field '{}' ({})",
                                         excerpt(t.text),
                                         input_.empty()
                                           ? std::string{"no fields"}
                                           : "fields: " + names)};
    }
    auto n = make(op::field, t.begin, t.begin, t.end);
    auto& f = input_.fields[*index];
    n->field = *index;
    n->type = f.type;
    n->nullable = f.nullable;
    return n;
  }

  node_ptr call() {
    auto& name = next();
    const function_info* info = nullptr;
    for (auto& f : functions)
      if (iequals(name.text, f.name))
        info = &f;
    if (info == nullptr)
      throw problem{name.begin, fmt::format("unknown function '{}'",
                                              excerpt(name.text))};
    nesting guard{*this, name.begin};
    next(); // (
    auto n = make(info->kind, name.begin, name.begin, name.end);
    if (!at_punct(")")) {
      while (true) {
        n->args.push_back(expression());
        if (at_punct(","))
          next();
        else if (at_punct(")"))
          break;
        else if (at_end())
          throw problem{peek().begin,
                        fmt::format("unexpected end of expression ({}( at {} "
                                    "is not closed)",
                                    info->name, name.begin + 1)};
        else
          unexpected();
      }
    }
    n->end = next().end;
    auto count = n->args.size();
    if (count < info->min_args || count > info->max_args) {
      std::string takes;
      if (info->max_args == many)
        takes = fmt::format("at least {} argument{}", info->min_args,
                            info->min_args == 1 ? "" : "s");
      else if (info->min_args == info->max_args)
        takes = fmt::format("{} argument{}", info->min_args,
                            info->min_args == 1 ? "" : "s");
      else
        takes = fmt::format("{} or {} arguments", info->min_args,
                            info->max_args);
      throw problem{n->pos, fmt::format("{}() takes {}, got {}", info->name,
                                        takes, count)};
    }
    type_call(*n, info->name);
    finish(*n);
    return n;
  }

  std::string_view src_;
  const schema& input_;
  std::vector<token> toks_;
  size_t at_ = 0;
  uint32_t last_end_ = 0;
  size_t nest_ = 0;
};

std::string located(const problem& p) {
  return fmt::format("at {}: {}", p.pos + 1, p.what);
}

/// Refuses an expression of no type (a null alone).
void need_type(const node& n) {
  if (n.untyped)
    throw problem{n.pos, "null alone has no type: write e.g. to_int(null) or "
                         "to_string(null)"};
}

std::string too_long(const char* what, size_t size) {
  return fmt::format("{} too long: {} bytes, at most {}", what, size,
                     max_length);
}

} // namespace

compile_result compile(std::string_view text, const schema& input) {
  compile_result out;
  if (text.size() > max_length) {
    out.problem = too_long("expression", text.size());
    return out;
  }
  try {
    auto source = std::make_shared<const std::string>(text);
    parser p{*source, input};
    if (p.at_end()) {
      out.problem = "empty expression";
      return out;
    }
    auto root = p.expression();
    if (!p.at_end())
      p.unexpected();
    need_type(*root);
    auto e = std::make_shared<compiled_expr>();
    e->begin = p.first();
    e->end = p.last_end();
    out.type = root->type;
    out.nullable = root->nullable;
    e->root = std::move(root);
    e->source = std::move(source);
    out.expr = std::move(e);
  } catch (const problem& x) {
    out.problem = located(x);
  }
  return out;
}

compile_result compile_predicate(std::string_view text, const schema& input) {
  auto out = compile(text, input);
  if (out.problem.empty() && out.type != field_type::boolean) {
    out.problem = fmt::format("a filter needs a bool expression, '{}' is {}",
                              excerpt(out.expr->text()), to_string(out.type));
    out.expr.reset();
  }
  return out;
}

select_result compile_select(std::string_view list, const schema& input) {
  select_result out;
  if (list.size() > max_length) {
    out.problem = too_long("select list", list.size());
    return out;
  }
  auto fail = [&](std::string problem) {
    out.items.clear();
    out.output.fields.clear();
    out.problem = std::move(problem);
    return out;
  };
  try {
    auto source = std::make_shared<const std::string>(list);
    parser p{*source, input};
    if (p.at_end())
      return fail("empty select list");
    std::unordered_map<std::string, size_t> item_of; // output name → item
    for (size_t item = 1;; ++item) {
      auto add = [&](std::string name, std::unique_ptr<node> root,
                     uint32_t begin, uint32_t end) {
        auto [at, fresh] = item_of.emplace(name, item);
        if (!fresh)
          throw item_problem{fmt::format("duplicate output name '{}' (items "
                                         "{} and {})",
                                         excerpt(name), at->second, item)};
        auto e = std::make_shared<compiled_expr>();
        e->source = source;
        e->begin = begin;
        e->end = end;
        select_item x;
        x.name = std::move(name);
        x.type = root->type;
        x.nullable = root->nullable;
        e->root = std::move(root);
        x.expr = std::move(e);
        out.output.fields.push_back(field{x.name, x.type, x.nullable});
        out.items.push_back(std::move(x));
      };
      if (p.at_punct("*")
          && (p.at_punct(",", 1) || p.peek(1).kind == tok::end)) {
        auto& star = p.next();
        for (size_t i = 0; i < input.size(); ++i) {
          auto n = std::make_unique<node>();
          n->kind = op::field;
          n->field = i;
          n->type = input.fields[i].type;
          n->nullable = input.fields[i].nullable;
          n->begin = star.begin;
          n->end = star.end;
          n->pos = star.begin;
          add(input.fields[i].name, std::move(n), star.begin, star.end);
        }
      } else {
        uint32_t begin = p.peek().begin;
        auto root = p.expression();
        uint32_t end = p.last_end();
        need_type(*root);
        std::string name;
        if (p.at_keyword("as")) {
          p.next();
          auto& t = p.peek();
          if (t.kind == tok::end)
            throw problem{t.begin, "unexpected end of list: a name must "
                                   "follow 'as'"};
          if (t.kind != tok::ident && t.kind != tok::quoted)
            throw problem{t.begin,
                          fmt::format("expected a name after 'as', got '{}'",
                                      excerpt(list.substr(t.begin,
                                                          t.end - t.begin)))};
          name = p.next().text;
        } else if (root->kind == op::field) {
          name = input.fields[root->field].name;
        } else {
          auto text = excerpt(list.substr(begin, end - begin));
          throw item_problem{fmt::format("item {} ('{}') needs a name: write "
                                         "'{} as NAME'",
                                         item, text, text)};
        }
        add(std::move(name), std::move(root), begin, end);
      }
      if (p.at_end())
        break;
      if (!p.at_punct(","))
        p.unexpected("list");
      p.next();
    }
  } catch (const problem& x) {
    return fail(located(x));
  } catch (const item_problem& x) {
    return fail(x.what);
  }
  return out;
}

} // namespace weir::ops::expr
