#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "messages/record.hpp"
#include "operators/formats/row_formats.hpp"

using namespace weir;
using namespace weir::ops;

namespace {

schema make_schema(std::string_view text) {
  auto parsed = parse_schema(text);
  REQUIRE_MESSAGE(parsed.problem.empty(), parsed.problem);
  return parsed.value;
}

const delimited_format csv{',', true};
const delimited_format tsv{'\t', false};
const delimited_format whitespace{' ', false};

int64_t utc_ms(int y, int mo, int d, int h = 0, int mi = 0, int s = 0,
               int ms = 0) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

/// Every column `rows` long, string offsets and nulls in shape, times
/// empty or one a row.
void require_consistent(const row_batch& b) {
  for (const auto& c : b.columns) {
    REQUIRE(c.size() == b.rows);
    CHECK((c.nulls.empty() || c.nulls.size() == b.rows));
    if (holds_chars(c.type))
      CHECK(c.chars.size() == (c.ends.empty() ? 0 : c.ends.back()));
    CHECK(c.ints.size() == (holds_ints(c.type) ? b.rows : 0));
    CHECK(c.floats.size() == (c.type == field_type::float64 ? b.rows : 0));
  }
  CHECK((b.times.empty() || b.times.size() == b.rows));
}

/// The problem of parsing `line` into a fresh batch of `s` (which must
/// stay empty), or "".
std::string problem_of(std::string_view line, const schema& s,
                       const delimited_format& f = csv) {
  row_batch b{s};
  auto problem = parse_delimited(line, f, s, b);
  require_consistent(b);
  CHECK(b.rows == (problem.empty() ? 1u : 0u));
  return problem;
}

std::string json_problem_of(std::string_view line, const schema& s) {
  row_batch b{s};
  auto problem = parse_json_line(line, s, b);
  require_consistent(b);
  CHECK(b.rows == (problem.empty() ? 1u : 0u));
  return problem;
}

/// Parses one field of `type` (nullable with '?') from `text`.
row_batch one(std::string_view type, std::string_view text,
              const delimited_format& f = csv) {
  auto s = make_schema(std::string{"x: "} + std::string{type});
  row_batch b{s};
  auto problem = parse_delimited(text, f, s, b);
  REQUIRE_MESSAGE(problem.empty(), problem);
  REQUIRE(b.rows == 1);
  return b;
}

int64_t int_of(std::string_view type, std::string_view text) {
  return one(type, text).columns[0].ints[0];
}

double double_of(std::string_view text) {
  return one("double", text).columns[0].floats[0];
}

std::string one_problem(std::string_view type, std::string_view text) {
  return problem_of(text, make_schema(std::string{"x: "} + std::string{type}));
}

std::string csv_line(const row_batch& b, size_t row,
                     const delimited_format& f = csv) {
  std::string out;
  append_delimited(out, b, row, f);
  return out;
}

std::string json_line(const row_batch& b, size_t row, const schema& s) {
  std::string out;
  append_json_line(out, b, row, s);
  return out;
}

const char* all_types = "i: int64, d: double, b: bool, s: string, y: bytes, "
                        "t: timestamp";

} // namespace

TEST_CASE("format names") {
  auto c = parse_format_name("csv");
  REQUIRE(c);
  CHECK(c->separator == ',');
  CHECK(c->quoted);
  auto t = parse_format_name("tsv");
  REQUIRE(t);
  CHECK(t->separator == '\t');
  CHECK_FALSE(t->quoted);
  auto w = parse_format_name("whitespace");
  REQUIRE(w);
  CHECK(w->separator == ' ');
  CHECK_FALSE(w->quoted);
  CHECK_FALSE(parse_format_name("CSV"));
  CHECK_FALSE(parse_format_name("json"));
  CHECK_FALSE(parse_format_name(""));
}

TEST_CASE("delimited: a row of every type") {
  auto s = make_schema(all_types);
  row_batch b{s};
  REQUIRE(parse_delimited("42,-1.5,TRUE,hello world,raw\x01,"
                          "2026-11-30T10:00:01Z",
                          csv, s, b)
          == "");
  REQUIRE(parse_delimited("-7,1e3,0,,,1700000000000", csv, s, b) == "");
  require_consistent(b);
  REQUIRE(b.rows == 2);
  CHECK(b.columns[0].ints == std::vector<int64_t>{42, -7});
  CHECK(b.columns[1].floats == std::vector<double>{-1.5, 1000.0});
  CHECK(b.columns[2].ints == std::vector<int64_t>{1, 0});
  CHECK(b.columns[3].str(0) == "hello world");
  CHECK(b.columns[3].str(1) == "");
  CHECK(b.columns[4].str(0) == "raw\x01");
  CHECK(b.columns[4].str(1) == "");
  CHECK(b.columns[5].ints
        == std::vector<int64_t>{utc_ms(2026, 11, 30, 10, 0, 1),
                                1700000000000});
  CHECK(b.times.empty()); // event times are the caller's
  for (auto& c : b.columns)
    CHECK(c.nulls.empty());
}

TEST_CASE("delimited: int64") {
  CHECK(int_of("int64", "0") == 0);
  CHECK(int_of("int64", "+5") == 5);
  CHECK(int_of("int64", "-5") == -5);
  CHECK(int_of("int64", "007") == 7);
  CHECK(int_of("int64", " 12\t") == 12); // blanks around numbers
  CHECK(int_of("int64", "9223372036854775807")
        == std::numeric_limits<int64_t>::max());
  CHECK(int_of("int64", "-9223372036854775808")
        == std::numeric_limits<int64_t>::min());
  for (auto bad : {"abc", "5x", "x5", "+-5", "-+5", "--5", "+", "-", "1.0",
                   "0x10", "1 2", "1e3"})
    CHECK(one_problem("int64", bad)
          == std::string{"field 'x': '"} + bad + "' is not an int64");
  CHECK(one_problem("int64", "99999999999999999999")
        == "field 'x': 99999999999999999999 is out of the int64 range");
  CHECK(one_problem("int64", "-9223372036854775809")
        == "field 'x': -9223372036854775809 is out of the int64 range");
  CHECK(one_problem("int64", "+9223372036854775808")
        == "field 'x': +9223372036854775808 is out of the int64 range");
}

