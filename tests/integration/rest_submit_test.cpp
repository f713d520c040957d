// Job submission over REST (a library uploaded first, as Flink's
// /jars/upload takes jars) and the REST API over HTTPS, on a session
// cluster of real processes.
#include <doctest/doctest.h>

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <algorithm>
#include <string>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "rest_client.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

std::string shouted_sample() {
  auto text = read_file("examples/data/sample.txt");
  for (auto& c : text)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

/// examples/user_code/upper.json, writing to file `out`.
json upper_spec(const std::string& out) {
  return json{
    {"name", "upper"},
    {"params", {{"input", "examples/data/sample.txt"}}},
    {"vertices",
     {{{"id", "lines"}, {"operator", "text_file"},
       {"params", {{"path", "${input}"}}}},
      {{"id", "shout"}, {"operator", "upper"}},
      {{"id", "out"}, {"operator", "text_file"}, {"params", {{"path", out}}}}}},
    {"edges",
     {{{"from", "lines"}, {"to", "shout"}},
      {{"from", "shout"}, {"to", "out"}}}}};
}

/// `weir cert` in `sec`: ca.pem, jm.pem (a node's), alice.pem (a client's).
void make_certificates(const temp_dir& sec) {
  REQUIRE(run_weir({"cert", "ca", "--dir", sec.path()}).exit_code == 0);
  REQUIRE(run_weir({"cert", "node", "--dir", sec.path(), "--name", "jm"})
            .exit_code == 0);
  REQUIRE(run_weir({"cert", "client", "--dir", sec.path(), "--name", "alice"})
            .exit_code == 0);
}

/// Built-in operators only: examples/data/sample.txt copied to `out`.
json copy_spec(const std::string& out) {
  return json{
    {"name", "copy"},
    {"vertices",
     {{{"id", "lines"}, {"operator", "text_file"},
       {"params", {{"path", "examples/data/sample.txt"}}}},
      {{"id", "out"}, {"operator", "text_file"}, {"params", {{"path", out}}}}}},
    {"edges", {{{"from", "lines"}, {"to", "out"}}}}};
}

} // namespace

TEST_CASE("a library uploaded over REST runs in a job POSTed with it") {
  rest_cluster c;
  c.add_worker("tm-1", 2);
  auto up = upload(c.url, "libweir_example_ops.so", read_file(example_ops()));
  REQUIRE(up.status == 200);
  std::string library = up.body["filename"];
  CHECK(up.body["status"] == "success");
  CHECK(library.size() == 32 + 1 + std::string{"libweir_example_ops.so"}.size());
  CHECK(library.substr(32) == "_libweir_example_ops.so");

  auto out = c.dir.file("shouted.txt");
  auto r = post(c.url, "/jobs",
                {{"spec", upper_spec(out)}, {"libraries", {library}}});
  INFO(r.body.dump());
  REQUIRE(r.status == 202);
  std::string id = r.body["jobid"];
  REQUIRE(eventually([&] {
    return get(c.url, "/jobs/" + id).body["state"] == "FINISHED";
  }));
  CHECK(read_file(out) == shouted_sample());
  // The job is the cluster's like any other.
  auto listed = c.client({"list", "-a"});
  CHECK(listed.out.find(id) != std::string::npos);
}

