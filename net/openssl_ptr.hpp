#pragma once

#include <memory>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace weir::net {

/// Deleter calling OpenSSL's free function `Free`.
template <auto Free>
struct openssl_free {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};

/// An owning handle of an OpenSSL object: freed by `Free` at scope end.
template <class T, auto Free>
using openssl_ptr = std::unique_ptr<T, openssl_free<Free>>;

using bio_ptr = openssl_ptr<BIO, BIO_free_all>;
using bignum_ptr = openssl_ptr<BIGNUM, BN_free>;
/// Any ASN1_STRING: ASN1_OCTET_STRING, ASN1_IA5STRING, ...
using asn1_string_ptr = openssl_ptr<ASN1_STRING, ASN1_STRING_free>;
using evp_pkey_ptr = openssl_ptr<EVP_PKEY, EVP_PKEY_free>;
using general_name_ptr = openssl_ptr<GENERAL_NAME, GENERAL_NAME_free>;
using general_names_ptr = openssl_ptr<GENERAL_NAMES, GENERAL_NAMES_free>;
using x509_ptr = openssl_ptr<X509, X509_free>;
using x509_extension_ptr = openssl_ptr<X509_EXTENSION, X509_EXTENSION_free>;
using x509_store_ptr = openssl_ptr<X509_STORE, X509_STORE_free>;
using x509_store_ctx_ptr = openssl_ptr<X509_STORE_CTX, X509_STORE_CTX_free>;

} // namespace weir::net