TEST_CASE("delimited: double") {
  CHECK(double_of("1.5") == 1.5);
  CHECK(double_of("-2e3") == -2000.0);
  CHECK(double_of("+.5") == 0.5);
  CHECK(double_of("42") == 42.0);
  CHECK(double_of("0.1") == 0.1);
  CHECK(double_of("1e-400") == 0.0); // underflow: the nearest double
  CHECK(std::isinf(double_of("inf")));
  CHECK(std::isinf(double_of("-Infinity")));
  CHECK(std::isnan(double_of("nan")));
  CHECK(double_of("1.7976931348623157e308")
        == std::numeric_limits<double>::max());
  for (auto bad : {"abc", "1.5.2", "1;5", "0x1p3", "+-1", "e5", "1e"})
    CHECK(one_problem("double", bad)
          == std::string{"field 'x': '"} + bad + "' is not a double");
  CHECK(one_problem("double", "1e999")
        == "field 'x': 1e999 is out of the double range");
  CHECK(one_problem("double", "-1e999")
        == "field 'x': -1e999 is out of the double range");
}

TEST_CASE("delimited: bool") {
  for (auto yes : {"true", "TRUE", "True", "tRuE", "1"})
    CHECK(int_of("bool", yes) == 1);
  for (auto no : {"false", "FALSE", "False", "0"})
    CHECK(int_of("bool", no) == 0);
  for (auto bad : {"yes", "no", "2", "tru", "truee", "t", "-1", "01"})
    CHECK(one_problem("bool", bad)
          == std::string{"field 'x': '"} + bad + "' is not a bool");
}

TEST_CASE("delimited: timestamp") {
  auto base = utc_ms(2026, 11, 30, 10, 0, 1);
  CHECK(int_of("timestamp", "2026-11-30T10:00:01Z") == base);
  CHECK(int_of("timestamp", "2026-11-30t10:00:01z") == base);
  CHECK(int_of("timestamp", "2026-11-30T10:00:01") == base); // UTC
  CHECK(int_of("timestamp", "2026-11-30 10:00:01Z") == base);
  CHECK(int_of("timestamp", "2026-11-30T10:00:01.5Z") == base + 500);
  CHECK(int_of("timestamp", "2026-11-30T10:00:01.05Z") == base + 50);
  CHECK(int_of("timestamp", "2026-11-30T10:00:01.123Z") == base + 123);
  CHECK(one("timestamp", "2026-11-30T10:00:01,123Z", tsv).columns[0].ints[0]
        == base + 123);
  CHECK(int_of("timestamp", "2026-11-30T10:00:01.123999Z") == base + 123);
  CHECK(int_of("timestamp", "2026-11-30T11:00:01+01:00") == base);
  CHECK(int_of("timestamp", "2026-11-30T11:00:01+0100") == base);
  CHECK(int_of("timestamp", "2026-11-30T11:00:01+01") == base);
  CHECK(int_of("timestamp", "2026-11-30T04:30:01-05:30") == base);
  CHECK(int_of("timestamp", "2026-12-01T00:00:01.250+14:00")
        == base + 250);
  CHECK(int_of("timestamp", "2026-11-30T10:00Z") == base - 1000);
  CHECK(int_of("timestamp", "2026-11-30") == utc_ms(2026, 11, 30));
  CHECK(int_of("timestamp", "1970-01-01T00:00:00Z") == 0);
  CHECK(int_of("timestamp", "1969-12-31T23:59:59.999Z") == -1);
  CHECK(int_of("timestamp", "0001-01-01T00:00:00Z") == -62135596800000);
  CHECK(int_of("timestamp", "9999-12-31T23:59:59.999Z") == 253402300799999);
  CHECK(int_of("timestamp", "2024-02-29T12:00:00Z")
        == utc_ms(2024, 2, 29, 12));
  CHECK(int_of("timestamp", "2000-02-29") == utc_ms(2000, 2, 29));
  CHECK(int_of("timestamp", "1700000000000") == 1700000000000);
  CHECK(int_of("timestamp", "-5") == -5);
  CHECK(int_of("timestamp", "+5") == 5);
  CHECK(int_of("timestamp", " 2026-11-30T10:00:01Z ") == base);
  for (auto bad :
       {"yesterday", "2026-11-30T10:00:01Z junk", "2023-02-29", "1900-02-29",
        "2026-02-30T00:00:00Z", "2026-13-01", "2026-00-10", "2026-11-00",
        "2026-11-31", "2026-11-30T24:00:00Z", "2026-11-30T10:60:00Z",
        "2026-11-30T10:00:60Z", "2026-11-30T10:00:01.Z", "2026-11-30T10",
        "2026-11-30T10:00:01+1", "2026-11-30T10:00:01+24:00",
        "2026-11-30T10:00:01+01:60", "26-11-30", "2026-1-30", "2026/11/30",
        "2026-11-30X10:00:01Z", "2026-11-30T10:00:01ZZ", "12.5"})
    CHECK(one_problem("timestamp", bad)
          == std::string{"field 'x': '"} + bad + "' is not a timestamp");
  CHECK(one_problem("timestamp", "99999999999999999999")
        == "field 'x': 99999999999999999999 is out of the timestamp range");
  CHECK(parse_timestamp("2026-11-30T10:00:01Z") == base);
  CHECK(parse_timestamp("12") == 12);
  CHECK_FALSE(parse_timestamp("soon"));
  CHECK_FALSE(parse_timestamp("99999999999999999999"));
}