TEST_CASE("submission errors: 400 naming the problem, 404 when disabled") {
  rest_cluster c{{"-Drest.server.max-content-length=1m"}};
  auto refused = [&](const json& request, const std::string& message) {
    auto r = post(c.url, "/jobs", request);
    CHECK(r.status == 400);
    CHECK(r.body == errors(message));
  };
  auto out = c.dir.file("x.txt");
  refused(json::object(), "field 'spec' must be a weir job spec (a JSON "
                          "object)");
  refused({{"spec", "upper.json"}}, "field 'spec' must be a weir job spec (a "
                                    "JSON object)");
  // Without its library the spec's operator is unknown: the CLI's error.
  auto unknown_op = post(c.url, "/jobs", {{"spec", upper_spec(out)}});
  CHECK(unknown_op.status == 400);
  CHECK(unknown_op.body["errors"][0].get<std::string>().rfind(
          "spec: vertices[1] ('shout'): unknown operator 'upper'", 0)
        == 0);
  auto no_op = upper_spec(out);
  no_op["vertices"][1].erase("operator");
  refused({{"spec", no_op}}, "spec: vertices[1].operator: missing");
  refused({{"spec", upper_spec(out)}, {"libraries", {"nope.so"}}},
          "field 'libraries[0]': no uploaded library 'nope.so' (POST "
          "/jars/upload gives the name)");
  refused({{"spec", upper_spec(out)}, {"libraries", "x"}},
          "field 'libraries' must be an array of strings, not string");
  refused({{"spec", upper_spec(out)}, {"parallelism", 0}},
          "field 'parallelism': 0 is outside [1, 2147483647]");
  refused({{"spec", upper_spec(out)}, {"config", {{"no.such.key", "1"}}}},
          "spec: config: unknown key 'no.such.key' (see "
          "docs/configuration.md)");
  auto bad_json = post_text(c.url, "/jobs", "{\"spec\": ");
  CHECK(bad_json.status == 400);
  CHECK(bad_json.body["errors"][0].get<std::string>().rfind(
          "the request body is not JSON: ", 0)
        == 0);

  auto not_elf = upload(c.url, "lib.so", "not a library");
  CHECK(not_elf.status == 400);
  CHECK(not_elf.body == errors("'lib.so' is not a shared library (no ELF "
                               "header)"));
  auto wrong_field = upload(c.url, "lib.so", "\x7f" "ELF", "file");
  CHECK(wrong_field.status == 400);
  CHECK(wrong_field.body == errors("expected multipart/form-data with the "
                                   "library in field 'jarfile'"));
  // Refused on its Content-Length, before the body: sent without one (a
  // client still writing when the server answers and closes gets EPIPE).
  auto host = c.url.substr(std::string{"http://"}.size());
  auto too_big = raw_exchange(c.url, "POST /jars/upload HTTP/1.1\r\nHost: "
                                       + host
                                       + "\r\nContent-Type: multipart/"
                                         "form-data; boundary=x\r\n"
                                         "Content-Length: 2097152\r\n"
                                         "Connection: close\r\n\r\n");
  CHECK(too_big.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(too_big.find(errors("the request body is larger than 1048576 bytes "
                            "(rest.server.max-content-length)")
                       .dump())
        != std::string::npos);

  rest_cluster off{{"-Dweb.submit.enable=false"}};
  auto disabled = post(off.url, "/jobs", {{"spec", upper_spec(out)}});
  CHECK(disabled.status == 404);
  CHECK(disabled.body == errors("Not found: /jobs"));
}

TEST_CASE("the REST API over HTTPS, with and without client certificates") {
  temp_dir sec;
  make_certificates(sec);
  std::vector<std::string> tls{
    "-Dsecurity.ssl.rest.enabled=true",
    "-Dsecurity.ssl.rest.certificate=" + sec.file("jm.pem"),
    "-Dsecurity.ssl.rest.key=" + sec.file("jm-key.pem")};
  auto ca = sec.file("ca.pem");
  {
    rest_cluster c{tls};
    REQUIRE(c.url.rfind("https://127.0.0.1:", 0) == 0);
    httplib::Client client{c.url};
    client.set_ca_cert_path(ca);
    client.enable_server_certificate_verification(true);
    auto jobs = answered(client.Get("/jobs"));
    CHECK(jobs.status == 200);
    CHECK(jobs.body == json{{"jobs", json::array()}});
    // Plain HTTP on that port gets no answer.
    httplib::Client plain{"http://" + c.url.substr(8)};
    plain.set_read_timeout(5s);
    CHECK_FALSE(plain.Get("/jobs"));
  }
  auto mutual = tls;
  mutual.push_back("-Dsecurity.ssl.rest.authentication-enabled=true");
  mutual.push_back("-Dsecurity.ssl.rest.trust-certificates=" + ca);
  {
    rest_cluster c{mutual};
    httplib::Client anonymous{c.url};
    anonymous.set_ca_cert_path(ca);
    CHECK_FALSE(anonymous.Get("/jobs"));
    httplib::Client alice{c.url, sec.file("alice.pem"),
                          sec.file("alice-key.pem")};
    alice.set_ca_cert_path(ca);
    alice.enable_server_certificate_verification(true);
    CHECK(answered(alice.Get("/jobs")).status == 200);
  }
  // Unusable files end the jobmanager at once, naming the key and the file.
  temp_dir dir;
  auto missing_key = run_weir({"jobmanager", "--port", "0", "--state-dir",
                               dir.file("state"), "-Drest.port=0",
                               "-Dsecurity.ssl.rest.enabled=true",
                               "-Dsecurity.ssl.rest.certificate="
                                 + sec.file("jm.pem")},
                              30s);
  CHECK(missing_key.exit_code == 2);
  CHECK(missing_key.err.find("weir jobmanager: security.ssl.rest.key is not "
                             "set (security.ssl.rest.enabled is true)\n")
        != std::string::npos);
  auto bad_key = run_weir({"jobmanager", "--port", "0", "--state-dir",
                            dir.file("state2"), "-Drest.port=0",
                            "-Dsecurity.ssl.rest.enabled=true",
                            "-Dsecurity.ssl.rest.certificate="
                              + sec.file("jm.pem"),
                            "-Dsecurity.ssl.rest.key=" + sec.file("jm.pem")},
                           30s);
  CHECK(bad_key.exit_code == 2);
  CHECK(bad_key.err.find("weir jobmanager: security.ssl.rest.key: "
                          + sec.file("jm.pem") + ": not a PEM private key (or "
                          "one with a passphrase)\n")
        != std::string::npos);
}

TEST_CASE("with internal TLS the REST API needs a certificate from the "
          "cluster's CA; told otherwise, it answers reads only") {
  temp_dir sec;
  make_certificates(sec);
  auto ca = sec.file("ca.pem");
  std::vector<std::string> internal{
    "-Dsecurity.ssl.internal.enabled=true",
    "-Dsecurity.ssl.internal.certificate=" + sec.file("jm.pem"),
    "-Dsecurity.ssl.internal.key=" + sec.file("jm-key.pem"),
    "-Dsecurity.ssl.internal.trust-certificates=" + ca};
  temp_dir dir;
  auto out = dir.file("out");
  {
    rest_cluster c{internal};
    REQUIRE(c.url.rfind("https://127.0.0.1:", 0) == 0);
    httplib::Client anonymous{c.url};
    anonymous.set_ca_cert_path(ca);
    anonymous.set_read_timeout(5s);
    CHECK_FALSE(anonymous.Get("/jobs"));
    CHECK_FALSE(anonymous.Post("/jobs", json{{"spec", copy_spec(out)}}.dump(),
                               "application/json"));
    httplib::Client alice{c.url, sec.file("alice.pem"),
                          sec.file("alice-key.pem")};
    alice.set_ca_cert_path(ca);
    alice.enable_server_certificate_verification(true);
    CHECK(answered(alice.Get("/jobs")).status == 200);
    auto submitted = answered(alice.Post(
      "/jobs", json{{"spec", copy_spec(out)}}.dump(), "application/json"));
    CHECK(submitted.status == 202);
  }
  auto plain = internal;
  plain.push_back("-Dsecurity.ssl.rest.enabled=false");
  {
    rest_cluster c{plain};
    REQUIRE(c.url.rfind("http://127.0.0.1:", 0) == 0);
    CHECK(get(c.url, "/jobs").status == 200);
    auto refused = post(c.url, "/jobs", {{"spec", copy_spec(out)}});
    CHECK(refused.status == 403);
    CHECK(refused.body
          == errors("this cluster uses TLS: a change over REST needs HTTPS "
                    "with a client certificate from its CA "
                    "(security.ssl.rest.authentication-enabled; see "
                    "docs/security.md)"));
    CHECK(patch(c.url, "/jobs/00000000000000000000000000000000").status
          == 403);
  }
}

TEST_CASE("a REST API beyond loopback needs a decision on client "
          "authentication") {
  temp_dir dir;
  auto r = run_weir({"jobmanager", "--port", "0", "--state-dir",
                     dir.file("state"), "-Drest.port=0",
                     "-Drest.bind-address=0.0.0.0"},
                    30s);
  CHECK(r.exit_code == 2);
  CHECK(r.err
        == "weir jobmanager: refusing to serve the REST API on 0.0.0.0 "
           "without client authentication: set "
           "security.ssl.rest.authentication-enabled: true (with "
           "security.ssl.rest.*; see docs/security.md), or false to answer "
           "anyone who can reach it\n");
  CHECK_FALSE(exists(dir.file("state"))); // refused before anything opened
  running_process jm{{std::getenv("WEIR_BIN"), "jobmanager", "--port", "0",
                      "--state-dir", dir.file("state"), "-Drest.port=0",
                      "-Drest.bind-address=0.0.0.0",
                      "-Dsecurity.ssl.rest.authentication-enabled=false"}};
  CHECK(jm.wait_for_stderr(
    "WARNING: the REST API on 0.0.0.0 has no client authentication "
    "(security.ssl.rest.authentication-enabled): anyone who can reach it can "
    "see, cancel and submit jobs\n",
    30s));
  jm.signal(SIGTERM);
  CHECK(jm.finish(30s).exit_code == 0);
}

TEST_CASE("a submission's libraries load in a child process, never in the "
          "jobmanager; a bad constructor fails the submission only") {
  temp_dir modes;
  auto mode_file = modes.file("mode");
  auto pids = modes.file("pids");
  auto set_mode = [&](const std::string& mode) {
    std::ofstream{mode_file} << mode << "\n";
  };
  set_mode("");
  ::setenv("WEIR_TEST_CONSTRUCTOR", mode_file.c_str(), 1);
  rest_cluster c{{"-Drest.submit.inspection-timeout=3 s",
                  "-Drest.submit.inspection-memory=256m"}};
  c.add_worker("tm-1", 1);
  ::unsetenv("WEIR_TEST_CONSTRUCTOR");
  auto up = upload(c.url, "libweir_test_constructors.so",
                   read_file(test_plugin("constructors")));
  REQUIRE(up.status == 200);
  json library = {up.body["filename"]};
  auto out = c.dir.file("copy.txt");

  set_mode("record:" + pids);
  auto r = post(c.url, "/jobs", {{"spec", copy_spec(out)}, {"libraries", library}});
  REQUIRE(r.status == 202);
  std::string id = r.body["jobid"];
  REQUIRE(eventually([&] {
    return get(c.url, "/jobs/" + id).body["state"] == "FINISHED";
  }));
  CHECK(read_file(out) == read_file("examples/data/sample.txt"));
  auto loaded = lines_of(read_file(pids));
  // The inspecting child and the taskmanager; never the jobmanager.
  CHECK(loaded.size() >= 2);
  auto jm = std::to_string(c.jobmanager->pid());
  CHECK(std::find(loaded.begin(), loaded.end(), jm) == loaded.end());
  CHECK(std::find(loaded.begin(), loaded.end(),
                  std::to_string(c.workers[0]->pid()))
        != loaded.end());

  auto refused = [&](const std::string& mode, const std::string& why) {
    set_mode(mode);
    auto r = post(c.url, "/jobs",
                  {{"spec", copy_spec(out)}, {"libraries", library}});
    CHECK(r.status == 400);
    CHECK(r.body == errors("field 'libraries': the process that loads them "
                           "to check the spec failed: " + why));
  };
  refused("crash", "it was killed by signal 11 (SIGSEGV)");
  refused("hang", "it did not finish within 3000 ms "
                  "(rest.submit.inspection-timeout)");
  refused("allocate", "it needed more than its 256 MiB of address space "
                      "(rest.submit.inspection-memory)");
  set_mode("");
  CHECK(get(c.url, "/jobs").status == 200);
}

TEST_CASE("a 100 MiB JSON body takes no more than about twice its size") {
  rest_cluster c;
  auto before = status_kib(c.jobmanager->pid(), "VmHWM:");
  // A million values are 2 bytes each as text and some 32 as a tree.
  std::string body = R"({"spec": [)";
  body.reserve(100u << 20);
  while (body.size() < (100u << 20) - 16)
    body += "0,";
  body += "0]}";
  auto r = post_text(c.url, "/jobs", body);
  CHECK(r.status == 413);
  CHECK(r.body == errors("the request body would take more than 16 MiB once "
                         "parsed (a job spec takes far less)"));
  auto grown_mib = (status_kib(c.jobmanager->pid(), "VmHWM:") - before) / 1024;
  MESSAGE("a 100 MiB body: the jobmanager's peak memory grew by " << grown_mib
          << " MiB");
  CHECK(grown_mib <= 160);
  CHECK(get(c.url, "/jobs").status == 200);
}
