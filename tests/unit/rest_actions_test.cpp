// The REST API's write requests: reading their bodies (rest/body)
// and the table of savepoints and stops it started (rest/triggers).
#include <doctest/doctest.h>

#include <thread>

#include "messages/errors.hpp"
#include "rest/body.hpp"
#include "rest/context.hpp"
#include "rest/triggers.hpp"

using namespace weir;
using namespace weir::rest;
using nlohmann::json;

namespace {

/// The one line a malformed request is refused with.
template <class T>
std::string problem_of(const caf::expected<T>& x) {
  REQUIRE_FALSE(x);
  CHECK(x.error().code() == static_cast<uint8_t>(errc::invalid_request));
  return describe(x.error());
}

const job_id job_a = *job_id::parse("0123456789abcdef0123456789abcdef");
const job_id job_b = *job_id::parse("fedcba9876543210fedcba9876543210");

} // namespace

TEST_CASE("a trigger runs, then completes or fails, for its job only") {
  trigger_table t;
  auto a = t.start(job_a);
  auto b = t.start(job_a);
  CHECK(a.size() == 32);
  CHECK(a != b);
  REQUIRE(t.find(job_a, a));
  CHECK_FALSE(t.find(job_a, a)->done);
  CHECK(operation_status(*t.find(job_a, a))
        == json{{"status", {{"id", "IN_PROGRESS"}}}});
  CHECK_FALSE(t.find(job_b, a)); // another job's trigger id
  CHECK_FALSE(t.find(job_a, "nope"));

  t.complete(a, "/sp/savepoint-1");
  CHECK(operation_status(*t.find(job_a, a))
        == json{{"status", {{"id", "COMPLETED"}}},
                {"operation", {{"location", "file:/sp/savepoint-1"}}}});
  t.fail(b, "job 0123 is not running");
  CHECK(operation_status(*t.find(job_a, b))
        == json{{"status", {{"id", "COMPLETED"}}},
                {"operation",
                 {{"failure-cause",
                   {{"class", "weir.error"},
                    {"stack-trace", "job 0123 is not running"},
                           {"serialized-throwable",
                            "am9iIDAxMjMgaXMgbm90IHJ1bm5pbmc="}}}}}});
  t.complete("unknown", "/x"); // nothing happens
  CHECK(t.size() == 2);
}

TEST_CASE("a client's trigger id names one operation, however often sent") {
  trigger_table t;
  std::string mine = "00112233445566778899aabbccddeeff";
  auto first = t.start(job_a, mine);
  REQUIRE(first);
  CHECK(first->id == mine);
  CHECK(first->fresh);
  auto again = t.start(job_a, mine);
  REQUIRE(again);
  CHECK(again->id == mine);
  CHECK_FALSE(again->fresh); // Flink's idempotent triggering
  CHECK_FALSE(t.start(job_b, mine)); // another job's operation
  CHECK(t.size() == 1);
}

TEST_CASE("past its capacity the table drops the oldest finished triggers") {
  trigger_table t{2};
  auto a = t.start(job_a);
  auto b = t.start(job_a);
  auto c = t.start(job_a); // all three run: none is dropped
  CHECK(t.size() == 3);
  t.complete(b, "/b");     // b is the oldest finished one: dropped
  CHECK(t.size() == 2);
  CHECK_FALSE(t.find(job_a, b));
  CHECK(t.find(job_a, a));
  CHECK(t.find(job_a, c));
  t.complete(a, "/a");
  t.complete(c, "/c");
  auto d = t.start(job_a);
  CHECK(t.size() == 2);
  CHECK_FALSE(t.find(job_a, a));
  CHECK(t.find(job_a, c)->location == "/c");
  CHECK(t.find(job_a, d));
}

TEST_CASE("triggers are started and completed from several threads") {
  trigger_table t;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int n = 0; n < 100; ++n)
        t.complete(t.start(job_a), "/x");
    });
  for (auto& th : threads)
    th.join();
  CHECK(t.size() == 400);
}