TEST_CASE("delimited: empty fields and nulls") {
  auto s = make_schema("i: int64?, d: double?, b: bool?, s: string?, "
                       "y: bytes?, t: timestamp?");
  row_batch b{s};
  REQUIRE(parse_delimited(",,,,,", csv, s, b) == "");
  REQUIRE(parse_delimited("1, ,true,\"\",\"\", ", csv, s, b) == "");
  require_consistent(b);
  REQUIRE(b.rows == 2);
  for (size_t c = 0; c < 6; ++c)
    CHECK_MESSAGE(b.columns[c].is_null(0), c);
  CHECK_FALSE(b.columns[0].is_null(1));
  CHECK(b.columns[1].is_null(1)); // blanks only: empty
  CHECK_FALSE(b.columns[3].is_null(1)); // "" is the empty string
  CHECK(b.columns[3].str(1) == "");
  CHECK_FALSE(b.columns[4].is_null(1));
  CHECK(b.columns[5].is_null(1));

  // Not nullable: a problem, except for strings and bytes.
  for (auto type : {"int64", "double", "bool", "timestamp"}) {
    CHECK(one_problem(type, "") == "field 'x' is empty and not nullable");
    CHECK(one_problem(type, "  ") == "field 'x' is empty and not nullable");
    CHECK(one_problem(type, "\"\"") == "field 'x' is empty and not nullable");
  }
  for (auto type : {"string", "bytes"}) {
    auto r = one(type, "");
    CHECK_FALSE(r.columns[0].is_null(0));
    CHECK(r.columns[0].str(0) == "");
  }
  // TSV: no quotes, an empty field of a nullable string is null.
  auto t = make_schema("a: string?, b: string, c: int64?");
  row_batch tb{t};
  REQUIRE(parse_delimited("\t\t", tsv, t, tb) == "");
  CHECK(tb.columns[0].is_null(0));
  CHECK_FALSE(tb.columns[1].is_null(0));
  CHECK(tb.columns[2].is_null(0));
}

TEST_CASE("delimited: the number of fields") {
  auto s = make_schema("a: int64, b: int64, c: int64, d: int64, e: int64, "
                       "f: int64");
  CHECK(problem_of("1,2,3", s) == "3 fields, the schema has 6");
  CHECK(problem_of("1", s) == "1 field, the schema has 6");
  CHECK(problem_of("", s) == "1 field, the schema has 6");
  CHECK(problem_of("1,2,3,4,5,6,7", s) == "7 fields, the schema has 6");
  CHECK(problem_of("1,2,3,4,5,6,7,8,9", s) == "9 fields, the schema has 6");
  CHECK(problem_of("1,2,3,4,5,6,", s) == "7 fields, the schema has 6");
  CHECK(problem_of("1,2,3,4,5,6,\"7,8\"", s) == "7 fields, the schema has 6");
  // A wrong number of fields comes before a wrong value...
  CHECK(problem_of("x,2,3", s) == "3 fields, the schema has 6");
  CHECK(problem_of("x,2,3,4,5,6,7", s) == "7 fields, the schema has 6");
  // ...and a wrong value is named when the number is right.
  CHECK(problem_of("1,2,3,x,5,6", s) == "field 'd': 'x' is not an int64");
  CHECK(problem_of("1,2,3,4,5,x", s) == "field 'f': 'x' is not an int64");

  auto w = make_schema("user: string, status: int64, bytes: int64");
  CHECK(problem_of("", w, whitespace) == "0 fields, the schema has 3");
  CHECK(problem_of(" \t ", w, whitespace) == "0 fields, the schema has 3");
  CHECK(problem_of("alice 200", w, whitespace) == "2 fields, the schema has 3");
  CHECK(problem_of("alice 200 1 2", w, whitespace)
        == "4 fields, the schema has 3");
  CHECK(problem_of("alice\t\t200", w, tsv)
        == "field 'status' is empty and not nullable");
}

TEST_CASE("delimited: problems show the value cut and escaped") {
  std::string long_value(100, 'z');
  CHECK(one_problem("int64", long_value)
        == "field 'x': '" + std::string(64, 'z') + "...' is not an int64");
  // Not inside a UTF-8 sequence: 63 'z' and a two-byte 'é' at byte 63.
  std::string utf8 = std::string(63, 'z') + "\xc3\xa9" + "zz";
  CHECK(one_problem("int64", utf8)
        == "field 'x': '" + std::string(63, 'z') + "...' is not an int64");
  CHECK(one_problem("int64", "\"a\nb\rc\x01\"")
        == "field 'x': 'a\\nb\\rc\\x01' is not an int64");
  CHECK(one_problem("double", "1\t2") == "field 'x': '1\\t2' is not a double");
}

