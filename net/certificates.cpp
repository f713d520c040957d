#include "net/certificates.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "messages/errors.hpp"
#include "net/cert_file_io.hpp"
#include "net/openssl_ptr.hpp"
#include "net/x509_build.hpp"

namespace weir::net {

namespace {

namespace fs = std::filesystem;

constexpr std::int64_t seconds_per_day = 86400;

/// Certificates start this much before now: a peer whose clock is a few
/// minutes behind would otherwise refuse a certificate just made.
constexpr std::int64_t backdating_seconds = 300;

/// Subject OU of the CA, so that it is never taken for a node or client.
constexpr const char* ca_unit = "weir-ca";

std::string path_in(const std::string& dir, const std::string& file) {
  return (fs::path{dir} / file).string();
}

std::string date_of(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1)
    return "?";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

/// Letters, digits and '-' in dot-separated labels (RFC 1123).
bool is_dns_name(const std::string& host) {
  if (host.empty() || host.size() > 253)
    return false;
  size_t label = 0;
  for (char c : host) {
    if (c == '.') {
      if (label == 0)
        return false;
      label = 0;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-') {
      if (++label > 63)
        return false;
    } else {
      return false;
    }
  }
  return label > 0;
}

/// The hosts without repetitions; throws on one that is neither an IP
/// address nor a DNS name.
std::vector<std::string> checked_hosts(const std::vector<std::string>& hosts) {
  std::vector<std::string> out;
  for (auto& host : hosts) {
    if (ip_bytes(host).empty() && !is_dns_name(host))
      throw cert_error("host '" + host + "': neither an IP address nor a DNS "
                                         "name");
    if (std::find(out.begin(), out.end(), host) == out.end())
      out.push_back(host);
  }
  return out;
}

void check_name(const std::string& name) {
  if (!is_plain_name(name))
    throw cert_error("name '" + name + "': not a plain file name (1 to 64 "
                                       "letters, digits, '.', '-', '_')");
}

/// The CA of `dir`: its certificate and key, checked to belong together.
struct certificate_authority {
  x509_ptr cert;
  evp_pkey_ptr key;
  std::string cert_path;
};

certificate_authority load_ca(const std::string& dir) {
  certificate_authority ca;
  ca.cert_path = path_in(dir, "ca.pem");
  auto key_path = path_in(dir, "ca-key.pem");
  auto cert_text = read_small_file(ca.cert_path);
  auto key_text = read_small_file(key_path);
  bio_ptr cert_in{BIO_new_mem_buf(cert_text.data(),
                                  static_cast<int>(cert_text.size()))};
  bio_ptr key_in{BIO_new_mem_buf(key_text.data(),
                                 static_cast<int>(key_text.size()))};
  check_openssl(cert_in != nullptr && key_in != nullptr, dir, "read the CA");
  ca.cert.reset(PEM_read_bio_X509(cert_in.get(), nullptr, nullptr, nullptr));
  // No passphrase: an encrypted key fails instead of prompting on a terminal.
  auto no_passphrase = [](char*, int, int, void*) { return 0; };
  ca.key.reset(PEM_read_bio_PrivateKey(key_in.get(), nullptr, no_passphrase,
                                       nullptr));
  ERR_clear_error();
  if (ca.cert == nullptr)
    throw cert_error(ca.cert_path + ": not a PEM certificate");
  if (X509_check_ca(ca.cert.get()) == 0)
    throw cert_error(ca.cert_path + ": not a CA certificate");
  if (ca.key == nullptr)
    throw cert_error(key_path + ": not an unencrypted PEM private key");
  if (X509_check_private_key(ca.cert.get(), ca.key.get()) != 1) {
    ERR_clear_error();
    throw cert_error(key_path + ": not the key of " + ca.cert_path);
  }
  return ca;
}

/// Refuses a certificate that would stop working before its end. One that
/// ends less than a day after the CA (the CA and the certificate asked for
/// the same days, made seconds apart) ends with the CA instead.
void check_within_ca(X509* cert, const certificate_authority& ca) {
  auto* end = X509_get0_notAfter(cert);
  auto* ca_end = X509_get0_notAfter(ca.cert.get());
  if (ASN1_TIME_compare(end, ca_end) <= 0)
    return;
  int days = 0;
  int seconds = 0;
  if (ASN1_TIME_diff(&days, &seconds, ca_end, end) == 1 && days == 0) {
    X509_set1_notAfter(cert, ca_end);
    return;
  }
  throw cert_error(fmt::format("{}: the CA is valid until {}; a certificate "
                               "valid until {} would outlive it (fewer days, "
                               "or a new CA)",
                               ca.cert_path, date_of(ca_end), date_of(end)));
}

/// What a node or client certificate may be used for, and where.
void add_leaf_extensions(X509* leaf, X509* ca, cert_kind kind,
                         const std::vector<std::string>& hosts,
                         const std::string& where) {
  add_extension(leaf, ca, NID_basic_constraints, "critical,CA:FALSE", where);
  add_extension(leaf, ca, NID_key_usage, "critical,digitalSignature", where);
  add_extension(leaf, ca, NID_ext_key_usage,
                kind == cert_kind::node ? "serverAuth,clientAuth" : "clientAuth",
                where);
  add_extension(leaf, ca, NID_subject_key_identifier, "hash", where);
  add_extension(leaf, ca, NID_authority_key_identifier, "keyid", where);
  if (!hosts.empty())
    add_alt_names(leaf, hosts, where);
}

} // namespace

const char* role_unit(cert_kind kind) {
  return kind == cert_kind::node ? "weir-node" : "weir-client";
}

validity validity::days(int days) {
  return {-backdating_seconds, days * seconds_per_day};
}

bool is_plain_name(const std::string& name) {
  auto plain = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-'
           || c == '_';
  };
  return !name.empty() && name.size() <= 64
         && std::all_of(name.begin(), name.end(), plain);
}

