// net/certificates: what `weir cert` writes, checked with OpenSSL's own
// verification (the one the TLS transport uses).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <openssl/err.h>
#include <openssl/pem.h>

#include "messages/errors.hpp"
#include "net/certificates.hpp"
#include "net/openssl_ptr.hpp"
#include "net/tls.hpp"
#include "temp_dir.hpp"

using namespace weir;
using namespace weir::net;

namespace {

/// The API returns its errors; the tests below want the files, or the
/// failure's line as an exception (error_of).
cert_files must_make_ca(const std::string& dir, const std::string& name,
                        const validity& valid) {
  auto made = make_ca(dir, name, valid);
  if (!made)
    throw cert_error(describe(made.error()));
  return std::move(*made);
}

cert_files must_issue(const std::string& dir, cert_kind kind,
                      const std::string& name,
                      const std::vector<std::string>& hosts,
                      const validity& valid) {
  auto made = issue(dir, kind, name, hosts, valid);
  if (!made)
    throw cert_error(describe(made.error()));
  return std::move(*made);
}

} // namespace
using weir::test::temp_dir;

namespace {

constexpr std::int64_t day = 86400;

/// The certificates of a PEM file, in order.
std::vector<x509_ptr> certificates_in(const std::string& path) {
  bio_ptr in{BIO_new_file(path.c_str(), "r")};
  REQUIRE(in != nullptr);
  std::vector<x509_ptr> certs;
  while (auto* cert = PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr))
    certs.emplace_back(cert);
  ERR_clear_error(); // the end of the file
  return certs;
}

x509_ptr certificate_in(const std::string& path) {
  auto certs = certificates_in(path);
  REQUIRE(!certs.empty());
  return std::move(certs.front());
}

/// X509_V_OK, or why OpenSSL refuses `leaf` for `purpose` (say,
/// X509_PURPOSE_SSL_SERVER) when it trusts only `ca`.
int verify(X509* leaf, X509* ca, int purpose = X509_PURPOSE_ANY) {
  x509_store_ptr store{X509_STORE_new()};
  x509_store_ctx_ptr ctx{X509_STORE_CTX_new()};
  REQUIRE(X509_STORE_add_cert(store.get(), ca) == 1);
  REQUIRE(X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr) == 1);
  REQUIRE(X509_STORE_CTX_set_purpose(ctx.get(), purpose) == 1);
  X509_verify_cert(ctx.get());
  return X509_STORE_CTX_get_error(ctx.get());
}

std::string subject_field(X509* cert, int nid) {
  char text[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), nid, text, sizeof text);
  return text;
}

mode_t permissions(const std::string& path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

bool has_ip(X509* cert, const char* ip) {
  return X509_check_ip_asc(cert, ip, 0) == 1;
}

bool has_dns(X509* cert, const char* host) {
  return X509_check_host(cert, host, 0, X509_CHECK_FLAG_NO_WILDCARDS, nullptr)
         == 1;
}

/// What `make` fails with; "" when it succeeds.
template <class F>
std::string error_of(F&& make) {
  try {
    make();
  } catch (const cert_error& e) {
    return e.what();
  }
  return "";
}

/// A directory with a CA valid for ten years.
struct ca_dir {
  temp_dir dir;
  std::string ca_path = dir.sub("ca.pem");
  ca_dir() { must_make_ca(dir.path(), "test-ca", validity::days(3650)); }
  x509_ptr ca() const { return certificate_in(ca_path); }
};

} // namespace

TEST_CASE("a CA is a self-signed CA certificate and a private key") {
  temp_dir dir;
  auto files = must_make_ca(dir.path(), "test-ca", validity::days(10));
  CHECK(files.certificate == dir.sub("ca.pem"));
  CHECK(files.key == dir.sub("ca-key.pem"));
  auto ca = certificate_in(files.certificate);
  CHECK(X509_check_ca(ca.get()) != 0);
  CHECK(verify(ca.get(), ca.get()) == X509_V_OK);
  CHECK((X509_get_key_usage(ca.get()) & (KU_KEY_CERT_SIGN | KU_CRL_SIGN))
        == (KU_KEY_CERT_SIGN | KU_CRL_SIGN));
  CHECK(subject_field(ca.get(), NID_commonName) == "test-ca");
  CHECK(permissions(files.key) == 0600);
}