TEST_CASE("delimited: a bad line appends nothing (rollback)") {
  auto s = make_schema("a: string?, b: int64?, c: bytes, d: double, "
                       "e: timestamp?, f: bool");
  row_batch b{s};
  REQUIRE(parse_delimited("x,1,\"q\"\"q\",1.5,2026-11-30T10:00:01Z,true", csv,
                          s, b)
          == "");
  REQUIRE(parse_delimited("yy,2,zz,2.5,3,false", csv, s, b) == "");
  b.push_time(77); // the caller's event time of the last row
  auto before = b;
  auto before_chars = b.columns[0].chars;

  // Fails at each field in turn, after appending the earlier ones (with
  // nulls and escaped strings on the way).
  std::vector<std::pair<std::string, std::string>> bad{
    {"x,y,z,1.5,,true", "field 'b': 'y' is not an int64"},
    {",,\"a\"\"b\",nope,,true", "field 'd': 'nope' is not a double"},
    {",,,1,soon,true", "field 'e': 'soon' is not a timestamp"},
    {"long string value,,bytes too,1,,maybe", "field 'f': 'maybe' is not a "
                                              "bool"},
    {"a,1,b,1,2,true,extra", "7 fields, the schema has 6"},
    {"a,1,\"b", "field 'c': no closing quote"},
    {"a,1,\"b\"c,1,2,true", "field 'c': text after the closing quote"},
    {"a,1,b,1,2", "5 fields, the schema has 6"},
  };
  for (auto& [line, problem] : bad) {
    CAPTURE(line);
    CHECK(parse_delimited(line, csv, s, b) == problem);
    require_consistent(b);
    CHECK(b == before);
    CHECK(b.times == before.times);
    CHECK(b.columns[0].chars == before_chars);
    for (size_t c = 0; c < b.columns.size(); ++c)
      CHECK(b.columns[c].nulls.empty()); // no null row: still empty
  }
  // And the next good line lands where it should.
  REQUIRE(parse_delimited(",3,w,3.5,,true", csv, s, b) == "");
  require_consistent(b);
  CHECK(b.rows == 3);
  CHECK(b.columns[0].is_null(2));
  CHECK(b.columns[0].str(1) == "yy");
  CHECK(b.columns[2].str(0) == "q\"q");
  CHECK(b.columns[2].str(2) == "w");
  CHECK(b.times == std::vector<int64_t>{0, 77, 0});
}

TEST_CASE("delimited: rollback keeps earlier nulls") {
  auto s = make_schema("a: int64?, b: int64");
  row_batch b{s};
  REQUIRE(parse_delimited(",1", csv, s, b) == "");
  REQUIRE(parse_delimited("2,2", csv, s, b) == "");
  auto before = b;
  CHECK(parse_delimited(",x", csv, s, b) == "field 'b': 'x' is not an int64");
  CHECK(b == before);
  CHECK(b.columns[0].nulls == std::vector<uint8_t>{1, 0});
  require_consistent(b);
}

TEST_CASE("delimited: the batch must have the schema's columns") {
  auto s = make_schema("a: int64");
  row_batch b{make_schema("a: string")};
  CHECK(parse_delimited("1", csv, s, b)
        == "the batch's columns do not have the types of (a: int64)");
  CHECK(parse_json_line("{\"a\":1}", s, b)
        == "the batch's columns do not have the types of (a: int64)");
  CHECK(b.rows == 0);
}

TEST_CASE("csv: quotes") {
  auto s = make_schema("a: string, b: string, c: int64, d: string");
  row_batch b{s};
  REQUIRE(parse_delimited("\"x,y\",\"say \"\"hi\"\"\",\"42\",ab\"c", csv, s, b)
          == "");
  REQUIRE(parse_delimited("\"\",\"\"\"\",\" 7 \",\"line\nbreak\"", csv, s, b)
          == "");
  require_consistent(b);
  CHECK(b.columns[0].str(0) == "x,y");
  CHECK(b.columns[1].str(0) == "say \"hi\"");
  CHECK(b.columns[2].ints == std::vector<int64_t>{42, 7});
  CHECK(b.columns[3].str(0) == "ab\"c"); // a quote inside: as it is
  CHECK(b.columns[0].str(1) == "");
  CHECK(b.columns[1].str(1) == "\"");
  CHECK(b.columns[3].str(1) == "line\nbreak");
  CHECK(problem_of("\"x,y", s) == "field 'a': no closing quote");
  CHECK(problem_of("a,\"b\"\"", s) == "field 'b': no closing quote");
  CHECK(problem_of("a,\"b\" ,1,d", s)
        == "field 'b': text after the closing quote");
  CHECK(problem_of("a,b,\"4\"\"2\",d", s)
        == "field 'c': '4\"\"2' is not an int64");
  // TSV and whitespace: quotes are characters.
  auto one_string = make_schema("a: string, b: string");
  row_batch t{one_string};
  REQUIRE(parse_delimited("\"x\ty\"", tsv, one_string, t) == "");
  CHECK(t.columns[0].str(0) == "\"x");
  CHECK(t.columns[1].str(0) == "y\"");
}

TEST_CASE("tsv and whitespace") {
  auto s = make_schema("user: string, status: int64, bytes: int64");
  row_batch b{s};
  REQUIRE(parse_delimited("  alice   200\t 1234  ", whitespace, s, b) == "");
  REQUIRE(parse_delimited("bob 404 0", whitespace, s, b) == "");
  REQUIRE(parse_delimited("carol dave\t1\t2", tsv, s, b) == "");
  require_consistent(b);
  CHECK(b.columns[0].str(0) == "alice");
  CHECK(b.columns[0].str(1) == "bob");
  CHECK(b.columns[0].str(2) == "carol dave");
  CHECK(b.columns[1].ints == std::vector<int64_t>{200, 404, 1});
  CHECK(b.columns[2].ints == std::vector<int64_t>{1234, 0, 2});
  CHECK(problem_of("alice x 1", s, whitespace)
        == "field 'status': 'x' is not an int64");

  // TSV reads the escapes it writes; other backslashes stay.
  auto t = make_schema("a: string, b: bytes");
  row_batch e{t};
  REQUIRE(parse_delimited("a\\tb\\nc\\rd\\\\e\tC:\\path\\x\\", tsv, t, e)
          == "");
  CHECK(e.columns[0].str(0) == "a\tb\nc\rd\\e");
  CHECK(e.columns[1].str(0) == "C:\\path\\x\\");
}