namespace {

cert_files make_ca_files(const std::string& dir, const std::string& name,
                         const validity& valid) {
  check_name(name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw cert_error(dir + ": cannot create: " + ec.message());
  cert_files files{path_in(dir, "ca.pem"), path_in(dir, "ca-key.pem"), {}};
  auto key = new_ec_key(files.key);
  auto cert = new_certificate(key.get(), ca_unit, name, valid, files.certificate);
  auto* self = cert.get();
  auto& where = files.certificate;
  // pathlen:0: this CA signs nodes and clients, never another CA.
  add_extension(self, self, NID_basic_constraints, "critical,CA:TRUE,pathlen:0",
                where);
  add_extension(self, self, NID_key_usage, "critical,keyCertSign,cRLSign",
                where);
  add_extension(self, self, NID_subject_key_identifier, "hash", where);
  sign(self, self, key.get(), where);
  write_new_files({{files.certificate, pem_of(self, where), 0644},
                   {files.key, pem_of(key.get(), files.key), 0600}});
  return files;
}

cert_files issue_files(const std::string& dir, cert_kind kind,
                       const std::string& name,
                       const std::vector<std::string>& hosts,
                       const validity& valid) {
  check_name(name);
  cert_files files{path_in(dir, name + ".pem"), path_in(dir, name + "-key.pem"),
                   checked_hosts(hosts)};
  if (files.hosts.empty() && kind == cert_kind::node)
    files.hosts = {"127.0.0.1", "localhost"};
  auto ca = load_ca(dir);
  auto& where = files.certificate;
  auto key = new_ec_key(files.key);
  auto cert = new_certificate(key.get(), role_unit(kind), name, valid, where);
  auto* leaf = cert.get();
  check_within_ca(leaf, ca);
  add_leaf_extensions(leaf, ca.cert.get(), kind, files.hosts, where);
  sign(leaf, ca.cert.get(), ca.key.get(), where);
  // The chain, own certificate first (security.ssl.internal.certificate).
  auto chain = pem_of(leaf, where) + pem_of(ca.cert.get(), where);
  write_new_files({{files.certificate, chain, 0644},
                   {files.key, pem_of(key.get(), files.key), 0600}});
  return files;
}

/// The making's cert_error, returned: it does not cross the layer.
template <class F>
caf::expected<cert_files> returned(F make) {
  try {
    return make();
  } catch (const cert_error& e) {
    return make_error(errc::invalid_config, e.what());
  }
}

} // namespace

caf::expected<cert_files> make_ca(const std::string& dir,
                                  const std::string& name,
                                  const validity& valid) {
  return returned([&] { return make_ca_files(dir, name, valid); });
}

caf::expected<cert_files> issue(const std::string& dir, cert_kind kind,
                                const std::string& name,
                                const std::vector<std::string>& hosts,
                                const validity& valid) {
  return returned([&] { return issue_files(dir, kind, name, hosts, valid); });
}

} // namespace weir::net
