#include "net/x509_build.hpp"

#include <arpa/inet.h>

#include <cstdint>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

namespace weir::net {

namespace {

constexpr std::int64_t seconds_per_day = 86400;

/// OpenSSL's reason for its last failure; empties its error queue.
std::string openssl_reason() {
  auto code = ERR_peek_last_error();
  ERR_clear_error();
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : "unknown OpenSSL error";
}

/// Random, so serial numbers are unique without a record of those issued.
void set_random_serial(X509* cert, const std::string& where) {
  unsigned char bytes[16];
  check_openssl(RAND_bytes(bytes, sizeof bytes) == 1, where,
                "make a serial number");
  bignum_ptr serial{BN_bin2bn(bytes, sizeof bytes, nullptr)};
  auto* field = X509_get_serialNumber(cert);
  check_openssl(serial != nullptr
                  && BN_to_ASN1_INTEGER(serial.get(), field) != nullptr,
                where, "set the serial number");
}

/// Sets `time` to now plus `seconds` (X509_time_adj_ex takes days and
/// seconds, so that a century fits).
bool set_from_now(ASN1_TIME* time, std::int64_t seconds) {
  auto days = static_cast<int>(seconds / seconds_per_day);
  auto rest = static_cast<long>(seconds % seconds_per_day);
  return X509_time_adj_ex(time, days, rest, nullptr) != nullptr;
}

bool add_name_entry(X509_NAME* name, const char* field, const char* value) {
  auto* bytes = reinterpret_cast<const unsigned char*>(value);
  return X509_NAME_add_entry_by_txt(name, field, MBSTRING_ASC, bytes, -1, -1,
                                    0)
         == 1;
}

/// A memory BIO that PEM text is written to.
bio_ptr new_text_buffer(const std::string& where) {
  bio_ptr out{BIO_new(BIO_s_mem())};
  check_openssl(out != nullptr, where, "allocate a buffer");
  return out;
}

/// What was written to a memory BIO.
std::string text_of(BIO* out) {
  char* data = nullptr;
  auto size = BIO_get_mem_data(out, &data);
  return std::string(data, static_cast<size_t>(size));
}

} // namespace

void check_openssl(bool ok, const std::string& where, const char* doing) {
  if (!ok)
    throw cert_error(fmt::format("{}: cannot {}: {}", where, doing,
                                 openssl_reason()));
}

std::string ip_bytes(const std::string& host) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, host.c_str(), buf) == 1)
    return std::string(reinterpret_cast<char*>(buf), 4);
  if (inet_pton(AF_INET6, host.c_str(), buf) == 1)
    return std::string(reinterpret_cast<char*>(buf), 16);
  return {};
}

evp_pkey_ptr new_ec_key(const std::string& where) {
  evp_pkey_ptr key{EVP_EC_gen("P-256")};
  check_openssl(key != nullptr, where, "generate an EC P-256 key");
  return key;
}

x509_ptr new_certificate(EVP_PKEY* key, const char* unit, const std::string& name,
                         const validity& valid, const std::string& where) {
  x509_ptr cert{X509_new()};
  check_openssl(cert != nullptr, where, "make a certificate");
  auto* subject = X509_get_subject_name(cert.get());
  check_openssl(X509_set_version(cert.get(), X509_VERSION_3) == 1
                  && add_name_entry(subject, "OU", unit)
                  && add_name_entry(subject, "CN", name.c_str())
                  && set_from_now(X509_getm_notBefore(cert.get()),
                                  valid.not_before)
                  && set_from_now(X509_getm_notAfter(cert.get()),
                                  valid.not_after)
                  && X509_set_pubkey(cert.get(), key) == 1,
                where, "fill in the certificate");
  set_random_serial(cert.get(), where);
  return cert;
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value,
                   const std::string& where) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  x509_extension_ptr ext{X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value)};
  check_openssl(ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1,
                where, "add an extension");
}

// Built entry by entry, not in configuration syntax: a host cannot smuggle
// in another entry.
void add_alt_names(X509* cert, const std::vector<std::string>& hosts,
                   const std::string& where) {
  const char* doing = "add the subjectAltName";
  general_names_ptr names{sk_GENERAL_NAME_new_null()};
  check_openssl(names != nullptr, where, doing);
  for (auto& host : hosts) {
    general_name_ptr entry{GENERAL_NAME_new()};
    asn1_string_ptr value{ASN1_STRING_new()};
    auto ip = ip_bytes(host);
    auto& bytes = ip.empty() ? host : ip;
    check_openssl(entry != nullptr && value != nullptr
                    && ASN1_STRING_set(value.get(), bytes.data(),
                                       static_cast<int>(bytes.size()))
                         == 1,
                  where, doing);
    GENERAL_NAME_set0_value(entry.get(), ip.empty() ? GEN_DNS : GEN_IPADD,
                            value.release());
    check_openssl(sk_GENERAL_NAME_push(names.get(), entry.get()) > 0, where,
                  doing);
    entry.release(); // the stack owns it now
  }
  check_openssl(X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0,
                                  X509V3_ADD_DEFAULT)
                  == 1,
                where, doing);
}

void sign(X509* cert, X509* issuer, EVP_PKEY* issuer_key,
          const std::string& where) {
  check_openssl(X509_set_issuer_name(cert, X509_get_subject_name(issuer)) == 1
                  && X509_sign(cert, issuer_key, EVP_sha256()) > 0,
                where, "sign the certificate");
}

std::string pem_of(X509* cert, const std::string& where) {
  auto out = new_text_buffer(where);
  check_openssl(PEM_write_bio_X509(out.get(), cert) == 1, where,
                "encode the certificate");
  return text_of(out.get());
}

std::string pem_of(EVP_PKEY* key, const std::string& where) {
  auto out = new_text_buffer(where);
  check_openssl(PEM_write_bio_PrivateKey(out.get(), key, nullptr, nullptr, 0,
                                         nullptr, nullptr)
                  == 1,
                where, "encode the key");
  return text_of(out.get());
}

} // namespace weir::net