TEST_CASE("csv: writing and reading back") {
  auto s = make_schema("a: string?, b: bytes, n: int64?, d: double, "
                       "ok: bool, t: timestamp");
  row_batch b{s};
  std::vector<std::string> strings{
    "plain", "with,comma", "with \"quotes\"", "line\nbreak", "cr\rhere",
    "", " spaced ", "tab\there", "\"", "é ünïcödé 😀"};
  for (size_t i = 0; i < strings.size(); ++i) {
    b.columns[0].push_str(strings[i]);
    b.columns[1].push_str(strings[strings.size() - 1 - i]);
    b.columns[2].push_int(static_cast<int64_t>(i) - 3);
    b.columns[3].push_float(0.1 * static_cast<double>(i) + 1e-9);
    b.columns[4].push_int(i % 2);
    b.columns[5].push_int(utc_ms(2026, 11, 30)
                          + static_cast<int64_t>(i) * 1001);
    ++b.rows;
  }
  b.columns[0].push_null();
  b.columns[1].push_str("x");
  b.columns[2].push_null();
  b.columns[3].push_float(-0.0);
  b.columns[4].push_int(1);
  b.columns[5].push_int(-1);
  ++b.rows;
  require_consistent(b);

  CHECK(csv_line(b, 0) == "plain,é ünïcödé 😀,-3,1e-09,false,"
                          "2026-11-30T00:00:00Z\n");
  CHECK(csv_line(b, 1) == "\"with,comma\",\"\"\"\",-2,0.100000001,true,"
                          "2026-11-30T00:00:01.001Z\n");
  CHECK(csv_line(b, 2) == "\"with \"\"quotes\"\"\",tab\there,-1,"
                          "0.200000001,false,2026-11-30T00:00:02.002Z\n");
  CHECK(csv_line(b, 3).substr(0, 15) == "\"line\nbreak\", s");
  CHECK(csv_line(b, 5).substr(0, 3) == "\"\",");
  CHECK(csv_line(b, 10) == ",x,,-0,true,1969-12-31T23:59:59.999Z\n");

  row_batch back{s};
  for (size_t i = 0; i < b.rows; ++i) {
    auto line = csv_line(b, i);
    REQUIRE(line.back() == '\n');
    line.pop_back();
    CAPTURE(line);
    REQUIRE(parse_delimited(line, csv, s, back) == "");
  }
  require_consistent(back);
  CHECK(back == b);
}

TEST_CASE("tsv: writing escapes, and reads back") {
  auto s = make_schema("a: string, b: bytes?, n: int64");
  row_batch b{s};
  b.columns[0].push_str("tab\there\nnew line\\back\rcr");
  b.columns[1].push_null();
  b.columns[2].push_int(5);
  ++b.rows;
  b.columns[0].push_str("plain, \"quoted\"");
  b.columns[1].push_str("C:\\dir");
  b.columns[2].push_int(-5);
  ++b.rows;
  CHECK(csv_line(b, 0, tsv) == "tab\\there\\nnew line\\\\back\\rcr\t\t5\n");
  CHECK(csv_line(b, 1, tsv) == "plain, \"quoted\"\tC:\\\\dir\t-5\n");
  row_batch back{s};
  for (size_t i = 0; i < b.rows; ++i) {
    auto line = csv_line(b, i, tsv);
    line.pop_back();
    REQUIRE(parse_delimited(line, tsv, s, back) == "");
  }
  CHECK(back == b);
  // Whitespace: one space, values as they are.
  CHECK(csv_line(b, 1, whitespace) == "plain, \"quoted\" C:\\dir -5\n");
}

// -- JSON lines ---------------------------------------------------------------

TEST_CASE("json: a row of every type") {
  auto s = make_schema(all_types);
  row_batch b{s};
  REQUIRE(parse_json_line(R"({"i": 42, "d": -1.5, "b": true, "s": "hello",)"
                          R"( "y": "raw", "t": "2026-11-30T11:00:01+01:00"})",
                          s, b)
          == "");
  // Any order, other members ignored (also nested ones), integers for
  // doubles and timestamps, whitespace anywhere.
  REQUIRE(parse_json_line(
            " {\"t\":1700000000000,\"extra\":{\"x\":[1,2,{\"y\":null}],\"z\":"
            "\"}\"},\"y\":\"\",\"s\":\"\",\"b\":false,\"d\":3,\"i\":-7,"
            "\"more\":[true,false,null,-1.5e3,\"a\\\"b\"]}\t",
            s, b)
          == "");
  REQUIRE(parse_json_line(R"({"i":0,"d":1e300,"b":true,"s":"s","y":"y","t":"2026-11-30"})",
                          s, b)
          == "");
  require_consistent(b);
  REQUIRE(b.rows == 3);
  CHECK(b.columns[0].ints == std::vector<int64_t>{42, -7, 0});
  CHECK(b.columns[1].floats == std::vector<double>{-1.5, 3.0, 1e300});
  CHECK(b.columns[2].ints == std::vector<int64_t>{1, 0, 1});
  CHECK(b.columns[3].str(0) == "hello");
  CHECK(b.columns[3].str(1) == "");
  CHECK(b.columns[4].str(0) == "raw");
  CHECK(b.columns[5].ints
        == std::vector<int64_t>{utc_ms(2026, 11, 30, 10, 0, 1), 1700000000000,
                                utc_ms(2026, 11, 30)});
  CHECK(b.times.empty());
}

