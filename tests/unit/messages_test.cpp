#include <doctest/doctest.h>

#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "messages/ids.hpp"
#include "messages/job_graph.hpp"
#include "messages/record.hpp"
#include "messages/row_batch.hpp"
#include "messages/states.hpp"

using namespace weir;

TEST_CASE("job ids are 32 lowercase hex characters and round-trip") {
  auto id = job_id::random();
  auto text = id.to_string();
  CHECK(text.size() == 32);
  CHECK(text.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(job_id::parse(text) == id);
  CHECK_FALSE(job_id::parse("xyz").has_value());
  CHECK_FALSE(job_id::parse(std::string(32, 'g')).has_value());
  CHECK(job_id::parse("000000000000000a00000000000000ff")->lo == 0xff);
}

TEST_CASE("execution state transitions follow Flink") {
  using es = execution_state;
  CHECK(is_valid_transition(es::created, es::scheduled));
  CHECK(is_valid_transition(es::deploying, es::initializing));
  CHECK(is_valid_transition(es::running, es::finished));
  CHECK(is_valid_transition(es::running, es::failed));
  CHECK(is_valid_transition(es::deploying, es::canceling));
  CHECK_FALSE(is_valid_transition(es::created, es::finished));
  CHECK_FALSE(is_valid_transition(es::finished, es::running));
  CHECK_FALSE(is_valid_transition(es::running, es::deploying));
  CHECK_FALSE(is_valid_transition(es::canceling, es::running));
  CHECK(to_string(es::initializing) == "INITIALIZING");
}

TEST_CASE("job state transitions follow Flink") {
  using js = job_state;
  CHECK(is_valid_transition(js::created, js::running));
  CHECK(is_valid_transition(js::running, js::finished));
  CHECK(is_valid_transition(js::running, js::failing));
  CHECK(is_valid_transition(js::failing, js::failed));
  CHECK(is_valid_transition(js::cancelling, js::canceled));
  CHECK_FALSE(is_valid_transition(js::finished, js::running));
  CHECK_FALSE(is_valid_transition(js::created, js::finished));
  CHECK(to_string(js::cancelling) == "CANCELLING");
  CHECK(parse_job_state("FINISHED") == js::finished);
}

namespace {

job_graph three_vertices() {
  job_graph g;
  g.vertices = {{"a", "sequence", {}, 2}, {"b", "map", {}, 2},
                {"c", "discard", {}, 1}};
  g.edges = {{"a", "b", partitioning::forward},
             {"b", "c", partitioning::rebalance}};
  return g;
}

/// The one line an invalid shape is refused with.
std::string shape_problem(const job_graph& g) {
  auto err = check_job_graph_shape(g);
  CHECK(err.code() == static_cast<uint8_t>(errc::invalid_job));
  return describe(err);
}

} // namespace

TEST_CASE("job graph shape checks name the vertex or edge") {
  auto g = three_vertices();
  CHECK_FALSE(check_job_graph_shape(g));
  CHECK(topological_order(g) == std::vector<int32_t>{0, 1, 2});

  auto dangling = g;
  dangling.edges.push_back({"b", "zz", partitioning::hash});
  CHECK(shape_problem(dangling) == "edge 'b' -> 'zz': no vertex 'zz'");

  auto cycle = g;
  cycle.edges.push_back({"c", "b", partitioning::hash});
  CHECK(shape_problem(cycle) == "vertex 'b': part of a cycle");

  auto forward = g;
  forward.edges[1].part = partitioning::forward;
  CHECK(shape_problem(forward)
        == "edge 'b' -> 'c': forward partitioning needs equal parallelism, "
           "but 'b' has 2 and 'c' has 1");

  auto zero = g;
  zero.vertices[0].parallelism = 0;
  CHECK(shape_problem(zero)
        == "vertex 'a': parallelism 0 is outside [1, 32768]");

  // Vertex ids name state directories and checkpoint files.
  auto slash = g;
  slash.vertices[2].id = "../../c";
  slash.edges[1].to = "../../c";
  CHECK(shape_problem(slash) == "vertex id '../../c' is not a file name");
}

TEST_CASE("records print as key, tab, value") {
  std::string out;
  append_text_line(out, record::integer("word", 3));
  append_text_line(out, record::string("", "a line"));
  append_text_line(out, record::integer("", -7));
  CHECK(out == "word\t3\na line\n-7\n");
}

TEST_CASE("a file name is one path component; a content hash 32 hex digits") {
  CHECK(is_file_name("libwords.so"));
  CHECK(is_file_name("..hidden"));
  CHECK(is_file_name("a b\tc"));
  CHECK(is_file_name(std::string(255, 'x')));
  CHECK_FALSE(is_file_name(""));
  CHECK_FALSE(is_file_name("."));
  CHECK_FALSE(is_file_name(".."));
  CHECK_FALSE(is_file_name("../../x"));
  CHECK_FALSE(is_file_name("/etc/passwd"));
  CHECK_FALSE(is_file_name("dir/"));
  CHECK_FALSE(is_file_name(std::string("a\0b", 3)));
  CHECK_FALSE(is_file_name(std::string(256, 'x')));

  CHECK(is_content_hash("0123456789abcdef0123456789abcdef"));
  CHECK_FALSE(is_content_hash("0123456789ABCDEF0123456789abcdef"));
  CHECK_FALSE(is_content_hash("0123456789abcdef0123456789abcde"));
  CHECK_FALSE(is_content_hash("0123456789abcdef0123456789abcdef0"));
  CHECK_FALSE(is_content_hash("../../../../../../../../../../xy"));
  CHECK_FALSE(is_content_hash(""));
}

TEST_CASE("a refused name or hash is named in one line, printable and cut") {
  // None for a good one; otherwise invalid_job and the line.
  auto line = [](const caf::error& err) {
    CHECK(err.code() == static_cast<uint8_t>(errc::invalid_job));
    return describe(err);
  };
  CHECK_FALSE(check_file_name("library name", "libwords.so"));
  CHECK(line(check_file_name("library name", "../../x"))
        == "library name '../../x' is not a file name");
  CHECK(line(check_file_name("file name", ""))
        == "file name '' is not a file name");
  CHECK(line(check_file_name("file name", "x/\ny"))
        == "file name 'x/\\x0ay' is not a file name");
  CHECK(line(check_file_name("file name", std::string(300, 'x')))
        == "file name '" + std::string(64, 'x')
             + "...' (300 bytes) is not a file name");
  CHECK_FALSE(check_content_hash("blob hash", std::string(32, 'f')));
  CHECK(line(check_content_hash("blob hash", "zz"))
        == "blob hash 'zz' is not a content hash (32 lowercase hex digits)");
}

TEST_CASE("user code: the first bad library or file name or hash") {
  auto hash = std::string(32, 'a');
  user_code code;
  code.libraries = {{"libok.so", hash, "/tmp/libok.so"}};
  code.files = {{"data.txt", hash, ""}};
  code.classpath = {"/opt/libs/../shared"}; // paths on purpose
  CHECK_FALSE(check_user_code(code));
  code.files[0].hash = "XYZ";
  CHECK(describe(check_user_code(code))
        == "file hash 'XYZ' is not a content hash (32 lowercase hex digits)");
  code.libraries.push_back({"../../x", hash, ""});
  CHECK(describe(check_user_code(code))
        == "library name '../../x' is not a file name");
}

TEST_CASE("a batch's binary form round-trips; encode_into reuses its buffer") {
  schema s{{{"name", field_type::string, true},
            {"n", field_type::int64, false},
            {"x", field_type::float64, false}}};
  row_batch b{s};
  b.columns[0].push_str("alpha");
  b.columns[0].push_null();
  b.columns[1].push_int(-7);
  b.columns[1].push_int(INT64_MAX);
  b.columns[2].push_float(0.5);
  b.columns[2].push_float(-1e300);
  b.rows = 2;
  b.push_time(10);
  b.push_time(20);
  auto bytes = encode(b);
  row_batch back;
  REQUIRE(decode(bytes, back));
  CHECK(back == b);
  std::string buffer = "left over from an earlier batch";
  encode_into(b, buffer);
  CHECK(buffer == bytes);
  // Bytes from the network are never trusted: a cut batch is refused.
  CHECK_FALSE(decode(std::string_view{bytes}.substr(0, bytes.size() - 1),
                     back));
}
