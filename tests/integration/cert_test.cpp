// `weir cert`: the three commands of a secure cluster, checked with the
// openssl tool; bad input is one line and exit code 2.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "process.hpp"

using namespace weir::test;

namespace {

constexpr const char* openssl_tool = "/usr/bin/openssl";

/// `weir cert ARGS...`, expected to fail with exactly `message`.
void expect_refused(const std::vector<std::string>& args,
                    const std::string& message) {
  std::vector<std::string> argv{"cert"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_weir(argv);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "weir cert: " + message + "\n");
}

} // namespace

TEST_CASE("three commands make a CA, a node and a client certificate") {
  temp_dir dir;
  auto sec = dir.file("sec");
  auto ca = run_weir({"cert", "ca", "--dir", sec});
  REQUIRE(ca.exit_code == 0);
  CHECK(ca.out.find("wrote " + sec + "/ca.pem, " + sec + "/ca-key.pem (CA "
                    "weir-ca, valid 3650 days)\n")
        == 0);
  auto node = run_weir({"cert", "node", "--dir", sec, "--name", "tm1"});
  REQUIRE(node.exit_code == 0);
  CHECK(lines_of(node.out).at(0)
        == "wrote " + sec + "/tm1.pem, " + sec + "/tm1-key.pem (node "
           "certificate for tm1, valid 365 days; hosts 127.0.0.1, localhost)");
  CHECK(lines_of(node.out).at(1)
        == "use: -Dsecurity.ssl.internal.enabled=true "
           "-Dsecurity.ssl.internal.certificate=" + sec + "/tm1.pem "
           "-Dsecurity.ssl.internal.key=" + sec + "/tm1-key.pem "
           "-Dsecurity.ssl.internal.trust-certificates=" + sec + "/ca.pem");
  CHECK(node.out.find("  security.ssl.internal.key: " + sec + "/tm1-key.pem\n")
        != std::string::npos);
  auto client = run_weir({"cert", "client", "--dir", sec, "--name", "alice",
                          "--days", "1"});
  REQUIRE(client.exit_code == 0);
  CHECK(lines_of(client.out).at(0)
        == "wrote " + sec + "/alice.pem, " + sec + "/alice-key.pem (client "
           "certificate for alice, valid 1 day)");
  for (auto name : {"tm1", "alice"}) {
    auto verify = run_process({openssl_tool, "verify", "-CAfile",
                               sec + "/ca.pem", sec + "/" + name + ".pem"});
    CHECK(verify.exit_code == 0);
    CHECK(verify.out == sec + "/" + name + ".pem: OK\n");
  }
  auto verify_server = run_process({openssl_tool, "verify", "-purpose",
                                    "sslserver", "-CAfile", sec + "/ca.pem",
                                    sec + "/alice.pem"});
  CHECK(verify_server.exit_code != 0); // a client certificate serves nobody
  struct stat st;
  REQUIRE(::stat((sec + "/ca-key.pem").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("--host puts addresses and names in the node certificate") {
  temp_dir dir;
  REQUIRE(run_weir({"cert", "ca", "--dir", dir.path()}).exit_code == 0);
  auto node = run_weir({"cert", "node", "--dir", dir.path(), "--name", "tm2",
                        "--host", "10.0.0.7", "--host", "tm2.example.com"});
  REQUIRE(node.exit_code == 0);
  CHECK(node.out.find("hosts 10.0.0.7, tm2.example.com)\n")
        != std::string::npos);
  auto text = run_process({openssl_tool, "x509", "-noout", "-ext",
                           "subjectAltName", "-subject", "-in",
                           dir.file("tm2.pem")});
  CHECK(text.out.find("IP Address:10.0.0.7, DNS:tm2.example.com")
        != std::string::npos);
  CHECK(text.out.find("subject=OU = weir-node, CN = tm2") != std::string::npos);
}

TEST_CASE("a relative --dir is printed as an absolute path") {
  temp_dir dir;
  auto relative = std::filesystem::relative(dir.path()).string();
  REQUIRE(relative.rfind("..", 0) == 0);
  auto ca = run_weir({"cert", "ca", "--dir", relative + "/./rel/"});
  REQUIRE(ca.exit_code == 0);
  CHECK(ca.out.find("wrote " + dir.path() + "/rel/ca.pem, " + dir.path()
                    + "/rel/ca-key.pem ")
        == 0);
}

TEST_CASE("bad input: one line, exit code 2, nothing written") {
  temp_dir dir;
  auto d = dir.path();
  expect_refused({}, "missing KIND: expected ca, node or client (see weir "
                     "cert --help)");
  expect_refused({"server", "--dir", d}, "unknown kind 'server': expected ca, "
                                         "node or client (see weir cert "
                                         "--help)");
  expect_refused({"ca"}, "missing --dir DIR (see weir cert ca --help)");
  expect_refused({"node", "--dir", d}, "missing --name NAME (see weir cert "
                                       "node --help)");
  expect_refused({"ca", "--dir", d, "--days", "0"},
                 "--days: expected a value in [1, 36500], got '0'");
  expect_refused({"ca", "--dir", d, "--days", "a year"},
                 "--days: expected a value in [1, 36500], got 'a year'");
  expect_refused({"node", "--dir", d, "--name", "tm1"},
                 d + "/ca.pem: cannot read: No such file or directory");
  REQUIRE(run_weir({"cert", "ca", "--dir", d}).exit_code == 0);
  expect_refused({"ca", "--dir", d}, d + "/ca.pem: already exists (not "
                                         "overwritten)");
  expect_refused({"client", "--dir", d, "--name", "../alice"},
                 "name '../alice': not a plain file name (1 to 64 letters, "
                 "digits, '.', '-', '_')");
  expect_refused({"node", "--dir", d, "--name", "tm1", "--host", "a b"},
                 "host 'a b': neither an IP address nor a DNS name");
  auto outlives = run_weir({"cert", "node", "--dir", d, "--name", "tm1",
                            "--days", "36500"});
  CHECK(outlives.exit_code == 2);
  CHECK(outlives.err.rfind("weir cert: " + d + "/ca.pem: the CA is valid "
                                               "until ",
                           0)
        == 0);
  CHECK(outlives.err.find(" would outlive it (fewer days, or a new CA)\n")
        != std::string::npos);
  CHECK_FALSE(exists(d + "/tm1.pem"));
  CHECK_FALSE(exists(d + "/tm1-key.pem"));
  CHECK_FALSE(exists(dir.file("alice.pem")));
}

TEST_CASE("weir --help lists cert") {
  auto help = run_weir({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("\n  cert ca|node|client --dir DIR") != std::string::npos);
  auto cert_help = run_weir({"cert", "--help"});
  CHECK(cert_help.exit_code == 0);
  CHECK(cert_help.out.find("weir cert node --dir DIR --name NAME [--host H]")
        != std::string::npos);
}
