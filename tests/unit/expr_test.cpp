// The expression engine of filter, map and project (operators/expr/expr.hpp).

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "messages/record.hpp"
#include "operators/expr/expr.hpp"
#include "operators/operator.hpp"

using namespace weir;
using namespace weir::ops::expr;

namespace {

constexpr int64_t int_min = std::numeric_limits<int64_t>::min();
constexpr int64_t int_max = std::numeric_limits<int64_t>::max();

using opt_int = std::optional<int64_t>;
using opt_double = std::optional<double>;
using opt_str = std::optional<std::string>;

column ints(std::vector<opt_int> values, field_type t = field_type::int64) {
  column c{t};
  for (auto& v : values)
    v ? c.push_int(*v) : c.push_null();
  return c;
}

column bools(std::vector<std::optional<bool>> values) {
  column c{field_type::boolean};
  for (auto& v : values)
    v ? c.push_int(*v ? 1 : 0) : c.push_null();
  return c;
}

column doubles(std::vector<opt_double> values) {
  column c{field_type::float64};
  for (auto& v : values)
    v ? c.push_float(*v) : c.push_null();
  return c;
}

column strs(std::vector<opt_str> values, field_type t = field_type::string) {
  column c{t};
  for (auto& v : values)
    v ? c.push_str(*v) : c.push_null();
  return c;
}

schema parse(std::string_view text) {
  auto s = parse_schema(text);
  REQUIRE(s.problem == "");
  return s.value;
}

/// Four rows of every type; the fields ending in '?' hold nulls.
schema sample_schema() {
  return parse("i: int64?, j: int64, d: double?, s: string?, u: string, "
               "f: bool?, ts: timestamp, raw: bytes, g: bool");
}

row_batch sample() {
  row_batch b;
  b.columns.push_back(ints({1, 2, std::nullopt, -4}));
  b.columns.push_back(ints({10, 0, 3, 5}));
  b.columns.push_back(doubles({1.5, std::nullopt, -2.25, 0.0}));
  b.columns.push_back(strs({"Hello", "h\xc3\xa9llo w\xc3\xb6rld", std::nullopt,
                            "  pad  "}));
  b.columns.push_back(strs({"GET", "POST", "GET", "get"}));
  b.columns.push_back(bools({true, false, std::nullopt, true}));
  b.columns.push_back(ints({1000, 2000, 3000, 4000}, field_type::timestamp));
  b.columns.push_back(strs({std::string{"\0\x01", 2}, "ab", "", "zz"},
                           field_type::bytes));
  b.columns.push_back(bools({true, true, false, false}));
  b.rows = 4;
  REQUIRE(b.conforms_to(sample_schema()));
  return b;
}

/// A column as "v1,v2,..." (null as "null"; values as the text sinks write
/// them).
std::string show(const column& c) {
  std::string out;
  for (size_t i = 0; i < c.size(); ++i) {
    if (i > 0)
      out += ',';
    if (c.is_null(i))
      out += "null";
    else
      append_value_text(out, c, i);
  }
  return out;
}

compile_result compiled(std::string_view text,
                        const schema& s = sample_schema()) {
  auto r = compile(text, s);
  INFO(text);
  REQUIRE(r.problem == "");
  REQUIRE(bool(r.expr));
  return r;
}

column eval(std::string_view text, const row_batch& b = sample(),
            const schema& s = sample_schema()) {
  auto r = compiled(text, s);
  column out;
  evaluate(*r.expr, b, out);
  INFO(text);
  CHECK(out.type == r.type);
  CHECK(out.size() == b.rows);
  if (!r.nullable)
    CHECK(out.nulls.empty());
  return out;
}

/// The value of `text` over the sample, shown.
std::string value(std::string_view text) {
  return show(eval(text));
}

std::string problem(std::string_view text, const schema& s = sample_schema()) {
  auto r = compile(text, s);
  CHECK_FALSE(bool(r.expr));
  return r.problem;
}

/// The message of the operator_error evaluating `text` throws.
std::string failure(std::string_view text, const row_batch& b = sample(),
                    const schema& s = sample_schema()) {
  auto r = compiled(text, s);
  column out;
  try {
    evaluate(*r.expr, b, out);
  } catch (const weir::ops::operator_error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string type_of(std::string_view text) {
  auto r = compiled(text);
  return std::string{to_string(r.type)} + (r.nullable ? "?" : "");
}

schema logs_schema() {
  return parse("user: string, method: string, status: int64, bytes: int64");
}

row_batch logs() {
  row_batch b;
  b.columns.push_back(strs({"ann", "bob", "cy", "dee", "eve"}));
  b.columns.push_back(strs({"GET", "GET", "POST", "GET", "get"}));
  b.columns.push_back(ints({200, 404, 500, 503, 404}));
  b.columns.push_back(ints({512, 0, 128, 64, 32}));
  b.rows = 5;
  b.times = {10, 20, 30, 40, 50};
  return b;
}

} // namespace

TEST_CASE("literals") {
  CHECK(value("42") == "42,42,42,42");
  CHECK(type_of("42") == "int64");
  CHECK(value("1.5") == "1.5,1.5,1.5,1.5");
  CHECK(value("1e3") == "1000,1000,1000,1000");
  CHECK(type_of("1e3") == "double");
  CHECK(type_of(".5") == "double");
  CHECK(value("-9223372036854775808") == "-9223372036854775808,"
                                         "-9223372036854775808,"
                                         "-9223372036854775808,"
                                         "-9223372036854775808");
  CHECK(value("'it\\'s'") == "it's,it's,it's,it's");
  CHECK(value("\"say \\\"hi\\\"\"") == "say \"hi\",say \"hi\",say \"hi\","
                                       "say \"hi\"");
  CHECK(show(eval("'a\\tb\\\\c\\x41\\n'")).substr(0, 8) == "a\tb\\cA\n,");
  CHECK(value("true") == "true,true,true,true");
  CHECK(value("FALSE") == "false,false,false,false");
  CHECK(type_of("true") == "bool");
  CHECK(value("to_int(null)") == "null,null,null,null");
  CHECK(type_of("to_string(NULL)") == "string?");
  // Literals alone stay one value until the end.
  auto empty = sample();
  empty.clear();
  CHECK(eval("1 + 2", empty).size() == 0);
}

TEST_CASE("field names") {
  CHECK(value("i") == "1,2,null,-4");
  CHECK(type_of("i") == "int64?");
  CHECK(type_of("j") == "int64");
  CHECK(value("`j`") == "10,0,3,5");
  schema s{{field{"odd name", field_type::int64},
            field{"back`tick", field_type::string}}};
  row_batch b{s};
  b.columns[0].push_int(7);
  b.columns[1].push_str("x");
  b.rows = 1;
  CHECK(show(eval("`odd name` * 2", b, s)) == "14");
  CHECK(show(eval("`back``tick`", b, s)) == "x");
}

TEST_CASE("arithmetic on int64") {
  CHECK(value("i + j") == "11,2,null,1");
  CHECK(value("j - i") == "9,-2,null,9");
  CHECK(value("i * j") == "10,0,null,-20");
  CHECK(value("j / 2") == "5,0,1,2");
  CHECK(value("j % 3") == "1,0,0,2");
  CHECK(value("-i") == "-1,-2,null,4");
  CHECK(value("- -j") == "10,0,3,5");
  CHECK(value("1 + 2 * 3") == "7,7,7,7");
  CHECK(value("(1 + 2) * 3") == "9,9,9,9");
  CHECK(value("10 - 4 - 3") == "3,3,3,3");
  CHECK(value("-7 / 2") == "-3,-3,-3,-3");
  CHECK(value("-7 % 3") == "-1,-1,-1,-1");
  CHECK(value("7 % -3") == "1,1,1,1");
  CHECK(failure("i / j") == "expression 'i / j': division by zero");
  CHECK(value("j / i") == "10,0,null,-1");
  CHECK(value("j % i") == "0,0,null,1");
  CHECK(value("i + null") == "null,null,null,null");
  CHECK(type_of("i + j") == "int64?");
  CHECK(type_of("j * 2") == "int64");
  CHECK(type_of("null * 2") == "int64?");
}

TEST_CASE("arithmetic on doubles") {
  CHECK(value("d + 1") == "2.5,null,-1.25,1");
  CHECK(type_of("d + 1") == "double?");
  CHECK(type_of("j * 0.5") == "double");
  CHECK(value("j * 0.5") == "5,0,1.5,2.5");
  CHECK(value("j / 4.0") == "2.5,0,0.75,1.25");
  CHECK(value("-d") == "-1.5,null,2.25,-0");
  CHECK(value("d % 1") == "0.5,null,-0.25,0");
  CHECK(value("i - d") == "-0.5,null,null,-4");
}

TEST_CASE("division by a constant matches the hardware's") {
  std::vector<int64_t> values = {int_min, int_min + 1, -1000000000000000000,
                                 -1001, -1000, -999, -7, -1, 0, 1, 6, 7, 999,
                                 1000, 1001, 4611686018427387904, int_max - 1,
                                 int_max};
  std::mt19937_64 random{42};
  for (int k = 0; k < 400; ++k) {
    auto v = static_cast<int64_t>(random());
    values.push_back(v);
    values.push_back(v >> (k % 63));
  }
  row_batch b;
  b.columns.push_back(column{field_type::int64});
  for (auto v : values)
    b.columns[0].push_int(v);
  b.rows = values.size();
  auto s = parse("v: int64");
  std::vector<int64_t> divisors = {2, 3, 5, 7, 10, 60, 641, 1000, 1024,
                                   86400000, 1000000007, int64_t{1} << 40,
                                   int_max, int_min, -2, -3, -7, -1000,
                                   -int_max, 1};
  for (int k = 0; k < 40; ++k)
    divisors.push_back(static_cast<int64_t>(random()) >> (k % 62));
  for (auto d : divisors) {
    if (d == 0 || d == -1)
      continue;
    auto lit = d == int_min ? std::string{"-9223372036854775808"}
                            : std::to_string(d);
    auto q = eval("v / " + lit, b, s);
    auto r = eval("v % " + lit, b, s);
    for (size_t i = 0; i < values.size(); ++i) {
      INFO(values[i], " / ", d);
      REQUIRE(q.ints[i] == values[i] / d);
      REQUIRE(r.ints[i] == values[i] % d);
    }
  }
  // -1 divides all but INT64_MIN.
  CHECK(show(eval("j / -1")) == "-10,0,-3,-5");
  CHECK(show(eval("j % -1")) == "0,0,0,0");
}

TEST_CASE("integer overflow and division by zero") {
  auto s = parse("a: int64, b: int64?, n: int64, bytes: int64");
  row_batch big;
  big.columns.push_back(ints({1, int_max}));
  big.columns.push_back(ints({std::nullopt, 1}));
  big.columns.push_back(ints({2, 0}));
  big.columns.push_back(ints({10, 20}));
  big.rows = 2;
  CHECK(failure("a + b", big, s)
        == "expression 'a + b': integer overflow (9223372036854775807 + 1)");
  CHECK(failure("a + 1", big, s)
        == "expression 'a + 1': integer overflow (9223372036854775807 + 1)");
  CHECK(failure("-a - 2", big, s)
        == "expression '-a - 2': integer overflow (-9223372036854775807 - 2)");
  CHECK(failure("a * 2", big, s)
        == "expression 'a * 2': integer overflow (9223372036854775807 * 2)");
  CHECK(failure("if(a > 1, a * a, 0)", big, s)
        == "expression 'if(a > 1, a * a, 0)': integer overflow in 'a * a' "
           "(9223372036854775807 * 9223372036854775807)");
  CHECK(failure("bytes / n", big, s)
        == "expression 'bytes / n': division by zero");
  CHECK(failure("bytes % n", big, s)
        == "expression 'bytes % n': division by zero");
  CHECK(failure("bytes / 0", big, s)
        == "expression 'bytes / 0': division by zero");
  CHECK(failure("to_double(bytes) / n", big, s)
        == "expression 'to_double(bytes) / n': division by zero");
  CHECK(failure("bytes / 0.0", big, s)
        == "expression 'bytes / 0.0': division by zero");
  CHECK(failure("1 / 0", big, s) == "expression '1 / 0': division by zero");
  CHECK(failure("abs(-a - 1)", big, s)
        == "expression 'abs(-a - 1)': integer overflow "
           "(abs(-9223372036854775808))");
  CHECK(failure("-(-a - 1)", big, s)
        == "expression '-(-a - 1)': integer overflow "
           "(-(-9223372036854775808))");
  CHECK(failure("(-a - 1) / -1", big, s)
        == "expression '(-a - 1) / -1': integer overflow "
           "(-9223372036854775808 / -1)");
  CHECK(failure("(-a - 1) / (n - 1)", big, s)
        == "expression '(-a - 1) / (n - 1)': integer overflow "
           "(-9223372036854775808 / -1)");
  // Null rows do not overflow or divide.
  auto s2 = parse("x: int64?, y: int64");
  row_batch b2;
  b2.columns.push_back(ints({std::nullopt, 5}));
  b2.columns.push_back(ints({int_min, 1}));
  b2.rows = 2;
  CHECK(show(eval("x - y", b2, s2)) == "null,4");
  CHECK(show(eval("y / x", b2, s2)) == "null,0");
  CHECK(show(eval("a / b", big, s)) == "null,9223372036854775807");
  CHECK(show(eval("bytes / if(n = 0, null, n)", big, s)) == "5,null");
  // Nor do the rows a condition excludes.
  CHECK(show(eval("n != 0 and bytes / n > 2", big, s)) == "true,false");
  CHECK(show(eval("n = 0 or bytes / n > 2", big, s)) == "true,true");
  CHECK(show(eval("if(n = 0, -1, bytes / n)", big, s)) == "5,-1");
  CHECK(show(eval("if(n != 0, bytes % n, -1)", big, s)) == "0,-1");
  CHECK(show(eval("if(a < 10, a + 1, a)", big, s))
        == "2,9223372036854775807");
  CHECK(show(eval("coalesce(b, a * a)", big, s)) == "1,1");
  CHECK(show(eval("if(false, 1 / 0, 2)", big, s)) == "2,2");
  CHECK(show(eval("(b > 5 or a = 1) and bytes / n > 1", big, s))
        == "true,false");
  CHECK(show(eval("b > 5 and bytes / n > 1", big, s)) == "null,false");
  CHECK(show(eval("b < 5 or n = 0 or bytes % n = 0", big, s)) == "true,true");
  CHECK(show(eval("if(n = 0, 0, if(b > 0, bytes / n, -bytes))", big, s))
        == "-10,0");
  CHECK(show(eval("coalesce(b, if(n > 0, bytes / n, null), 7)", big, s))
        == "5,1");
  CHECK(failure("b < 5 and bytes / n > 1", big, s)
        == "expression 'b < 5 and bytes / n > 1': division by zero in "
           "'bytes / n'");
  auto empty = big;
  empty.clear();
  CHECK(eval("1 / 0", empty, s).size() == 0);
}

TEST_CASE("comparisons") {
  CHECK(value("j = 10") == "true,false,false,false");
  CHECK(value("j == 10") == "true,false,false,false");
  CHECK(value("j != 10") == "false,true,true,true");
  CHECK(value("j <> 10") == "false,true,true,true");
  CHECK(value("j < 3") == "false,true,false,false");
  CHECK(value("j <= 3") == "false,true,true,false");
  CHECK(value("j > 3") == "true,false,false,true");
  CHECK(value("j >= 3") == "true,false,true,true");
  CHECK(value("3 < j") == "true,false,false,true");
  CHECK(value("i < j") == "true,false,null,true");
  CHECK(value("d > 0") == "true,null,false,false");
  CHECK(value("d >= i") == "true,null,null,true");
  CHECK(value("j = 10.0") == "true,false,false,false");
  CHECK(value("u = 'GET'") == "true,false,true,false");
  CHECK(value("'GET' = u") == "true,false,true,false");
  CHECK(value("u < 'GET'") == "false,false,false,false");
  CHECK(value("u > 'GET'") == "false,true,false,true");
  CHECK(value("s = u") == "false,false,null,false");
  CHECK(value("s >= 'H'") == "true,true,null,false");
  CHECK(value("raw = 'ab'") == "false,true,false,false");
  CHECK(value("f = true") == "true,false,null,true");
  CHECK(value("f < g") == "false,true,null,false");
  CHECK(value("ts > ts - 1") == "true,true,true,true");
  CHECK(value("ts = ts + 1000 - 1000") == "true,true,true,true");
  CHECK(value("i = null") == "null,null,null,null");
  CHECK(type_of("i = j") == "bool?");
  CHECK(type_of("u = 'x'") == "bool");
}

TEST_CASE("and, or and not are three-valued") {
  auto s = parse("p: bool?, q: bool?");
  row_batch b;
  std::vector<std::optional<bool>> v = {true, false, std::nullopt};
  std::vector<std::optional<bool>> ps, qs;
  for (auto p : v)
    for (auto q : v) {
      ps.push_back(p);
      qs.push_back(q);
    }
  b.columns.push_back(bools(ps));
  b.columns.push_back(bools(qs));
  b.rows = 9;
  // p: T T T F F F N N N; q: T F N T F N T F N
  CHECK(show(eval("p and q", b, s))
        == "true,false,null,false,false,false,null,false,null");
  CHECK(show(eval("p or q", b, s))
        == "true,true,true,true,false,null,true,null,null");
  CHECK(show(eval("not p", b, s))
        == "false,false,false,true,true,true,null,null,null");
  CHECK(show(eval("p and true", b, s))
        == "true,true,true,false,false,false,null,null,null");
  CHECK(show(eval("p and null", b, s))
        == "null,null,null,false,false,false,null,null,null");
  CHECK(show(eval("null or p", b, s))
        == "true,true,true,null,null,null,null,null,null");
  CHECK(show(eval("false and p", b, s))
        == "false,false,false,false,false,false,false,false,false");
  CHECK(show(eval("true or p", b, s))
        == "true,true,true,true,true,true,true,true,true");
  CHECK(value("not true") == "false,false,false,false");
  CHECK(value("NOT g AND true OR false") == "false,false,true,true");
  // not binds looser than comparisons, and than or.
  CHECK(value("not j = 10") == "false,true,true,true");
  CHECK(value("g or g and false") == "true,true,false,false");
  CHECK(value("(g or g) and false") == "false,false,false,false");
  CHECK(type_of("g and g") == "bool");
  CHECK(type_of("g and f") == "bool?");
}

TEST_CASE("string operators and functions") {
  CHECK(value("u || '!'") == "GET!,POST!,GET!,get!");
  CHECK(value("s || u") == "HelloGET,h\xc3\xa9llo w\xc3\xb6rldPOST,null,"
                           "  pad  get");
  CHECK(value("'a' || 'b' || 'c'") == "abc,abc,abc,abc");
  CHECK(value("'n=' || 'x' = 'n=x'") == "true,true,true,true");
  CHECK(value("lower(s)") == "hello,h\xc3\xa9llo w\xc3\xb6rld,null,  pad  ");
  CHECK(value("upper(s)") == "HELLO,H\xc3\xa9LLO W\xc3\xb6RLD,null,  PAD  ");
  CHECK(value("LOWER(u)") == "get,post,get,get");
  CHECK(value("length(s)") == "5,11,null,7");
  CHECK(value("length(raw)") == "2,2,0,2");
  CHECK(value("length('')") == "0,0,0,0");
  CHECK(value("trim(s)") == "Hello,h\xc3\xa9llo w\xc3\xb6rld,null,pad");
  CHECK(value("substr(s, 1)") == "ello,\xc3\xa9llo w\xc3\xb6rld,null, pad  ");
  CHECK(value("substr(s, 1, 3)") == "ell,\xc3\xa9ll,null, pa");
  CHECK(value("substr(s, -3)") == "llo,rld,null,d  ");
  CHECK(value("substr(s, -3, 2)") == "ll,rl,null,d ");
  CHECK(value("substr(s, 0, 0)") == ",,null,");
  CHECK(value("substr(s, 100)") == ",,null,");
  CHECK(value("substr(s, -100, 2)") == "He,h\xc3\xa9,null,  ");
  CHECK(value("substr(s, 0, -1)") == ",,null,");
  CHECK(value("substr(u, i)") == "ET,ST,null,get");
  CHECK(value("substr(raw, 1)") == "\x01,b,,z");
  CHECK(value("contains(s, 'll')") == "true,true,null,false");
  CHECK(value("contains(u, '')") == "true,true,true,true");
  CHECK(value("starts_with(u, 'G')") == "true,false,true,false");
  CHECK(value("ends_with(u, 'ST')") == "false,true,false,false");
  CHECK(value("ends_with('T', u)") == "false,false,false,false");
  CHECK(value("concat(u, '-', j)") == "GET-10,POST-0,GET-3,get-5");
  CHECK(value("concat(s, i, d, f, ts)")
        == "Hello11.5true1970-01-01T00:00:01Z,"
           "h\xc3\xa9llo w\xc3\xb6rld2false1970-01-01T00:00:02Z,"
           "-2.251970-01-01T00:00:03Z,"
           "  pad  -40true1970-01-01T00:00:04Z");
  CHECK(value("concat(null)") == ",,,");
  CHECK(type_of("concat(s, i)") == "string");
  CHECK(type_of("lower(s)") == "string?");
  CHECK(type_of("lower(raw)") == "bytes");
  CHECK(type_of("u || raw") == "bytes");
  CHECK(type_of("length(u)") == "int64");
  CHECK(type_of("contains(u, s)") == "bool?");
}

TEST_CASE("numeric functions and conversions") {
  CHECK(value("abs(i)") == "1,2,null,4");
  CHECK(value("abs(d)") == "1.5,null,2.25,0");
  CHECK(value("to_int(d)") == "1,null,-2,0");
  CHECK(value("to_int(f)") == "1,0,null,1");
  CHECK(value("to_int(ts)") == "1000,2000,3000,4000");
  CHECK(value("to_int(j)") == "10,0,3,5");
  CHECK(value("to_int(u)") == "null,null,null,null");
  CHECK(type_of("to_int(u)") == "int64?");
  CHECK(type_of("to_int(ts)") == "int64");
  CHECK(type_of("to_int(d)") == "int64?");
  CHECK(type_of("to_double(u)") == "double?");
  CHECK(type_of("to_double(j)") == "double");
  CHECK(value("to_int(' 42 ') + to_int('-7') + to_int('+1')") == "36,36,36,36");
  CHECK(value("to_int('4.5')") == "null,null,null,null");
  CHECK(value("to_int('9223372036854775808')") == "null,null,null,null");
  CHECK(value("to_int(1e30)") == "null,null,null,null");
  CHECK(value("to_int(-2.9)") == "-2,-2,-2,-2");
  CHECK(value("to_double(j)") == "10,0,3,5");
  CHECK(value("to_double(' 2.5 ')") == "2.5,2.5,2.5,2.5");
  CHECK(value("to_double('1e3')") == "1000,1000,1000,1000");
  CHECK(value("to_double('x')") == "null,null,null,null");
  CHECK(value("to_double(f)") == "1,0,null,1");
  CHECK(value("to_double(ts)") == "1000,2000,3000,4000");
  CHECK(value("to_string(i)") == "1,2,null,-4");
  CHECK(value("to_string(d)") == "1.5,null,-2.25,0");
  CHECK(value("to_string(f)") == "true,false,null,true");
  CHECK(value("to_string(ts + 1)") == "1970-01-01T00:00:01.001Z,"
                                      "1970-01-01T00:00:02.001Z,"
                                      "1970-01-01T00:00:03.001Z,"
                                      "1970-01-01T00:00:04.001Z");
  CHECK(value("to_string(raw) = 'ab'") == "false,true,false,false");
  CHECK(value("to_string(u)") == "GET,POST,GET,get");
  CHECK(value("to_string(1.5)") == "1.5,1.5,1.5,1.5");
}

TEST_CASE("timestamps") {
  CHECK(type_of("ts + 1000") == "timestamp");
  CHECK(type_of("1000 + ts") == "timestamp");
  CHECK(type_of("ts - 1") == "timestamp");
  CHECK(type_of("ts - ts") == "int64");
  CHECK(value("ts - ts") == "0,0,0,0");
  CHECK(value("to_int(ts + 500)") == "1500,2500,3500,4500");
  CHECK(problem("ts + ts") == "at 4: '+' does not apply to timestamp 'ts' and "
                              "timestamp 'ts'");
  CHECK(problem("1 - ts") == "at 3: '-' does not apply to int64 '1' and "
                             "timestamp 'ts'");
  CHECK(problem("ts * 2") == "at 4: '*' needs numbers, got timestamp 'ts'");
  CHECK(problem("ts > 5") == "at 4: '>' compares timestamp 'ts' with int64 "
                             "'5'");
}

TEST_CASE("if, is_null and coalesce") {
  CHECK(value("if(g, 'yes', 'no')") == "yes,yes,no,no");
  CHECK(value("if(f, i, j)") == "1,0,3,-4");
  CHECK(value("if(f, i, 0.5)") == "1,0.5,0.5,-4");
  CHECK(type_of("if(f, i, 0.5)") == "double?");
  CHECK(type_of("if(f, j, 0)") == "int64");
  CHECK(value("if(f, s, null)") == "Hello,null,null,  pad  ");
  CHECK(type_of("if(g, null, 'x')") == "string?");
  CHECK(value("if(true, j, 0)") == "10,0,3,5");
  CHECK(value("if(null, 1, 2)") == "2,2,2,2");
  CHECK(value("if(j > 4, 'big', u)") == "big,POST,GET,big");
  CHECK(value("is_null(i)") == "false,false,true,false");
  CHECK(value("is_null(j)") == "false,false,false,false");
  CHECK(value("is_null(null)") == "true,true,true,true");
  CHECK(value("is_null(i + j)") == "false,false,true,false");
  CHECK(type_of("is_null(i)") == "bool");
  CHECK(value("coalesce(i, j)") == "1,2,3,-4");
  CHECK(type_of("coalesce(i, j)") == "int64");
  CHECK(type_of("coalesce(i, d)") == "double?");
  CHECK(value("coalesce(i, d)") == "1,2,-2.25,-4");
  CHECK(value("coalesce(null, i, 7)") == "1,2,7,-4");
  CHECK(value("coalesce(s, 'none')") == "Hello,h\xc3\xa9llo w\xc3\xb6rld,none,"
                                        "  pad  ");
  CHECK(value("coalesce(to_int(s), i, -1)") == "1,2,-1,-4");
  CHECK(value("coalesce(d, null)") == "1.5,null,-2.25,0");
}

TEST_CASE("typing errors are one line with a position") {
  auto s = parse("user: string, status: int64, bytes: int64");
  CHECK(problem("bytes > stauts", s)
        == "at 9: unknown field 'stauts' (fields: user, status, bytes)");
  CHECK(problem("status >= '404'", s)
        == "at 8: '>=' compares int64 'status' with string '404'");
  CHECK(problem("lowr(user)", s) == "at 1: unknown function 'lowr'");
  CHECK(problem("(1 +)", s) == "at 5: unexpected ')'");
  CHECK(problem("status >= 400 and", s)
        == "at 18: unexpected end of expression");
  CHECK(problem("(status", s) == "at 8: unexpected end of expression (the '(' "
                                 "at 1 is not closed)");
  CHECK(problem("lower(user", s) == "at 11: unexpected end of expression "
                                    "(lower( at 1 is not closed)");
  CHECK(problem("status 400", s) == "at 8: unexpected '400'");
  CHECK(problem("status >= 400 and bytes", s)
        == "at 15: 'and' needs bool operands, got int64 'bytes'");
  CHECK(problem("not user", s) == "at 1: 'not' needs a bool operand, got "
                                  "string 'user'");
  CHECK(problem("-user", s) == "at 1: '-' needs a number, got string 'user'");
  CHECK(problem("user + 'x'", s) == "at 6: '+' needs numbers, got string "
                                    "'user' (use || or concat() to join "
                                    "strings)");
  CHECK(problem("user || status", s)
        == "at 6: '||' needs strings, got int64 'status' (write "
           "to_string(status) or use concat())");
  CHECK(problem("(status + 1) * 'x'", s)
        == "at 14: '*' needs numbers, got string 'x'");
  CHECK(problem("status = (bytes > 1)", s)
        == "at 8: '=' compares int64 'status' with bool '(bytes > 1)'");
  CHECK(problem("lower(status)", s)
        == "at 1: lower() needs a string, got int64 'status'");
  CHECK(problem("lower(user, user)", s)
        == "at 1: lower() takes 1 argument, got 2");
  CHECK(problem("substr(user)", s)
        == "at 1: substr() takes 2 or 3 arguments, got 1");
  CHECK(problem("substr(user, '1')", s)
        == "at 1: substr() needs int64 positions, got string '1'");
  CHECK(problem("concat()", s) == "at 1: concat() takes at least 1 argument, "
                                  "got 0");
  CHECK(problem("abs(user)", s) == "at 1: abs() needs a number, got string "
                                   "'user'");
  CHECK(problem("if(status, 1, 2)", s)
        == "at 1: if() needs a bool condition, got int64 'status'");
  CHECK(problem("if(status > 1, 1, 'x')", s)
        == "at 1: if() branches differ: int64 '1' and string 'x'");
  CHECK(problem("coalesce(user, bytes)", s)
        == "at 1: coalesce() arguments differ: string 'user' and int64 "
           "'bytes'");
  CHECK(problem("null", s) == "at 1: null alone has no type: write e.g. "
                              "to_int(null) or to_string(null)");
  CHECK(problem("coalesce(null, null)", s)
        == "at 1: null alone has no type: write e.g. to_int(null) or "
           "to_string(null)");
  CHECK(problem("", s) == "empty expression");
  CHECK(problem("   ", s) == "empty expression");
  CHECK(problem("9223372036854775808", s)
        == "at 1: integer 9223372036854775808 is out of range for int64");
  CHECK(problem("1 + 99999999999999999999", s)
        == "at 5: integer 99999999999999999999 is out of range for int64");
  CHECK(problem("1e999", s) == "at 1: number 1e999 is out of range");
  CHECK(problem("12ab", s) == "at 1: bad number '12ab'");
  CHECK(problem("user = 'abc", s) == "at 8: unterminated string");
  CHECK(problem("user = 'a\\qb'", s) == "at 10: unknown escape '\\q'");
  CHECK(problem("user = '\\x4'", s) == "at 9: '\\x' needs two hex digits");
  CHECK(problem("status # 1", s) == "at 8: unexpected character '#'");
  CHECK(problem("status & 1", s) == "at 8: unexpected character '&'");
  CHECK(problem("`stat", s) == "at 1: unterminated `name`");
  CHECK(problem("a and", schema{}) == "at 1: unknown field 'a' (no fields)");
  CHECK(problem("user as name", s) == "at 6: unexpected 'as'");
  CHECK(problem("status >= 400 or", s)
        == "at 17: unexpected end of expression");
  CHECK(problem("and", s) == "at 1: unexpected 'and'");
  CHECK(problem("f(", s) == "at 1: unknown function 'f'");
  CHECK(problem("lower(user,)", s) == "at 12: unexpected ')'");
  CHECK(problem("status\n  >= 'x'", s)
        == "at 10: '>=' compares int64 'status' with string 'x'");
  CHECK(compile_predicate("status + 1", s).problem
        == "a filter needs a bool expression, 'status + 1' is int64");
  CHECK(compile_predicate("status > 1", s).problem == "");
  CHECK(bool(compile_predicate("status > 1", s).expr));
}

TEST_CASE("long and deep expressions are refused") {
  auto s = parse("a: int64");
  std::string longest(max_length, ' ');
  longest[0] = 'a';
  CHECK(compile(longest, s).problem == "");
  CHECK(problem(longest + " ", s)
        == "expression too long: 65537 bytes, at most 65536");
  auto nested = [](size_t depth, const char* open, const char* close) {
    std::string out;
    for (size_t i = 0; i < depth; ++i)
      out += open;
    out += "a";
    for (size_t i = 0; i < depth; ++i)
      out += close;
    return out;
  };
  CHECK(compile(nested(256, "(", ")"), s).problem == "");
  CHECK(problem(nested(257, "(", ")"), s)
        == "at 257: expression nested deeper than 256 levels");
  CHECK(problem(nested(100000, "(", ")"), s)
        == "expression too long: 200001 bytes, at most 65536");
  CHECK(compile(nested(255, "abs(", ")"), s).problem == "");
  CHECK(problem(nested(256, "abs(", ")"), s)
        == "at 1: expression nested deeper than 256 levels");
  CHECK(problem(nested(300, "-", ""), s)
        == "at 257: expression nested deeper than 256 levels");
  std::string chain = "a";
  for (int i = 0; i < 300; ++i)
    chain += " + a";
  CHECK(problem(chain, s)
        == "at 1023: expression nested deeper than 256 levels");
  // A deep tree still evaluates.
  row_batch b{s};
  b.columns[0].push_int(1);
  b.rows = 1;
  CHECK(show(eval(nested(255, "abs(", ")"), b, s)) == "1");
}

TEST_CASE("filters: select_rows, gather, filter") {
  auto s = logs_schema();
  auto b = logs();
  auto p = compile_predicate("status >= 400 and method = 'GET'", s);
  REQUIRE(p.problem == "");
  CHECK(select_rows(*p.expr, b) == std::vector<uint32_t>{1, 3});
  row_batch out;
  filter(*p.expr, b, out);
  REQUIRE(out.rows == 2);
  CHECK(out.conforms_to(s));
  CHECK(show(out.columns[0]) == "bob,dee");
  CHECK(show(out.columns[3]) == "0,64");
  CHECK(out.times == std::vector<int64_t>{20, 40});
  // Appends; keeps what was there.
  filter(*p.expr, b, out);
  CHECK(out.rows == 4);
  CHECK(show(out.columns[0]) == "bob,dee,bob,dee");
  CHECK(out.times == std::vector<int64_t>{20, 40, 20, 40});
  // All rows, none.
  auto all = compiled("bytes >= 0", s);
  row_batch every;
  filter(*all.expr, b, every);
  CHECK(every == b);
  filter(*all.expr, b, every);
  CHECK(every.rows == 10);
  auto number = compiled("bytes", s);
  CHECK_THROWS_WITH_AS(select_rows(*number.expr, b),
                       "expression 'bytes': is int64, not a bool",
                       weir::ops::operator_error);
  auto none = compiled("false", s);
  CHECK(select_rows(*none.expr, b).empty());
  auto yes = compiled("true or null", s);
  CHECK(select_rows(*yes.expr, b).size() == 5);
  // A null predicate is not true.
  auto ns = parse("x: int64?, y: string?");
  row_batch nb;
  nb.columns.push_back(ints({1, std::nullopt, 3, std::nullopt}));
  nb.columns.push_back(strs({"a", "b", std::nullopt, std::nullopt}));
  nb.rows = 4;
  CHECK(select_rows(*compiled("x > 0", ns).expr, nb)
        == std::vector<uint32_t>{0, 2});
  CHECK(select_rows(*compiled("not (x > 0)", ns).expr, nb).empty());
  row_batch kept;
  filter(*compiled("x > 1 or y = 'b'", ns).expr, nb, kept);
  CHECK(show(kept.columns[0]) == "null,3");
  CHECK(show(kept.columns[1]) == "b,null");
  CHECK(kept.times.empty());
  // gather alone, into a batch with times and nulls already.
  row_batch g{ns};
  g.push_row(nb, 3);
  g.push_time(7);
  gather(nb, {0, 2}, g);
  CHECK(g.rows == 3);
  CHECK(show(g.columns[0]) == "null,1,3");
  CHECK(show(g.columns[1]) == "null,a,null");
  CHECK(g.times == std::vector<int64_t>{7, 0, 0});
}

TEST_CASE("select lists") {
  auto s = logs_schema();
  auto b = logs();
  auto sel = compile_select("user, bytes * 2 AS double_bytes, "
                            "upper(method) as `Method`, status >= 400 as err",
                            s);
  REQUIRE(sel.problem == "");
  CHECK(to_string(sel.output)
        == "(user: string, double_bytes: int64, Method: string, err: bool)");
  REQUIRE(sel.items.size() == 4);
  CHECK(sel.items[1].name == "double_bytes");
  CHECK(sel.items[1].type == field_type::int64);
  CHECK(!sel.items[1].nullable);
  row_batch out;
  evaluate_select(sel, b, out);
  CHECK(out.rows == 5);
  CHECK(out.conforms_to(sel.output));
  CHECK(show(out.columns[0]) == "ann,bob,cy,dee,eve");
  CHECK(show(out.columns[1]) == "1024,0,256,128,64");
  CHECK(show(out.columns[2]) == "GET,GET,POST,GET,GET");
  CHECK(show(out.columns[3]) == "false,true,true,true,true");
  CHECK(out.times == b.times);
  evaluate_select(sel, b, out);
  CHECK(out.rows == 10);
  CHECK(show(out.columns[1]) == "1024,0,256,128,64,1024,0,256,128,64");
  CHECK(out.times.size() == 10);

  auto star = compile_select("*, bytes / 2 as half, 'x' as tag, null as n", s);
  CHECK(star.problem == "at 35: null alone has no type: write e.g. "
                        "to_int(null) or to_string(null)");
  star = compile_select("*, bytes / 2 as half, 'x' as tag, to_int(null) as n",
                        s);
  REQUIRE(star.problem == "");
  CHECK(to_string(star.output)
        == "(user: string, method: string, status: int64, bytes: int64, half: "
           "int64, tag: string, n: int64?)");
  row_batch wide;
  evaluate_select(star, b, wide);
  CHECK(show(wide.columns[4]) == "256,0,64,32,16");
  CHECK(show(wide.columns[5]) == "x,x,x,x,x");
  CHECK(show(wide.columns[6]) == "null,null,null,null,null");
  CHECK(wide.columns[2] == b.columns[2]);

  auto renamed = compile_select("(status) , `user` as who", s);
  REQUIRE(renamed.problem == "");
  CHECK(to_string(renamed.output) == "(status: int64, who: string)");

  CHECK(compile_select("user, bytes * 2", s).problem
        == "item 2 ('bytes * 2') needs a name: write 'bytes * 2 as NAME'");
  CHECK(compile_select("user, bytes as user", s).problem
        == "duplicate output name 'user' (items 1 and 2)");
  CHECK(compile_select("*, status", s).problem
        == "duplicate output name 'status' (items 1 and 2)");
  CHECK(compile_select("", s).problem == "empty select list");
  CHECK(compile_select("user,", s).problem
        == "at 6: unexpected end of expression");
  CHECK(compile_select("user as", s).problem
        == "at 8: unexpected end of list: a name must follow 'as'");
  CHECK(compile_select("user as 'x'", s).problem
        == "at 9: expected a name after 'as', got ''x''");
  CHECK(compile_select("user bytes", s).problem == "at 6: unexpected 'bytes'");
  CHECK(compile_select("user as a b", s).problem == "at 11: unexpected 'b'");
  CHECK(compile_select("usr", s).problem
        == "at 1: unknown field 'usr' (fields: user, method, status, bytes)");
  CHECK(compile_select(std::string(max_length + 1, ' '), s).problem
        == "select list too long: 65537 bytes, at most 65536");

  // A failing item leaves the output as it was.
  auto risky = compile_select("user, 100 / (bytes - 64) as q", s);
  REQUIRE(risky.problem == "");
  row_batch kept;
  CHECK_THROWS_WITH_AS(evaluate_select(risky, b, kept),
                       "expression '100 / (bytes - 64)': division by zero",
                       weir::ops::operator_error);
  CHECK(kept.rows == 0);
  CHECK(kept.columns.size() == 2);
  CHECK(kept.columns[0].size() == 0);
}

TEST_CASE("a batch that does not fit the schema is an error") {
  auto s = parse("a: int64");
  auto r = compiled("a + 1", s);
  row_batch wrong{parse("a: string")};
  wrong.columns[0].push_str("x");
  wrong.rows = 1;
  column out;
  CHECK_THROWS_WITH_AS(evaluate(*r.expr, wrong, out),
                       "expression 'a + 1': the batch does not fit the schema "
                       "(its column 1 is string with 1 values, expected "
                       "int64 with 1) in 'a'",
                       weir::ops::operator_error);
}

TEST_CASE("full batches: the hot paths") {
  auto s = parse("value: int64, status: int64");
  row_batch b{s};
  for (int64_t i = 0; i < 2048; ++i) {
    b.columns[0].push_int(i * 7919 - 5000000);
    b.columns[1].push_int(100 + (i * 37) % 500);
  }
  b.rows = 2048;
  auto mod = eval("value % 1000", b, s);
  auto p = compile_predicate("status >= 400", s);
  REQUIRE(p.problem == "");
  auto rows = select_rows(*p.expr, b);
  size_t expected = 0;
  for (size_t i = 0; i < 2048; ++i) {
    REQUIRE(mod.ints[i] == b.columns[0].ints[i] % 1000);
    if (b.columns[1].ints[i] >= 400) {
      REQUIRE(expected < rows.size());
      REQUIRE(rows[expected++] == i);
    }
  }
  CHECK(rows.size() == expected);
  // Shared by threads: evaluation does not change the expression.
  auto again = eval("value % 1000", b, s);
  CHECK(again == mod);
}
