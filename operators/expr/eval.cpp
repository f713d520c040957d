// Evaluation of compiled expressions (operators/expr/expr.hpp): a node at a time
// over whole columns. Integer and double operators run as plain loops over
// the column's values, with a literal operand read as a constant (the
// templates below instantiate each loop for column/column, column/constant
// and constant/column); nulls travel as separate masks. Strings go row by
// row.
//
// Errors (overflow, division by zero) count only in the rows that are
// "active": and, or, if and coalesce evaluate an operand with a mask of the
// rows whose result depends on it, so that `n != 0 and x / n > 1` does not
// fail where n is 0. Inactive rows are still computed (loops stay simple)
// but never trap: divisors are replaced there.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "messages/record.hpp"
#include "operators/expr/expr.hpp"
#include "operators/expr/tree.hpp"
#include "operators/operator.hpp"

namespace weir::ops::expr {

namespace {

constexpr int64_t int_min = std::numeric_limits<int64_t>::min();

using mask = std::vector<uint8_t>;

/// The value of a node over a batch: a column of one value per row, or one
/// row standing for every row (a scalar: literals, and what is computed
/// from scalars alone). Fields are borrowed from the input batch.
struct val {
  const column* ref = nullptr;
  column own;
  bool scalar = false;

  const column& c() const { return ref != nullptr ? *ref : own; }
  bool is_null_scalar() const { return scalar && c().is_null(0); }
  /// The null flags of a column value, or nullptr.
  const uint8_t* nulls() const {
    auto& x = c();
    return scalar || x.nulls.empty() ? nullptr : x.nulls.data();
  }
};

val borrow(const column& c, bool scalar) {
  val v;
  v.ref = &c;
  v.scalar = scalar;
  return v;
}

val hold(column c, bool scalar) {
  val v;
  v.own = std::move(c);
  v.scalar = scalar;
  return v;
}

val null_of(field_type t) {
  column c{t};
  c.push_null();
  return hold(std::move(c), true);
}

val bool_scalar(bool b) {
  column c{field_type::boolean};
  c.push_int(b ? 1 : 0);
  return hold(std::move(c), true);
}

// -- accessors: the same loop over a column or a constant ---------------------

template <class T>
struct at_col {
  const T* p;
  T operator[](size_t i) const { return p[i]; }
};

template <class T>
struct at_one {
  T v;
  T operator[](size_t) const { return v; }
};

struct at_strs {
  const column* c;
  std::string_view operator[](size_t i) const { return c->str(i); }
};

template <class F>
decltype(auto) ints_of(const val& v, F&& f) {
  if (v.scalar)
    return f(at_one<int64_t>{v.c().ints[0]});
  return f(at_col<int64_t>{v.c().ints.data()});
}

template <class F>
decltype(auto) floats_of(const val& v, F&& f) {
  if (v.scalar)
    return f(at_one<double>{v.c().floats[0]});
  return f(at_col<double>{v.c().floats.data()});
}

template <class F>
decltype(auto) strs_of(const val& v, F&& f) {
  if (v.scalar)
    return f(at_one<std::string_view>{v.c().str(0)});
  return f(at_strs{&v.c()});
}

template <class F>
decltype(auto) ints2(const val& a, const val& b, F&& f) {
  return ints_of(a, [&](auto x) {
    return ints_of(b, [&](auto y) { return f(x, y); });
  });
}

template <class F>
decltype(auto) floats2(const val& a, const val& b, F&& f) {
  return floats_of(a, [&](auto x) {
    return floats_of(b, [&](auto y) { return f(x, y); });
  });
}

template <class F>
decltype(auto) strs2(const val& a, const val& b, F&& f) {
  return strs_of(a, [&](auto x) {
    return strs_of(b, [&](auto y) { return f(x, y); });
  });
}

/// Reads a value row by row (a scalar at every row): for the paths that go
/// row by row anyway.
struct reader {
  const column* c;
  size_t m; // 0 for a scalar

  explicit reader(const val& v) : c(&v.c()), m(v.scalar ? 0 : ~size_t{0}) {}
  size_t at(size_t i) const { return i & m; }
  bool null(size_t i) const { return c->is_null(i & m); }
  int64_t i64(size_t i) const { return c->ints[i & m]; }
  double f64(size_t i) const { return c->floats[i & m]; }
  std::string_view str(size_t i) const { return c->str(i & m); }
};

// -- nulls --------------------------------------------------------------------

/// The rows null in `a` or `b`, `rows` long (empty when neither has nulls).
mask either_null(const val& a, const val& b, size_t rows) {
  auto* x = a.nulls();
  auto* y = b.nulls();
  mask m;
  if (x != nullptr && y != nullptr) {
    m.resize(rows);
    for (size_t i = 0; i < rows; ++i)
      m[i] = (x[i] | y[i]) != 0;
  } else if (x != nullptr || y != nullptr) {
    auto* z = x != nullptr ? x : y;
    m.resize(rows);
    for (size_t i = 0; i < rows; ++i)
      m[i] = z[i] != 0;
  }
  return m;
}

mask nulls_of(const val& a, size_t rows) {
  return either_null(a, a, rows);
}

/// Marks the rows of `r` that `m` flags null (their values become 0).
void apply_nulls(column& r, mask m) {
  if (m.empty())
    return;
  if (r.type == field_type::float64) {
    for (size_t i = 0; i < m.size(); ++i)
      r.floats[i] = m[i] != 0 ? 0.0 : r.floats[i];
  } else if (!holds_chars(r.type)) {
    for (size_t i = 0; i < m.size(); ++i)
      r.ints[i] = m[i] != 0 ? 0 : r.ints[i];
  }
  r.nulls = std::move(m);
}

bool any_set(const uint8_t* m, size_t n) {
  uint8_t any = 0;
  for (size_t i = 0; i < n; ++i)
    any |= m[i];
  return any != 0;
}

// -- integer kernels ----------------------------------------------------------

/// Runs `f(x, y)` over the rows, storing the result and OR-ing the word it
/// flags an error with (bit 63) over the rows that `chk` selects (all when
/// nullptr). Returns whether a selected row flagged.
template <class A, class B, class F>
bool int_loop(A a, B b, int64_t* r, size_t n, const uint8_t* chk, F f) {
  uint64_t bad = 0;
  if (chk == nullptr) {
    for (size_t i = 0; i < n; ++i)
      bad |= f(a[i], b[i], r[i]);
  } else {
    for (size_t i = 0; i < n; ++i)
      bad |= f(a[i], b[i], r[i]) & (0 - uint64_t{chk[i]});
  }
  return (bad >> 63) != 0;
}

struct add_op {
  uint64_t operator()(int64_t x, int64_t y, int64_t& r) const {
    uint64_t s = uint64_t(x) + uint64_t(y);
    r = int64_t(s);
    return (uint64_t(x) ^ s) & (uint64_t(y) ^ s);
  }
};

struct sub_op {
  uint64_t operator()(int64_t x, int64_t y, int64_t& r) const {
    uint64_t s = uint64_t(x) - uint64_t(y);
    r = int64_t(s);
    return (uint64_t(x) ^ uint64_t(y)) & (uint64_t(x) ^ s);
  }
};

struct mul_op {
  uint64_t operator()(int64_t x, int64_t y, int64_t& r) const {
    return __builtin_mul_overflow(x, y, &r) ? ~uint64_t{0} : 0;
  }
};

/// Signed division by a constant as a multiplication (Hacker's Delight,
/// 10-1): for |d| >= 2, d != INT64_MIN.
struct divider {
  int64_t d;
  int64_t m;
  int shift;