TEST_CASE("node and client certificates chain to their CA") {
  ca_dir d;
  auto node = must_issue(d.dir.path(), cert_kind::node, "tm1", {}, validity::days(1));
  auto client = must_issue(d.dir.path(), cert_kind::client, "alice", {},
                      validity::days(1));
  CHECK(node.certificate == d.dir.sub("tm1.pem"));
  CHECK(node.key == d.dir.sub("tm1-key.pem"));
  auto ca = d.ca();
  for (auto& files : {node, client}) {
    auto chain = certificates_in(files.certificate);
    REQUIRE(chain.size() == 2);
    CHECK(X509_cmp(chain[1].get(), ca.get()) == 0);
    CHECK(verify(chain[0].get(), ca.get()) == X509_V_OK);
    CHECK(X509_get_signature_nid(chain[0].get()) == NID_ecdsa_with_SHA256);
    CHECK(permissions(files.key) == 0600);
    bio_ptr key_in{BIO_new_file(files.key.c_str(), "r")};
    evp_pkey_ptr key{PEM_read_bio_PrivateKey(key_in.get(), nullptr, nullptr,
                                             nullptr)};
    REQUIRE(key != nullptr);
    CHECK(X509_check_private_key(chain[0].get(), key.get()) == 1);
  }
}

TEST_CASE("the OU and the extended key usage say the role") {
  ca_dir d;
  must_issue(d.dir.path(), cert_kind::node, "tm1", {}, validity::days(1));
  must_issue(d.dir.path(), cert_kind::client, "alice", {}, validity::days(1));
  auto ca = d.ca();
  auto node = certificate_in(d.dir.sub("tm1.pem"));
  auto client = certificate_in(d.dir.sub("alice.pem"));
  CHECK(subject_field(node.get(), NID_organizationalUnitName) == "weir-node");
  CHECK(subject_field(node.get(), NID_commonName) == "tm1");
  CHECK(subject_field(client.get(), NID_organizationalUnitName) == "weir-client");
  CHECK(subject_field(client.get(), NID_commonName) == "alice");
  CHECK(X509_check_ca(node.get()) == 0);
  CHECK(verify(node.get(), ca.get(), X509_PURPOSE_SSL_SERVER) == X509_V_OK);
  CHECK(verify(node.get(), ca.get(), X509_PURPOSE_SSL_CLIENT) == X509_V_OK);
  CHECK(verify(client.get(), ca.get(), X509_PURPOSE_SSL_CLIENT) == X509_V_OK);
  CHECK(verify(client.get(), ca.get(), X509_PURPOSE_SSL_SERVER)
        == X509_V_ERR_INVALID_PURPOSE);
}

TEST_CASE("hosts become IP and DNS subjectAltNames") {
  ca_dir d;
  must_issue(d.dir.path(), cert_kind::node, "default", {}, validity::days(1));
  auto files = must_issue(d.dir.path(), cert_kind::node, "tm2",
                     {"10.1.2.3", "::1", "tm2.example.com", "10.1.2.3"},
                     validity::days(1));
  CHECK(files.hosts
        == std::vector<std::string>{"10.1.2.3", "::1", "tm2.example.com"});
  auto defaults = certificate_in(d.dir.sub("default.pem"));
  CHECK(has_ip(defaults.get(), "127.0.0.1"));
  CHECK(has_dns(defaults.get(), "localhost"));
  auto node = certificate_in(files.certificate);
  CHECK(has_ip(node.get(), "10.1.2.3"));
  CHECK(has_ip(node.get(), "::1"));
  CHECK(has_dns(node.get(), "tm2.example.com"));
  CHECK_FALSE(has_ip(node.get(), "127.0.0.1"));
  CHECK_FALSE(has_dns(node.get(), "localhost"));
  CHECK_FALSE(has_dns(node.get(), "10.1.2.3")); // an address is not a name
  auto client = must_issue(d.dir.path(), cert_kind::client, "alice", {},
                      validity::days(1));
  CHECK(client.hosts.empty());
  CHECK(X509_get_ext_by_NID(certificate_in(client.certificate).get(),
                            NID_subject_alt_name, -1)
        < 0);
}