TEST_CASE("json: nulls and missing members") {
  auto s = make_schema("a: int64?, b: string?, c: timestamp?, d: int64");
  row_batch b{s};
  REQUIRE(parse_json_line(R"({"a":null,"b":null,"d":1})", s, b) == "");
  REQUIRE(parse_json_line(R"({"d":2})", s, b) == "");
  REQUIRE(parse_json_line(R"({"d":3,"a":3,"b":"","c":null})", s, b) == "");
  require_consistent(b);
  REQUIRE(b.rows == 3);
  CHECK(b.columns[0].is_null(0));
  CHECK(b.columns[1].is_null(0));
  CHECK(b.columns[2].is_null(0));
  CHECK(b.columns[0].is_null(1));
  CHECK(b.columns[2].is_null(1));
  CHECK_FALSE(b.columns[0].is_null(2));
  CHECK_FALSE(b.columns[1].is_null(2));
  CHECK(b.columns[1].str(2) == "");
  CHECK(b.columns[3].ints == std::vector<int64_t>{1, 2, 3});
  CHECK(json_problem_of(R"({"a":1})", s)
        == "field 'd' is missing and not nullable");
  CHECK(json_problem_of(R"({"d":null})", s)
        == "field 'd' is null and not nullable");
  CHECK(json_problem_of("{}", s) == "field 'd' is missing and not nullable");
  auto n = make_schema("a: int64?");
  row_batch e{n};
  REQUIRE(parse_json_line("{}", n, e) == "");
  CHECK(e.columns[0].is_null(0));
}

TEST_CASE("json: type problems") {
  auto s = make_schema("bytes: int64, d: double, ok: bool, name: string, "
                       "raw: bytes, ts: timestamp");
  auto with = [](std::string member) {
    // Every field fine but the one named.
    nlohmann::json j = {{"bytes", 1}, {"d", 1.5}, {"ok", true},
                        {"name", "n"}, {"raw", "r"}, {"ts", 5}};
    auto text = j.dump();
    auto key = member.substr(0, member.find(':'));
    auto at = text.find(key);
    auto end = text.find_first_of(",}", text.find(':', at));
    return text.substr(0, at) + member + text.substr(end);
  };
  CHECK(json_problem_of(with("\"bytes\":\"12\""), s)
        == "field 'bytes': \"12\" is a string, the schema says int64");
  CHECK(json_problem_of(with("\"bytes\":12.5"), s)
        == "field 'bytes': 12.5 is not an int64");
  CHECK(json_problem_of(with("\"bytes\":1e3"), s)
        == "field 'bytes': 1e3 is not an int64");
  CHECK(json_problem_of(with("\"bytes\":99999999999999999999"), s)
        == "field 'bytes': 99999999999999999999 is out of the int64 range");
  CHECK(json_problem_of(with("\"bytes\":true"), s)
        == "field 'bytes': true is a bool, the schema says int64");
  CHECK(json_problem_of(with("\"bytes\":{\"a\": [1, 2]}"), s)
        == "field 'bytes': {\"a\": [1, 2]} is an object, the schema says "
           "int64");
  CHECK(json_problem_of(with("\"bytes\":[]"), s)
        == "field 'bytes': [] is an array, the schema says int64");
  CHECK(json_problem_of(with("\"d\":\"1.5\""), s)
        == "field 'd': \"1.5\" is a string, the schema says double");
  CHECK(json_problem_of(with("\"d\":1e999"), s)
        == "field 'd': 1e999 is out of the double range");
  CHECK(json_problem_of(with("\"ok\":1"), s)
        == "field 'ok': 1 is a number, the schema says bool");
  CHECK(json_problem_of(with("\"ok\":\"true\""), s)
        == "field 'ok': \"true\" is a string, the schema says bool");
  CHECK(json_problem_of(with("\"name\":42"), s)
        == "field 'name': 42 is a number, the schema says string");
  CHECK(json_problem_of(with("\"raw\":false"), s)
        == "field 'raw': false is a bool, the schema says bytes");
  CHECK(json_problem_of(with("\"ts\":\"soon\""), s)
        == "field 'ts': \"soon\" is not a timestamp");
  CHECK(json_problem_of(with("\"ts\":1.5"), s)
        == "field 'ts': 1.5 is not a timestamp");
  CHECK(json_problem_of(with("\"ts\":99999999999999999999"), s)
        == "field 'ts': 99999999999999999999 is out of the timestamp range");
  CHECK(json_problem_of(with("\"ts\":\"99999999999999999999\""), s)
        == "field 'ts': \"99999999999999999999\" is out of the timestamp "
           "range");
  CHECK(json_problem_of(with("\"ts\":[\"2026-11-30\"]"), s)
        == "field 'ts': [\"2026-11-30\"] is an array, the schema says "
           "timestamp");
  std::string long_string(100, 'x');
  CHECK(json_problem_of(with("\"bytes\":\"" + long_string + "\""), s)
        == "field 'bytes': \"" + std::string(63, 'x')
             + "... is a string, the schema says int64");
}