TEST_CASE("a request body is a JSON object; an empty one is {}") {
  CHECK(*parse_body("") == json::object());
  CHECK(*parse_body(" \n") == json::object());
  CHECK(*parse_body(R"({"a": 1})") == json{{"a", 1}});
  CHECK(problem_of(parse_body("{\"a\": "))
        == "the request body is not JSON: parse error at line 1, "
           "column 7: syntax error while parsing value - unexpected "
           "end of input; expected '[', '{', or a literal");
  CHECK(problem_of(parse_body("[1]"))
        == "the request body must be a JSON object, not array");
  std::string deep(100000, '[');
  CHECK(problem_of(parse_body(R"({"spec": )" + deep))
        == "the request body nests deeper than 64 levels");
  CHECK(problem_of(parse_body(R"({"spec": )" + deep
                              + std::string(100000, ']') + "}"))
        == "the request body nests deeper than 64 levels");
  CHECK(problem_of(parse_body(R"({"to": 1e400})"))
        == "the request body is not JSON: number overflow parsing '1e400'");
}

TEST_CASE("body fields: defaults when absent or null, one line when wrong") {
  auto body = json::parse(R"({"dir": "/sp", "flag": true, "n": 4,
    "none": null, "libs": ["a", "b"], "conf": {"k": "v", "m": 3, "b": false},
    "bad": 1, "badlibs": ["a", 2], "badconf": {"k": [1]}, "big": 99})");
  CHECK(*string_field(body, "dir", "x") == "/sp");
  CHECK(*string_field(body, "none", "x") == "x");
  CHECK(*string_field(body, "absent", "x") == "x");
  CHECK(*bool_field(body, "flag", false) == true);
  CHECK(*bool_field(body, "absent", false) == false);
  CHECK(*int_field(body, "n", 1, 10) == 4);
  CHECK(*int_field(body, "absent", 1, 10) == std::nullopt);
  CHECK(*strings_field(body, "libs") == std::vector<std::string>{"a", "b"});
  CHECK(*text_map_field(body, "conf")
        == std::vector<std::pair<std::string, std::string>>{
          {"b", "false"}, {"k", "v"}, {"m", "3"}});

  CHECK(problem_of(string_field(body, "bad", "x"))
        == "field 'bad' must be a string, not number");
  CHECK(problem_of(bool_field(body, "dir", false))
        == "field 'dir' must be true or false, not string");
  CHECK(problem_of(int_field(body, "big", 1, 10))
        == "field 'big': 99 is outside [1, 10]");
  CHECK(problem_of(int_field(body, "dir", 1, 10))
        == "field 'dir' must be a whole number, not string");
  CHECK(problem_of(strings_field(body, "badlibs"))
        == "field 'badlibs[1]' must be a string, not number");
  CHECK(problem_of(text_map_field(body, "badconf"))
        == "field 'badconf.k' must be a string, number or boolean, not array");
}

TEST_CASE("a directory of a request is absolute, file: URIs included") {
  CHECK(*absolute_directory("/sp", "f") == "/sp");
  CHECK(*absolute_directory("file:///sp", "f") == "/sp");
  CHECK(*absolute_directory("file:/sp", "f") == "/sp");
  CHECK(problem_of(absolute_directory("sp", "target-directory"))
        == "field 'target-directory': 'sp' is not an absolute path");
  CHECK(*savepoint_directory("", "f") == "");
}

TEST_CASE("a body whose tree would take more than 16 MiB is refused while "
          "parsing") {
  // Two bytes a value in the text, some 32 as a tree.
  std::string dense = R"({"spec": [)";
  for (int i = 0; i < 1'000'000; ++i)
    dense += "0,";
  dense += "0]}";
  CHECK(problem_of(parse_body(dense))
        == "the request body would take more than 16 MiB once "
           "parsed (a job spec takes far less)");
  CHECK(refused(parse_body(dense).error()).status == 413);
  auto big_string = R"({"spec": ")" + std::string(17 << 20, 'x') + "\"}";
  CHECK_FALSE(parse_body(big_string));
  auto fits = R"({"spec": ")" + std::string(1 << 20, 'x') + "\"}";
  CHECK(parse_body(fits));
}