TEST_CASE("a certificate of another CA is not trusted") {
  ca_dir ours;
  ca_dir theirs;
  must_issue(theirs.dir.path(), cert_kind::node, "tm1", {}, validity::days(1));
  auto foreign = certificate_in(theirs.dir.sub("tm1.pem"));
  CHECK(verify(foreign.get(), ours.ca().get())
        == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

TEST_CASE("validity: expired and not yet valid certificates are refused") {
  ca_dir d;
  must_issue(d.dir.path(), cert_kind::node, "expired", {}, validity{-2 * day, -day});
  must_issue(d.dir.path(), cert_kind::node, "early", {}, validity{day, 2 * day});
  auto ca = d.ca();
  CHECK(verify(certificate_in(d.dir.sub("expired.pem")).get(), ca.get())
        == X509_V_ERR_CERT_HAS_EXPIRED);
  CHECK(verify(certificate_in(d.dir.sub("early.pem")).get(), ca.get())
        == X509_V_ERR_CERT_NOT_YET_VALID);
  auto too_long = error_of([&] {
    must_issue(d.dir.path(), cert_kind::node, "long", {}, validity::days(4000));
  });
  CHECK(too_long.rfind(d.ca_path + ": the CA is valid until ", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(d.dir.sub("long.pem")));
}

TEST_CASE("serial numbers are random 128-bit numbers") {
  ca_dir d;
  must_issue(d.dir.path(), cert_kind::client, "a", {}, validity::days(1));
  must_issue(d.dir.path(), cert_kind::client, "b", {}, validity::days(1));
  auto a = certificate_in(d.dir.sub("a.pem"));
  auto b = certificate_in(d.dir.sub("b.pem"));
  CHECK(ASN1_INTEGER_cmp(X509_get0_serialNumber(a.get()),
                         X509_get0_serialNumber(b.get()))
        != 0);
  bignum_ptr serial{ASN1_INTEGER_to_BN(X509_get0_serialNumber(a.get()), nullptr)};
  CHECK(BN_num_bits(serial.get()) <= 128);
  CHECK(BN_num_bits(serial.get()) > 64); // 2^-64 chance of a false failure
}

TEST_CASE("nothing is overwritten") {
  ca_dir d;
  auto ca_text = certificate_in(d.ca_path);
  CHECK(error_of([&] { must_make_ca(d.dir.path(), "again", validity::days(1)); })
        == d.ca_path + ": already exists (not overwritten)");
  CHECK(X509_cmp(certificate_in(d.ca_path).get(), ca_text.get()) == 0);
  must_issue(d.dir.path(), cert_kind::node, "tm1", {}, validity::days(1));
  CHECK(error_of([&] {
          must_issue(d.dir.path(), cert_kind::client, "tm1", {}, validity::days(1));
        })
        == d.dir.sub("tm1.pem") + ": already exists (not overwritten)");
  // A lone key file: the pair is refused whole, no certificate appears.
  temp_dir half;
  std::filesystem::copy_file(d.dir.sub("ca-key.pem"), half.sub("ca-key.pem"));
  CHECK(error_of([&] { must_make_ca(half.path(), "x", validity::days(1)); })
        == half.sub("ca-key.pem") + ": already exists (not overwritten)");
  CHECK_FALSE(std::filesystem::exists(half.sub("ca.pem")));
}

TEST_CASE("bad input is named in one line") {
  ca_dir d;
  auto node = [&](const std::string& name, std::vector<std::string> hosts = {}) {
    must_issue(d.dir.path(), cert_kind::node, name, hosts, validity::days(1));
  };
  CHECK(error_of([&] { node("../x"); })
        == "name '../x': not a plain file name (1 to 64 letters, digits, "
           "'.', '-', '_')");
  CHECK_THROWS_AS(node(std::string(65, 'a')), cert_error);
  CHECK_NOTHROW(node(std::string(64, 'a')));
  CHECK(error_of([&] { node("tm1", {"a b"}); })
        == "host 'a b': neither an IP address nor a DNS name");
  CHECK_THROWS_AS(node("tm1", {"a..b"}), cert_error);
  CHECK_THROWS_AS(node("tm1", {"DNS:x,IP:1.2.3.4"}), cert_error);
  temp_dir empty;
  CHECK(error_of([&] {
          must_issue(empty.path(), cert_kind::node, "tm1", {}, validity::days(1));
        })
        == empty.sub("ca.pem") + ": cannot read: No such file or directory");
}

TEST_CASE("a broken CA directory is named") {
  ca_dir good;
  auto copy_ca_key = [&](const temp_dir& to) {
    std::filesystem::copy_file(good.dir.sub("ca-key.pem"), to.sub("ca-key.pem"));
  };
  auto write = [](const std::string& path, const std::string& text) {
    auto* f = std::fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  auto issue_in = [](const temp_dir& dir) {
    must_issue(dir.path(), cert_kind::node, "tm1", {}, validity::days(1));
  };
  temp_dir not_pem;
  write(not_pem.sub("ca.pem"), "hello\n");
  copy_ca_key(not_pem);
  CHECK(error_of([&] { issue_in(not_pem); })
        == not_pem.sub("ca.pem") + ": not a PEM certificate");
  temp_dir no_key;
  std::filesystem::copy_file(good.ca_path, no_key.sub("ca.pem"));
  CHECK(error_of([&] { issue_in(no_key); })
        == no_key.sub("ca-key.pem") + ": cannot read: No such file or "
                                      "directory");
  write(no_key.sub("ca-key.pem"), "junk\n");
  CHECK(error_of([&] { issue_in(no_key); })
        == no_key.sub("ca-key.pem") + ": not an unencrypted PEM private key");
  ca_dir other;
  temp_dir mixed;
  std::filesystem::copy_file(other.ca_path, mixed.sub("ca.pem"));
  copy_ca_key(mixed);
  CHECK(error_of([&] { issue_in(mixed); })
        == mixed.sub("ca-key.pem") + ": not the key of " + mixed.sub("ca.pem"));
  must_issue(good.dir.path(), cert_kind::node, "leaf", {}, validity::days(1));
  temp_dir leaf_as_ca;
  std::filesystem::copy_file(good.dir.sub("leaf.pem"), leaf_as_ca.sub("ca.pem"));
  std::filesystem::copy_file(good.dir.sub("leaf-key.pem"),
                             leaf_as_ca.sub("ca-key.pem"));
  CHECK(error_of([&] { issue_in(leaf_as_ca); })
        == leaf_as_ca.sub("ca.pem") + ": not a CA certificate");
}

TEST_CASE("a certificate asked for as many days as its CA ends with the CA") {
  temp_dir dir;
  auto ca = must_make_ca(dir.path(), "ca", validity{0, 3600});
  // One second later than the CA's end: made "the same day" as the CA.
  auto leaf = must_issue(dir.path(), cert_kind::node, "tm1", {}, validity{0, 3601});
  auto cert = certificate_in(leaf.certificate);
  auto authority = certificate_in(ca.certificate);
  CHECK(ASN1_TIME_compare(X509_get0_notAfter(cert.get()),
                          X509_get0_notAfter(authority.get()))
        == 0);
  CHECK(verify(cert.get(), authority.get()) == X509_V_OK);
}

TEST_CASE("a valid key of another certificate is named as not matching") {
  ca_dir d;
  auto tm1 = must_issue(d.dir.path(), cert_kind::node, "tm1", {}, validity::days(1));
  auto tm2 = must_issue(d.dir.path(), cert_kind::node, "tm2", {}, validity::days(1));
  tls_files files{tm1.certificate, tm2.key, d.ca_path};
  std::string problem;
  CHECK(tls_context::load(files, problem) == nullptr);
  CHECK(problem == "security.ssl.internal.key: " + tm2.key
                     + ": does not match the certificate " + tm1.certificate);
  // A file that holds no key at all still says so.
  files.key = d.ca_path;
  CHECK(tls_context::load(files, problem) == nullptr);
  CHECK(problem == "security.ssl.internal.key: " + d.ca_path
                     + ": not a PEM private key (or one with a passphrase)");
}
