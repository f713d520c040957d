#pragma once

// The pieces certificates are made of, over OpenSSL (net/certificates uses
// them). `where` is the file an error names: each function throws
// cert_error "WHERE: cannot ...: OPENSSL'S REASON" when OpenSSL fails.

#include <string>
#include <vector>

#include "net/certificates.hpp"
#include "net/openssl_ptr.hpp"

namespace weir::net {

/// Throws "WHERE: cannot DOING: REASON" unless an OpenSSL call succeeded.
void check_openssl(bool ok, const std::string& where, const char* doing);

/// An IPv4 or IPv6 address's 4 or 16 bytes; empty for anything else.
std::string ip_bytes(const std::string& host);

/// A new EC P-256 key pair.
evp_pkey_ptr new_ec_key(const std::string& where);

/// A version 3 certificate of `key`, subject OU=`unit`, CN=`name`, with a
/// random 128-bit serial number; no extensions, issuer or signature yet.
x509_ptr new_certificate(EVP_PKEY* key, const char* unit, const std::string& name,
                         const validity& valid, const std::string& where);

/// Adds an extension written in OpenSSL's configuration syntax (a constant,
/// never user input); `issuer` is for authorityKeyIdentifier.
void add_extension(X509* cert, X509* issuer, int nid, const char* value,
                   const std::string& where);

/// Adds subjectAltName: an IP: entry for each address of `hosts`, a DNS:
/// entry for each other host.
void add_alt_names(X509* cert, const std::vector<std::string>& hosts,
                   const std::string& where);

/// Sets the issuer and signs with SHA-256.
void sign(X509* cert, X509* issuer, EVP_PKEY* issuer_key,
          const std::string& where);

/// PEM text of a certificate, or of a private key (PKCS#8, unencrypted).
std::string pem_of(X509* cert, const std::string& where);
std::string pem_of(EVP_PKEY* key, const std::string& where);

} // namespace weir::net