TEST_CASE("json: syntax problems") {
  auto s = make_schema("a: int64?");
  CHECK(json_problem_of("", s) == "an empty line, not a JSON object");
  CHECK(json_problem_of("  \t", s) == "an empty line, not a JSON object");
  CHECK(json_problem_of("[1]", s) == "not a JSON object");
  CHECK(json_problem_of("42", s) == "not a JSON object");
  CHECK(json_problem_of("{", s)
        == "not valid JSON: expected '\"' (a member name) at column 2");
  CHECK(json_problem_of("{\"a\" 1}", s)
        == "not valid JSON: expected ':' at column 6");
  CHECK(json_problem_of("{\"a\":1 \"b\":2}", s)
        == "not valid JSON: expected ',' or '}' at column 8");
  CHECK(json_problem_of("{\"a\":1,}", s)
        == "not valid JSON: expected '\"' (a member name) at column 8");
  CHECK(json_problem_of("{\"a\":}", s)
        == "not valid JSON: an invalid value at column 6");
  CHECK(json_problem_of("{\"a\":", s)
        == "not valid JSON: expected a value at column 6");
  CHECK(json_problem_of("{\"a\":01}", s)
        == "not valid JSON: expected ',' or '}' at column 7");
  CHECK(json_problem_of("{\"a\":-}", s)
        == "not valid JSON: an invalid number at column 7");
  CHECK(json_problem_of("{\"a\":1.}", s)
        == "not valid JSON: an invalid number at column 8");
  CHECK(json_problem_of("{\"a\":nul}", s)
        == "not valid JSON: an invalid value at column 6");
  CHECK(json_problem_of("{\"a\":1} x", s)
        == "not valid JSON: text after the object at column 9");
  CHECK(json_problem_of("{\"a\":1}{}", s)
        == "not valid JSON: text after the object at column 8");
  CHECK(json_problem_of("{\"b\":\"abc}", s)
        == "not valid JSON: a string without its closing quote at column 11");
  CHECK(json_problem_of("{\"b\":\"a\\qc\"}", s)
        == "not valid JSON: an invalid escape at column 8");
  CHECK(json_problem_of("{\"b\":\"\\u12g4\"}", s)
        == "not valid JSON: an invalid \\u escape at column 7");
  CHECK(json_problem_of("{\"b\":\"a\tb\"}", s)
        == "not valid JSON: a control character in a string at column 8");
  CHECK(json_problem_of("{\"b\":[1,2}", s)
        == "not valid JSON: expected ',' or ']' at column 10");
  CHECK(json_problem_of("{\"b\":{\"c\" 1}}", s)
        == "not valid JSON: expected ':' at column 11");
  std::string deep = "{\"b\":" + std::string(70, '[') + std::string(70, ']')
                     + "}";
  CHECK(json_problem_of(deep, s)
        == "not valid JSON: nesting deeper than 64 levels at column 70");
  std::string ok_deep = "{\"b\":" + std::string(60, '[')
                        + std::string(60, ']') + ",\"a\":1}";
  CHECK(json_problem_of(ok_deep, s) == "");
}

TEST_CASE("json: a bad line appends nothing (rollback)") {
  auto s = make_schema("a: string?, b: int64?, c: bytes, d: double");
  row_batch b{s};
  REQUIRE(parse_json_line(R"({"a":"x","b":1,"c":"q","d":1})", s, b) == "");
  REQUIRE(parse_json_line(R"({"b":null,"c":"\"esc\"","d":2})", s, b) == "");
  b.push_time(9);
  auto before = b;
  for (std::string line : {R"({"a":null,"b":2,"c":"zz","d":"x"})",
                    R"({"a":"aaa","b":null,"c":"\n","d":1,"e":[})",
                    R"({"d":1,"c":"c","a":"a","b":"b"})",
                    R"({"a":"a","b":1,"d":1})", R"({"a":"a","b":1,"d":1,)"}) {
    CAPTURE(line);
    CHECK(parse_json_line(line, s, b) != "");
    require_consistent(b);
    CHECK(b == before);
    CHECK(b.times == before.times);
    CHECK(b.columns[0].nulls == std::vector<uint8_t>{0, 1});
    CHECK(b.columns[1].nulls == std::vector<uint8_t>{0, 1});
    CHECK(b.columns[2].nulls.empty());
  }
}

TEST_CASE("json: a repeated member counts once, the last") {
  auto s = make_schema("a: string, b: int64");
  row_batch b{s};
  REQUIRE(parse_json_line(R"({"a":"first","b":1,"a":"second","b":2})", s, b)
          == "");
  require_consistent(b);
  CHECK(b.columns[0].str(0) == "second");
  CHECK(b.columns[1].ints == std::vector<int64_t>{2});
}

TEST_CASE("json: strings and unicode") {
  auto s = make_schema("s: string, y: bytes");
  row_batch b{s};
  REQUIRE(parse_json_line(R"({"s":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t","y":"\u00ff\u0000\u20ac"})",
                          s, b)
          == "");
  REQUIRE(parse_json_line("{\"s\":\"café 😀\",\"y\":\"\xc3\xa9\"}", s, b)
          == "");
  REQUIRE(parse_json_line(R"({"s":"lone \ud800 \udc00 x","y":"","\u0073":"key escaped"})",
                          s, b)
          == "");
  require_consistent(b);
  CHECK(b.columns[0].str(0) == "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ / \b\f\n\r\t");
  CHECK(b.columns[1].str(0) == std::string("\xff\0\xe2\x82\xac", 5));
  CHECK(b.columns[0].str(1) == "café 😀");
  CHECK(b.columns[1].str(1) == "\xc3\xa9");
  CHECK(b.columns[0].str(2) == "key escaped");
}