  explicit divider(int64_t divisor) : d(divisor) {
    constexpr uint64_t two63 = uint64_t{1} << 63;
    uint64_t ad = d < 0 ? 0 - uint64_t(d) : uint64_t(d);
    uint64_t t = two63 + (uint64_t(d) >> 63);
    uint64_t anc = t - 1 - t % ad;
    int p = 63;
    uint64_t q1 = two63 / anc;
    uint64_t r1 = two63 - q1 * anc;
    uint64_t q2 = two63 / ad;
    uint64_t r2 = two63 - q2 * ad;
    uint64_t delta;
    do {
      ++p;
      q1 *= 2;
      r1 *= 2;
      if (r1 >= anc) {
        ++q1;
        r1 -= anc;
      }
      q2 *= 2;
      r2 *= 2;
      if (r2 >= ad) {
        ++q2;
        r2 -= ad;
      }
      delta = ad - r2;
    } while (q1 < delta || (q1 == delta && r1 == 0));
    m = int64_t(q2 + 1);
    if (d < 0)
      m = int64_t(0 - uint64_t(m));
    shift = p - 64;
  }

  int64_t quotient(int64_t n) const {
    auto q = uint64_t(int64_t((__int128{m} * n) >> 64));
    if (d > 0 && m < 0)
      q += uint64_t(n);
    else if (d < 0 && m > 0)
      q -= uint64_t(n);
    auto s = int64_t(q) >> shift;
    return s + int64_t(uint64_t(s) >> 63);
  }
};

/// Rows whose errors count, `rows` long: active, and null in no operand
/// (`nulls`). Empty with `all` set: every row.
struct checked_rows {
  mask m;
  bool all = false;
  size_t rows = 0;
  const uint8_t* ptr() const { return all ? nullptr : m.data(); }
  bool any() const { return all ? rows > 0 : any_set(m.data(), m.size()); }
};

/// Appends the value of `one` (a one-row column) `n` times to `out`.
void repeat(const column& one, size_t n, column& out) {
  auto before = out.size();
  if (one.is_null(0)) {
    if (out.nulls.empty())
      out.nulls.assign(before, 0);
    out.nulls.resize(before + n, 1);
    if (holds_chars(one.type))
      out.ends.resize(before + n, static_cast<uint32_t>(out.chars.size()));
    else if (one.type == field_type::float64)
      out.floats.resize(before + n, 0.0);
    else
      out.ints.resize(before + n, 0);
    return;
  }
  if (holds_chars(one.type)) {
    auto s = one.str(0);
    out.chars.reserve(out.chars.size() + s.size() * n);
    out.ends.reserve(before + n);
    for (size_t i = 0; i < n; ++i) {
      out.chars.append(s.data(), s.size());
      out.ends.push_back(static_cast<uint32_t>(out.chars.size()));
    }
  } else if (one.type == field_type::float64) {
    out.floats.resize(before + n, one.floats[0]);
  } else {
    out.ints.resize(before + n, one.ints[0]);
  }
  if (!out.nulls.empty())
    out.nulls.resize(before + n, 0);
}

/// 1 if `x` is not 0, else 0 (bools may hold any non-zero value): branch
/// free, so that loops over bools vectorize.
inline uint64_t nonzero(int64_t x) {
  return (uint64_t(x) | (0 - uint64_t(x))) >> 63;
}

/// memcpy for the short strings of most rows, without a call.
inline void copy_bytes(char* to, const char* from, size_t n) {
  if (n > 16) {
    std::memcpy(to, from, n);
    return;
  }
  for (size_t i = 0; i < n; ++i)
    to[i] = from[i];
}

/// memcmp() == 0 for the short strings of most rows, without a call.
inline bool equal_bytes(const char* a, const char* b, size_t n) {
  if (n > 16)
    return std::memcmp(a, b, n) == 0;
  unsigned char diff = 0;
  for (size_t i = 0; i < n; ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

/// Drops a null mask that flags no row (a column without nulls has none).
void tidy_nulls(column& c) {
  if (!c.nulls.empty() && !any_set(c.nulls.data(), c.nulls.size()))
    c.nulls.clear();
}

/// Appends `v`, the value of `rows` rows, to `out`.
void append_val(column& out, val v, size_t rows) {
  if (v.scalar) {
    repeat(v.c(), rows, out);
  } else if (v.ref != nullptr) {
    out.append(*v.ref);
  } else if (out.size() == 0 && out.nulls.empty() && out.type == v.own.type) {
    out = std::move(v.own);
    tidy_nulls(out);
  } else {
    out.append(v.own);
  }
}

// -- the evaluator ------------------------------------------------------------

class evaluator {
public:
  evaluator(const compiled_expr& e, const row_batch& in)
    : e_(e), in_(in), n_(in.rows) {
  }

  val eval(const node& x, const uint8_t* active) {
    switch (x.kind) {
      case op::literal:
        return borrow(x.lit, true);
      case op::field:
        return field(x);
      case op::neg:
      case op::abs:
        return negate(x, active);
      case op::not_:
        return logical_not(x, active);
      case op::add:
      case op::sub:
      case op::mul:
      case op::div:
      case op::mod:
        return arithmetic(x, active);
      case op::eq:
      case op::ne:
      case op::lt:
      case op::le:
      case op::gt:
      case op::ge:
        return compare(x, active);
      case op::and_:
      case op::or_:
        return logic(x, active);
      case op::if_:
        return choose(x, active);
      case op::coalesce:
        return coalesce(x, active);
      case op::is_null:
        return is_null(x, active);
      case op::to_int:
        return to_int(x, active);
      case op::to_double:
        return to_double(x, active);
      case op::lower:
      case op::upper:
        return change_case(x, active);
      case op::length:
        return length(x, active);
      default:
        return text_function(x, active);
    }
  }


private:
  [[noreturn]] void fail(const node& x, std::string_view what,
                         std::string_view detail = {}) const {
    auto whole = excerpt(e_.text());
    auto part = excerpt(e_.text(x));
    auto msg = fmt::format("expression '{}': {}", whole, what);
    if (part != whole)
      msg += fmt::format(" in '{}'", part);
    if (!detail.empty())
      msg += fmt::format(" ({})", detail);
    throw operator_error(msg);
  }

  size_t rows_of(const val& a) const { return a.scalar ? 1 : n_; }
  size_t rows_of(const val& a, const val& b) const {
    return a.scalar && b.scalar ? 1 : n_;
  }

  bool any_active(const uint8_t* active) const {
    return active == nullptr ? n_ > 0 : any_set(active, n_);
  }

  /// The rows, of `rows`, whose errors count: active and not null.
  checked_rows checks(const uint8_t* active, const mask& nulls,
                      size_t rows) const {
    checked_rows out;
    out.rows = rows;
    if (rows == 1 && n_ != 1) {
      // A scalar: it counts when any row is active.
      out.m.assign(1, any_active(active) && (nulls.empty() || nulls[0] == 0));
      return out;
    }
    if (active == nullptr && nulls.empty()) {
      out.all = true;
      return out;
    }
    out.m.resize(rows);
    for (size_t i = 0; i < rows; ++i)
      out.m[i] = (active == nullptr ? 1 : active[i])
                 & (nulls.empty() ? 1 : nulls[i] ^ 1);
    return out;
  }

  // -- leaves -----------------------------------------------------------------

  val field(const node& x) const {
    if (x.field >= in_.columns.size())
      fail(x, fmt::format("the batch has {} columns, the schema more",
                          in_.columns.size()));
    auto& c = in_.columns[x.field];
    if (c.type != x.type || c.size() != n_)
      fail(x, fmt::format("the batch does not fit the schema (its column {} "
                          "is {} with {} values, expected {} with {})",
                          x.field + 1, to_string(c.type), c.size(),
                          to_string(x.type), n_));
    return borrow(c, false);
  }

  // -- arithmetic -------------------------------------------------------------

  val negate(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    if (a.is_null_scalar())
      return a;
    auto rows = rows_of(a);
    auto nulls = nulls_of(a, rows);
    column r{x.type};
    bool is_abs = x.kind == op::abs;
    if (x.type == field_type::float64) {
      r.floats.resize(rows);
      auto* out = r.floats.data();
      auto* in = a.c().floats.data();
      for (size_t i = 0; i < rows; ++i)
        out[i] = is_abs ? std::fabs(in[i]) : -in[i];
    } else {
      r.ints.resize(rows);
      auto* out = r.ints.data();
      auto* in = a.c().ints.data();
      auto chk = checks(active, nulls, rows);
      bool bad = int_loop(at_col<int64_t>{in}, at_one<int64_t>{0}, out, rows,
                          chk.ptr(),
                          [is_abs](int64_t v, int64_t, int64_t& o) -> uint64_t {
                            bool flip = !is_abs || v < 0;
                            o = flip ? int64_t(0 - uint64_t(v)) : v;
                            return v == int_min ? ~uint64_t{0} : 0;
                          });
      if (bad)
        fail(x, "integer overflow",
             is_abs ? "abs(-9223372036854775808)" : "-(-9223372036854775808)");
    }
    apply_nulls(r, std::move(nulls));
    return hold(std::move(r), a.scalar);
  }

  val arithmetic(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    auto b = eval(*x.args[1], active);
    if (a.is_null_scalar() || b.is_null_scalar())
      return null_of(x.type);
    auto rows = rows_of(a, b);
    auto nulls = either_null(a, b, rows);
    column r{x.type};
    if (x.type == field_type::float64)
      float_arithmetic(x, a, b, r, rows, checks(active, nulls, rows));
    else
      int_arithmetic(x, a, b, r, rows, checks(active, nulls, rows));
    apply_nulls(r, std::move(nulls));
    return hold(std::move(r), a.scalar && b.scalar);
  }

  void int_arithmetic(const node& x, const val& a, const val& b, column& r,
                      size_t rows, const checked_rows& chk) {
    r.ints.resize(rows);
    auto* out = r.ints.data();
    auto loop = [&](auto f) {
      return ints2(a, b, [&](auto p, auto q) {
        return int_loop(p, q, out, rows, chk.ptr(), f);
      });
    };
    bool bad = false;
    const char* sign = "";
    switch (x.kind) {
      case op::add:
        bad = loop(add_op{});
        sign = "+";
        break;
      case op::sub:
        bad = loop(sub_op{});
        sign = "-";
        break;
      case op::mul:
        bad = loop(mul_op{});
        sign = "*";
        break;
      default:
        divide(x, a, b, out, rows, chk);
        return;
    }
    if (!bad)
      return;
    // The first row that overflowed, for the message.
    reader ra{a}, rb{b};
    auto* m = chk.ptr();
    for (size_t i = 0; i < rows; ++i) {
      if (m != nullptr && m[i] == 0)
        continue;
      int64_t o;
      auto p = ra.i64(i), q = rb.i64(i);
      bool over = x.kind == op::add   ? __builtin_add_overflow(p, q, &o)
                  : x.kind == op::sub ? __builtin_sub_overflow(p, q, &o)
                                      : __builtin_mul_overflow(p, q, &o);
      if (over)
        fail(x, "integer overflow", fmt::format("{} {} {}", p, sign, q));
    }
    fail(x, "integer overflow");
  }

  void divide(const node& x, const val& a, const val& b, int64_t* out,
              size_t rows, const checked_rows& chk) {
    bool mod = x.kind == op::mod;
    auto* m = chk.ptr();
    if (b.scalar) {
      int64_t d = b.c().ints[0];
      if (d == 0) {
        if (chk.any())
          fail(x, "division by zero");
        std::fill(out, out + rows, 0);
        return;
      }
      if (d == -1) {
        bool bad = ints_of(a, [&](auto p) {
          return int_loop(p, at_one<int64_t>{0}, out, rows, m,
                          [mod](int64_t v, int64_t, int64_t& o) -> uint64_t {
                            o = mod ? 0 : int64_t(0 - uint64_t(v));
                            return v == int_min ? ~uint64_t{0} : 0;
                          });
        });
        if (bad)
          fail(x, "integer overflow", "-9223372036854775808 / -1");
        return;
      }
      if (d == 1 || d == int_min) {
        ints_of(a, [&](auto p) {
          for (size_t i = 0; i < rows; ++i) {
            int64_t v = p[i];
            int64_t q = d == 1 ? v : v == int_min ? 1 : 0;
            out[i] = mod ? int64_t(uint64_t(v) - uint64_t(q) * uint64_t(d)) : q;
          }
        });
        return;
      }
      divider dv{d};
      ints_of(a, [&](auto p) {
        if (mod)
          for (size_t i = 0; i < rows; ++i)
            out[i] = p[i] - dv.quotient(p[i]) * d;
        else
          for (size_t i = 0; i < rows; ++i)
            out[i] = dv.quotient(p[i]);
      });
      return;
    }
    // A divisor per row: where it would trap (0, or -1 under INT64_MIN) it
    // is replaced by 1, and the row fails if it counts.
    uint8_t zero = 0;
    uint8_t over = 0;
    ints2(a, b, [&](auto p, auto q) {
      for (size_t i = 0; i < rows; ++i) {
        int64_t v = p[i];
        int64_t d = q[i];
        uint8_t z = d == 0;
        uint8_t o = (v == int_min) & (d == -1);
        uint8_t c = m == nullptr ? 1 : m[i];
        zero |= z & c;
        over |= o & c;
        d = (z | o) != 0 ? 1 : d;
        out[i] = mod ? v % d : v / d;
      }
    });
    if (zero == 0 && over == 0)
      return;
    reader ra{a}, rb{b};
    for (size_t i = 0; i < rows; ++i) {
      if (m != nullptr && m[i] == 0)
        continue;
      if (rb.i64(i) == 0)
        fail(x, "division by zero");
      if (rb.i64(i) == -1 && ra.i64(i) == int_min)
        fail(x, "integer overflow", "-9223372036854775808 / -1");
    }
  }

  void float_arithmetic(const node& x, const val& a, const val& b, column& r,
                        size_t rows, const checked_rows& chk) {
    r.floats.resize(rows);
    auto* out = r.floats.data();
    auto* m = chk.ptr();
    uint8_t zero = 0;
    floats2(a, b, [&](auto p, auto q) {
      switch (x.kind) {
        case op::add:
          for (size_t i = 0; i < rows; ++i)
            out[i] = p[i] + q[i];
          break;
        case op::sub:
          for (size_t i = 0; i < rows; ++i)
            out[i] = p[i] - q[i];
          break;
        case op::mul:
          for (size_t i = 0; i < rows; ++i)
            out[i] = p[i] * q[i];
          break;
        case op::div:
          for (size_t i = 0; i < rows; ++i) {
            zero |= (q[i] == 0.0) & (m == nullptr ? 1 : m[i]);
            out[i] = p[i] / q[i];
          }
          break;
        default:
          for (size_t i = 0; i < rows; ++i) {
            zero |= (q[i] == 0.0) & (m == nullptr ? 1 : m[i]);
            out[i] = std::fmod(p[i], q[i]);
          }
          break;
      }
    });
    if (zero != 0)
      fail(x, "division by zero");
  }

  // -- comparisons and logic --------------------------------------------------

  template <class A, class B>
  static void compare_loop(op k, A a, B b, int64_t* r, size_t n) {
    switch (k) {
      case op::eq:
        for (size_t i = 0; i < n; ++i)
          r[i] = a[i] == b[i];
        break;
      case op::ne:
        for (size_t i = 0; i < n; ++i)
          r[i] = a[i] != b[i];
        break;
      case op::lt:
        for (size_t i = 0; i < n; ++i)
          r[i] = a[i] < b[i];
        break;
      case op::le:
        for (size_t i = 0; i < n; ++i)
          r[i] = a[i] <= b[i];
        break;
      case op::gt:
        for (size_t i = 0; i < n; ++i)
          r[i] = a[i] > b[i];
        break;
      default:
        for (size_t i = 0; i < n; ++i)
          r[i] = a[i] >= b[i];
        break;
    }
  }

  /// `c = k` (or `c != k` when not `eq`) for each row of the column `c`.
  static void equal_to_constant(const column& c, std::string_view k, bool eq,
                                int64_t* out) {
    auto* chars = c.chars.data();
    uint32_t begin = 0;
    for (size_t i = 0; i < c.ends.size(); ++i) {
      uint32_t end = c.ends[i];
      bool same = end - begin == k.size()
                  && equal_bytes(chars + begin, k.data(), k.size());
      out[i] = same == eq;
      begin = end;
    }
  }

  val compare(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    auto b = eval(*x.args[1], active);
    if (a.is_null_scalar() || b.is_null_scalar())
      return null_of(field_type::boolean);
    auto rows = rows_of(a, b);
    column r{field_type::boolean};
    r.ints.resize(rows);
    auto* out = r.ints.data();
    auto t = x.args[0]->type;
    auto k = x.kind;
    if (t == field_type::float64)
      floats2(a, b, [&](auto p, auto q) { compare_loop(k, p, q, out, rows); });
    else if (holds_chars(t) && (k == op::eq || k == op::ne)
             && a.scalar != b.scalar)
      equal_to_constant(a.scalar ? b.c() : a.c(),
                        a.scalar ? a.c().str(0) : b.c().str(0), k == op::eq,
                        out);
    else if (holds_chars(t))
      strs2(a, b, [&](auto p, auto q) { compare_loop(k, p, q, out, rows); });
    else
      ints2(a, b, [&](auto p, auto q) { compare_loop(k, p, q, out, rows); });
    apply_nulls(r, either_null(a, b, rows));
    return hold(std::move(r), a.scalar && b.scalar);
  }

  val logical_not(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    auto rows = rows_of(a);
    column r{field_type::boolean};
    r.ints.resize(rows);
    auto* in = a.c().ints.data();
    for (size_t i = 0; i < rows; ++i)
      r.ints[i] = in[i] == 0;
    apply_nulls(r, a.scalar ? a.c().nulls : nulls_of(a, rows));
    return hold(std::move(r), a.scalar);
  }

  /// and, or: three-valued; the right side counts only in the rows the left
  /// does not decide.
  val logic(const node& x, const uint8_t* active) {
    // The value that decides alone: false for and, true for or.
    const int64_t decides = x.kind == op::and_ ? 0 : 1;
    auto a = eval(*x.args[0], active);
    mask need;
    const uint8_t* b_active = active;
    bool a_neutral = false;
    if (a.scalar) {
      if (!a.c().is_null(0) && (a.c().ints[0] != 0) == (decides != 0))
        return a;
      a_neutral = !a.c().is_null(0);
    } else if (x.args[1]->can_fail) {
      need.resize(n_);
      auto* v = a.c().ints.data();
      auto* an = a.nulls();
      auto* need_at = need.data();
      const auto flip = static_cast<uint64_t>(decides);
      if (an == nullptr && active == nullptr) {
        // Not decided: true for and, false for or.
        for (size_t i = 0; i < n_; ++i)
          need_at[i] = static_cast<uint8_t>(nonzero(v[i]) ^ flip);
      } else {
        for (size_t i = 0; i < n_; ++i) {
          uint64_t open = (nonzero(v[i]) ^ flip)
                          | (an == nullptr ? 0 : an[i] != 0);
          need_at[i] = static_cast<uint8_t>(
            open & (active == nullptr ? 1 : active[i]));
        }
      }
      size_t count = 0;
      for (size_t i = 0; i < n_; ++i)
        count += need_at[i];
      if (count == 0)
        return a;
      if (active != nullptr || count != n_)
        b_active = need.data();
    }
    auto b = eval(*x.args[1], b_active);
    if (a_neutral)
      return b;
    auto rows = rows_of(a, b);
    column r{field_type::boolean};
    r.ints.resize(rows);
    auto* an = a.nulls();
    auto* bn = b.nulls();
    if (!a.scalar && !b.scalar && an == nullptr && bn == nullptr) {
      auto* p = a.c().ints.data();
      auto* q = b.c().ints.data();
      auto* out = r.ints.data();
      if (decides == 0)
        for (size_t i = 0; i < rows; ++i)
          out[i] = static_cast<int64_t>(nonzero(p[i]) & nonzero(q[i]));
      else
        for (size_t i = 0; i < rows; ++i)
          out[i] = static_cast<int64_t>(nonzero(p[i]) | nonzero(q[i]));
      return hold(std::move(r), false);
    }
    reader ra{a}, rb{b};
    mask nulls(rows, 0);
    bool any_null = false;
    for (size_t i = 0; i < rows; ++i) {
      bool a_null = ra.null(i);
      bool b_null = rb.null(i);
      bool a_decides = !a_null && (ra.i64(i) != 0) == (decides != 0);
      bool b_decides = !b_null && (rb.i64(i) != 0) == (decides != 0);
      if (a_decides || b_decides) {
        r.ints[i] = decides;
      } else if (a_null || b_null) {
        r.ints[i] = 0;
        nulls[i] = 1;
        any_null = true;
      } else {
        r.ints[i] = 1 - decides;
      }
    }
    if (any_null)
      r.nulls = std::move(nulls);
    return hold(std::move(r), a.scalar && b.scalar);
  }

  // -- choices ----------------------------------------------------------------

  /// Row i of `x` where pick[i], else of `y` (both of type `t`).
  column pick(field_type t, const uint8_t* picks, const val& x,
              const val& y) const {
    column r{t};
    reader rx{x}, ry{y};
    if (holds_chars(t)) {
      r.ends.reserve(n_);
      for (size_t i = 0; i < n_; ++i) {
        auto& from = picks[i] != 0 ? rx : ry;
        if (from.null(i))
          r.push_null();
        else
          r.push_str(from.str(i));
      }
      return r;
    }
    if (t == field_type::float64) {
      r.floats.resize(n_);
      floats2(x, y, [&](auto p, auto q) {
        for (size_t i = 0; i < n_; ++i)
          r.floats[i] = picks[i] != 0 ? p[i] : q[i];
      });
    } else {
      r.ints.resize(n_);
      ints2(x, y, [&](auto p, auto q) {
        for (size_t i = 0; i < n_; ++i)
          r.ints[i] = picks[i] != 0 ? p[i] : q[i];
      });
    }
    bool x_nulls = x.scalar ? x.c().is_null(0) : x.nulls() != nullptr;
    bool y_nulls = y.scalar ? y.c().is_null(0) : y.nulls() != nullptr;
    if (x_nulls || y_nulls) {
      r.nulls.resize(n_);
      for (size_t i = 0; i < n_; ++i)
        r.nulls[i] = picks[i] != 0 ? rx.null(i) : ry.null(i);
    }
    return r;
  }

  val choose(const node& x, const uint8_t* active) {
    auto c = eval(*x.args[0], active);
    if (c.scalar) {
      bool yes = !c.c().is_null(0) && c.c().ints[0] != 0;
      return eval(*x.args[yes ? 1 : 2], active);
    }
    mask yes(n_), then_rows(n_), else_rows(n_);
    auto* v = c.c().ints.data();
    auto* cn = c.nulls();
    uint8_t any_then = 0;
    uint8_t any_else = 0;
    for (size_t i = 0; i < n_; ++i) {
      yes[i] = (v[i] != 0) & (cn == nullptr || cn[i] == 0);
      uint8_t act = active == nullptr ? 1 : active[i];
      then_rows[i] = act & yes[i];
      else_rows[i] = act & (yes[i] ^ 1);
      any_then |= then_rows[i];
      any_else |= else_rows[i];
    }
    auto a = any_then != 0 ? eval(*x.args[1], then_rows.data())
                           : null_of(x.type);
    auto b = any_else != 0 ? eval(*x.args[2], else_rows.data())
                           : null_of(x.type);
    if (any_else == 0)
      return a;
    if (any_then == 0)
      return b;
    return hold(pick(x.type, yes.data(), a, b), false);
  }

  val coalesce(const node& x, const uint8_t* active) {
    auto acc = eval(*x.args[0], active);
    for (size_t k = 1; k < x.args.size(); ++k) {
      if (acc.scalar) {
        if (!acc.c().is_null(0))
          return acc;
        acc = eval(*x.args[k], active);
        continue;
      }
      auto* an = acc.nulls();
      if (an == nullptr)
        return acc;
      mask rest(n_), present(n_);
      uint8_t any = 0;
      for (size_t i = 0; i < n_; ++i) {
        present[i] = an[i] == 0;
        rest[i] = (active == nullptr ? 1 : active[i]) & (an[i] != 0);
        any |= rest[i];
      }
      if (any == 0)
        return acc;
      auto next = eval(*x.args[k], rest.data());
      acc = hold(pick(x.type, present.data(), acc, next), false);
    }
    return acc;
  }

  val is_null(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    if (a.scalar)
      return bool_scalar(a.c().is_null(0));
    column r{field_type::boolean};
    auto* an = a.nulls();
    r.ints.resize(n_);
    for (size_t i = 0; i < n_; ++i)
      r.ints[i] = an != nullptr && an[i] != 0;
    return hold(std::move(r), false);
  }

  // -- conversions ------------------------------------------------------------

  static std::string_view trimmed(std::string_view s) {
    while (!s.empty() && is_space(s.front()))
      s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
      s.remove_suffix(1);
    return s;
  }

  /// The number that `s` is in full (white space around it allowed).
  template <class T>
  static std::optional<T> parse_number(std::string_view s) {
    s = trimmed(s);
    if (s.size() > 1 && s[0] == '+' && s[1] != '-')
      s.remove_prefix(1);
    T value{};
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc{} || p != s.data() + s.size())
      return std::nullopt;
    return value;
  }

  /// Appends the number each string of `c` is to `r`, or null.
  template <class T>
  static void parse_each(const column& c, column& r) {
    r.reserve(c.size());
    for (size_t i = 0; i < c.size(); ++i) {
      std::optional<T> v;
      if (!c.is_null(i))
        v = parse_number<T>(c.str(i));
      if (!v)
        r.push_null();
      else if constexpr (std::is_same_v<T, double>)
        r.push_float(*v);
      else
        r.push_int(*v);
    }
  }

  val to_int(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    auto t = x.args[0]->type;
    if (t == field_type::int64)
      return a;
    auto& c = a.c();
    auto rows = c.size();
    column r{field_type::int64};
    if (t == field_type::float64) {
      r.ints.resize(rows);
      mask nulls = c.nulls;
      for (size_t i = 0; i < rows; ++i) {
        double d = c.floats[i];
        // In range (NaN is not): a whole number of int64 after truncation.
        bool ok = d >= -9223372036854775808.0 && d < 9223372036854775808.0;
        r.ints[i] = ok ? int64_t(d) : 0;
        if (!ok && !c.is_null(i)) {
          nulls.resize(rows, 0);
          nulls[i] = 1;
        }
      }
      r.nulls = std::move(nulls);
    } else if (holds_chars(t)) {
      parse_each<int64_t>(c, r);
    } else {
      // bool (0, 1), timestamp (milliseconds)
      r.ints = c.ints;
      r.nulls = c.nulls;
    }
    return hold(std::move(r), a.scalar);
  }

  val to_double(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    auto t = x.args[0]->type;
    if (t == field_type::float64)
      return a;
    auto& c = a.c();
    auto rows = c.size();
    column r{field_type::float64};
    if (holds_chars(t)) {
      parse_each<double>(c, r);
    } else {
      r.floats.resize(rows);
      auto* in = c.ints.data();
      for (size_t i = 0; i < rows; ++i)
        r.floats[i] = static_cast<double>(in[i]);
      r.nulls = c.nulls;
    }
    return hold(std::move(r), a.scalar);
  }

  // -- strings ----------------------------------------------------------------

  val change_case(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    column r = a.c();
    r.type = x.type;
    char from = x.kind == op::lower ? 'A' : 'a';
    for (auto& ch : r.chars) {
      bool change = static_cast<unsigned char>(ch - from) < 26;
      ch = static_cast<char>(change ? ch ^ 0x20 : ch);
    }
    return hold(std::move(r), a.scalar);
  }

  static size_t count_chars(std::string_view s) {
    size_t k = 0;
    for (char c : s)
      k += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return k;
  }

  /// The byte offset of character `k` of `s` (its size past the end).
  static size_t char_offset(std::string_view s, size_t k) {
    size_t seen = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
        continue;
      if (seen++ == k)
        return i;
    }
    return s.size();
  }

  val length(const node& x, const uint8_t* active) {
    auto a = eval(*x.args[0], active);
    auto& c = a.c();
    auto rows = c.size();
    column r{field_type::int64};
    r.ints.resize(rows);
    bool chars = x.args[0]->type == field_type::string;
    uint32_t begin = 0;
    for (size_t i = 0; i < rows; ++i) {
      auto end = c.ends[i];
      r.ints[i] = chars ? count_chars({c.chars.data() + begin, end - begin})
                        : end - begin;
      begin = end;
    }
    r.nulls = c.nulls;
    return hold(std::move(r), a.scalar);
  }

  /// substr(s, start[, len]) in characters of a string, bytes of bytes.
  static std::string_view substring(std::string_view s, bool chars,
                                    int64_t start,
                                    std::optional<int64_t> len) {
    auto size = static_cast<int64_t>(chars ? count_chars(s) : s.size());
    if (start < 0)
      start = std::max<int64_t>(0, size + std::max<int64_t>(start, -size));
    if (start >= size || (len && *len <= 0))
      return {};
    int64_t stop = len && *len < size - start ? start + *len : size;
    auto offset = [&](int64_t k) {
      return chars ? char_offset(s, static_cast<size_t>(k))
                   : static_cast<size_t>(k);
    };
    auto b = offset(start);
    return s.substr(b, offset(stop) - b);
  }

  /// The functions that go row by row: trim, substr, contains, starts_with,
  /// ends_with, concat, ||, to_string.
  val text_function(const node& x, const uint8_t* active) {
    std::vector<val> args;
    args.reserve(x.args.size());
    bool scalar = true;
    for (auto& a : x.args) {
      args.push_back(eval(*a, active));
      scalar = scalar && args.back().scalar;
    }
    if (x.kind == op::to_string && x.args[0]->type == field_type::string)
      return std::move(args[0]);
    auto rows = scalar ? 1 : n_;
    std::vector<reader> in;
    for (auto& a : args)
      in.emplace_back(a);
    auto any_null = [&](size_t i) {
      for (auto& r : in)
        if (r.null(i))
          return true;
      return false;
    };
    column r{x.type};
    r.reserve(rows);
    switch (x.kind) {
      case op::contains:
      case op::starts_with:
      case op::ends_with:
        for (size_t i = 0; i < rows; ++i) {
          if (any_null(i)) {
            r.push_null();
            continue;
          }
          auto s = in[0].str(i);
          auto t = in[1].str(i);
          bool yes = x.kind == op::contains ? s.find(t) != s.npos
                     : x.kind == op::starts_with
                       ? s.substr(0, t.size()) == t
                       : s.size() >= t.size()
                           && s.substr(s.size() - t.size()) == t;
          r.push_int(yes ? 1 : 0);
        }
        break;
      case op::concat:
        for (size_t i = 0; i < rows; ++i) {
          for (auto& a : in)
            append_value_text(r.chars, *a.c, a.at(i));
          r.ends.push_back(static_cast<uint32_t>(r.chars.size()));
        }
        break;
      case op::to_string:
        for (size_t i = 0; i < rows; ++i) {
          if (any_null(i)) {
            r.push_null();
            continue;
          }
          append_value_text(r.chars, *in[0].c, in[0].at(i));
          r.ends.push_back(static_cast<uint32_t>(r.chars.size()));
          if (!r.nulls.empty())
            r.nulls.push_back(0);
        }
        break;
      default:
        for (size_t i = 0; i < rows; ++i) {
          if (any_null(i)) {
            r.push_null();
            continue;
          }
          auto s = in[0].str(i);
          if (x.kind == op::cat) {
            auto t = in[1].str(i);
            r.chars.append(s.data(), s.size());
            r.push_str(t);
          } else if (x.kind == op::trim) {
            r.push_str(trimmed(s));
          } else {
            std::optional<int64_t> len;
            if (in.size() > 2)
              len = in[2].i64(i);
            r.push_str(substring(s, x.args[0]->type == field_type::string,
                                 in[1].i64(i), len));
          }
        }
        break;
    }
    if (holds_chars(r.type)
        && r.chars.size() > std::numeric_limits<uint32_t>::max())
      fail(x, "strings of more than 4 GiB in one batch");
    return hold(std::move(r), scalar);
  }

  const compiled_expr& e_;
  const row_batch& in_;
  size_t n_;
};

/// Event times: appends those of rows `rows` of `in` to `out` (which has
/// `before` rows so far).
void append_times(row_batch& out, size_t before, const row_batch& in,
                  const std::vector<uint32_t>* rows) {
  if (in.times.empty() && out.times.empty())
    return;
  out.times.resize(before, 0);
  if (in.times.empty()) {
    out.times.resize(before + (rows ? rows->size() : in.rows), 0);
  } else if (rows == nullptr) {
    out.times.insert(out.times.end(), in.times.begin(), in.times.end());
  } else {
    for (auto i : *rows)
      out.times.push_back(in.times[i]);
  }
}

} // namespace

void evaluate(const compiled_expr& e, const row_batch& in, column& out) {
  evaluator ev{e, in};
  auto v = ev.eval(*e.root, nullptr);
  if (!v.scalar && v.ref != nullptr) {
    out = *v.ref;
  } else {
    out.clear();
    out.type = e.root->type;
    append_val(out, std::move(v), in.rows);
  }
  tidy_nulls(out);
}

std::vector<uint32_t> select_rows(const compiled_expr& predicate,
                                  const row_batch& in) {
  if (predicate.root->type != field_type::boolean)
    throw operator_error(fmt::format("expression '{}': is {}, not a bool",
                                     excerpt(predicate.text()),
                                     to_string(predicate.root->type)));
  evaluator ev{predicate, in};
  auto v = ev.eval(*predicate.root, nullptr);
  std::vector<uint32_t> out;
  auto n = in.rows;
  if (v.scalar) {
    if (!v.c().is_null(0) && v.c().ints[0] != 0) {
      out.resize(n);
      for (size_t i = 0; i < n; ++i)
        out[i] = static_cast<uint32_t>(i);
    }
    return out;
  }
  out.resize(n);
  auto* vals = v.c().ints.data();
  auto* nulls = v.nulls();
  size_t k = 0;
  if (nulls == nullptr) {
    for (size_t i = 0; i < n; ++i) {
      out[k] = static_cast<uint32_t>(i);
      k += vals[i] != 0;
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      out[k] = static_cast<uint32_t>(i);
      k += (vals[i] != 0) & (nulls[i] == 0);
    }
  }
  out.resize(k);
  return out;
}

void gather(const row_batch& in, const std::vector<uint32_t>& rows,
            row_batch& out) {
  if (out.columns.empty() && out.rows == 0)
    for (auto& c : in.columns)
      out.columns.emplace_back(c.type);
  auto k = rows.size();
  for (size_t c = 0; c < in.columns.size() && c < out.columns.size(); ++c) {
    auto& src = in.columns[c];
    auto& dst = out.columns[c];
    auto before = dst.size();
    if (holds_chars(src.type)) {
      auto* ends = src.ends.data();
      size_t total = 0;
      for (auto i : rows)
        total += ends[i] - (i == 0 ? 0 : ends[i - 1]);
      auto at = dst.chars.size();
      dst.chars.resize(at + total);
      dst.ends.resize(before + k);
      auto* from = src.chars.data();
      auto* to = dst.chars.data();
      auto* to_ends = dst.ends.data() + before;
      for (size_t j = 0; j < k; ++j) {
        auto i = rows[j];
        uint32_t begin = i == 0 ? 0 : ends[i - 1];
        copy_bytes(to + at, from + begin, ends[i] - begin);
        at += ends[i] - begin;
        to_ends[j] = static_cast<uint32_t>(at);
      }
    } else if (src.type == field_type::float64) {
      dst.floats.resize(before + k);
      auto* o = dst.floats.data() + before;
      for (size_t j = 0; j < k; ++j)
        o[j] = src.floats[rows[j]];
    } else {
      dst.ints.resize(before + k);
      auto* o = dst.ints.data() + before;
      for (size_t j = 0; j < k; ++j)
        o[j] = src.ints[rows[j]];
    }
    if (!src.nulls.empty() || !dst.nulls.empty()) {
      dst.nulls.resize(before, 0);
      if (src.nulls.empty())
        dst.nulls.resize(before + k, 0);
      else
        for (auto i : rows)
          dst.nulls.push_back(src.nulls[i]);
    }
  }
  append_times(out, out.rows, in, &rows);
  out.rows += k;
}

void filter(const compiled_expr& predicate, const row_batch& in,
            row_batch& out) {
  auto rows = select_rows(predicate, in);
  if (rows.size() == in.rows && in.rows > 0
      && (!out.columns.empty() || out.rows > 0))
    out.append(in);
  else if (!rows.empty())
    gather(in, rows, out);
}

void evaluate_select(const select_result& select, const row_batch& in,
                     row_batch& out) {
  if (!select.problem.empty())
    throw operator_error("select: " + select.problem);
  if (out.columns.empty() && out.rows == 0)
    out.reset(select.output);
  if (out.columns.size() != select.items.size())
    throw operator_error(fmt::format("select: the output batch has {} "
                                     "columns, the select list {} items",
                                     out.columns.size(), select.items.size()));
  // All values first: a failing item leaves `out` as it was.
  std::vector<val> values;
  values.reserve(select.items.size());
  for (size_t k = 0; k < select.items.size(); ++k) {
    auto& e = *select.items[k].expr;
    if (out.columns[k].type != e.root->type)
      throw operator_error(fmt::format("select: output column {} is {}, item "
                                       "'{}' is {}",
                                       k + 1, to_string(out.columns[k].type),
                                       select.items[k].name,
                                       to_string(e.root->type)));
    values.push_back(evaluator{e, in}.eval(*e.root, nullptr));
  }
  auto before = out.rows;
  for (size_t k = 0; k < values.size(); ++k)
    append_val(out.columns[k], std::move(values[k]), in.rows);
  append_times(out, before, in, nullptr);
  out.rows += in.rows;
}

} // namespace weir::ops::expr