TEST_CASE("json: writing") {
  auto s = make_schema("user: string, status: int64?, d: double, ok: bool, "
                       "raw: bytes, t: timestamp?");
  row_batch b{s};
  b.columns[0].push_str("al\"ice\\\n\t\x01 é 😀");
  b.columns[1].push_int(200);
  b.columns[2].push_float(0.1);
  b.columns[3].push_int(1);
  b.columns[4].push_str(std::string("\xff\xc3\xa9\xc3\0\xed\xa0\x80", 8));
  b.columns[5].push_int(utc_ms(2026, 11, 30, 10, 0, 1, 250));
  ++b.rows;
  b.columns[0].push_str("");
  b.columns[1].push_null();
  b.columns[2].push_float(std::nan(""));
  b.columns[3].push_int(0);
  b.columns[4].push_str("");
  b.columns[5].push_null();
  ++b.rows;
  CHECK(json_line(b, 0, s)
        == "{\"user\":\"al\\\"ice\\\\\\n\\t\\u0001 é 😀\",\"status\":200,"
           "\"d\":0.1,\"ok\":true,"
           "\"raw\":\"\\u00ffé\\u00c3\\u0000\\u00ed\\u00a0\\u0080\","
           "\"t\":\"2026-11-30T10:00:01.250Z\"}\n");
  CHECK(json_line(b, 1, s)
        == "{\"user\":\"\",\"status\":null,\"d\":\"NaN\",\"ok\":false,"
           "\"raw\":\"\",\"t\":null}\n");
  // What it writes is JSON (nlohmann agrees), and reads back the same.
  auto j = nlohmann::json::parse(json_line(b, 0, s));
  CHECK(j["user"] == "al\"ice\\\n\t\x01 é 😀");
  CHECK(j["status"] == 200);
  CHECK(j["d"] == 0.1);
  CHECK(j["t"] == "2026-11-30T10:00:01.250Z");
  row_batch back{s};
  for (size_t i = 0; i < b.rows; ++i)
    REQUIRE(parse_json_line(json_line(b, i, s), s, back) == "");
  require_consistent(back);
  CHECK(back == b);
}

TEST_CASE("json: round trip of every type with nulls") {
  auto s = make_schema("i: int64?, d: double?, b: bool?, s: string?, "
                       "y: bytes?, t: timestamp?");
  row_batch b{s};
  std::vector<double> doubles{0.0, -0.0, 0.1, 1.0 / 3, 1e300, -1e-300,
                              5e-324, HUGE_VAL, -HUGE_VAL,
                              std::numeric_limits<double>::max(), 123456789.0};
  for (size_t k = 0; k < doubles.size(); ++k) {
    auto i = static_cast<int64_t>(k);
    if (k % 3 == 2) {
      for (auto& c : b.columns)
        c.push_null();
    } else {
      b.columns[0].push_int(k == 0 ? std::numeric_limits<int64_t>::min()
                                   : k == 1
                                       ? std::numeric_limits<int64_t>::max()
                                       : i * 1000003);
      b.columns[1].push_float(doubles[k]);
      b.columns[2].push_int(k % 2);
      b.columns[3].push_str(std::string(k, 'a') + "\u00e9\x7f\"");
      b.columns[4].push_str(std::string(1, static_cast<char>(0x80 + k)));
      b.columns[5].push_int(-86400000 * i + i);
    }
    ++b.rows;
  }
  row_batch back{s};
  for (size_t i = 0; i < b.rows; ++i) {
    auto line = json_line(b, i, s);
    CAPTURE(line);
    CHECK_NOTHROW(nlohmann::json::parse(line));
    REQUIRE(parse_json_line(line, s, back) == "");
  }
  require_consistent(back);
  CHECK(back == b);
}

TEST_CASE("json: timestamps in strings with offsets") {
  auto s = make_schema("t: timestamp");
  row_batch b{s};
  for (std::string text :
       {"\"2026-11-30T10:00:01Z\"", "\"2026-11-30T12:00:01+02:00\"",
        "\"2026-11-30T05:00:01-05:00\"", "\"2026-11-30 10:00:01\"",
        "1796032801000", "\"1796032801000\""}) {
    CAPTURE(text);
    REQUIRE(parse_json_line(std::string("{\"t\":") + text + "}", s, b) == "");
  }
  for (auto t : b.columns[0].ints)
    CHECK(t == utc_ms(2026, 11, 30, 10, 0, 1));
}

// -- speed sanity -------------------------------------------------------------

TEST_CASE("a million lines (speed sanity, no timing asserts)") {
  auto s = make_schema("user: string, status: int64, bytes: int64, "
                       "ok: bool, t: timestamp, ms: double?");
  std::vector<std::string> csv_lines, json_lines;
  const size_t n = 1000000;
  for (size_t i = 0; i < 1000; ++i) {
    auto user = "user-" + std::to_string(i % 97);
    csv_lines.push_back(user + "," + std::to_string(200 + i % 7) + ","
                        + std::to_string(i * 7919) + ",true,"
                        + "2026-11-30T10:00:" + std::to_string(10 + i % 50)
                        + ".123Z," + (i % 5 == 0 ? "" : "12.5"));
    json_lines.push_back("{\"user\":\"" + user
                         + "\",\"status\":" + std::to_string(200 + i % 7)
                         + ",\"bytes\":" + std::to_string(i * 7919)
                         + ",\"ok\":true,\"t\":\"2026-11-30T10:00:"
                         + std::to_string(10 + i % 50) + ".123Z\",\"ms\":"
                         + (i % 5 == 0 ? "null" : "12.5") + "}");
  }
  auto run = [&](std::string what, const std::vector<std::string>& lines,
                 auto&& parse_one) {
    auto lines_of = [&](size_t i) -> const std::string& { return lines[i]; };
    row_batch b{s};
    size_t rows = 0, bytes = 0, problems = 0;
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) {
      bytes += lines_of(i % 1000).size() + 1;
      problems += !parse_one(lines_of(i % 1000), b).empty();
      if (b.rows == 4096) {
        rows += b.rows;
        b.clear();
      }
    }
    rows += b.rows;
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                              - start)
                  .count();
    CHECK(problems == 0);
    CHECK(rows == n);
    MESSAGE(what << ": " << n << " lines, " << bytes / 1e6 << " MB in "
                 << secs << " s (" << bytes / 1e6 / secs << " MB/s)");
  };
  run("csv", csv_lines, [&](std::string_view line, row_batch& b) {
    return parse_delimited(line, csv, s, b);
  });
  run("json lines", json_lines, [&](std::string_view line, row_batch& b) {
    return parse_json_line(line, s, b);
  });
}
