#pragma once

// The cluster's certificate authority and the certificates it signs for
// mutual TLS (`weir cert`, docs/security.md § Certificates). Plain
// functions over OpenSSL; they only write new files, never overwrite one.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace weir::net {

/// What a certificate's holder may do; its subject's OU says it.
enum class cert_kind {
  /// OU=weir-node: may run a jobmanager or taskmanager (serverAuth, clientAuth).
  node,
  /// OU=weir-client: may use the CLI (clientAuth).
  client,
};

/// The OU of a kind: "weir-node" or "weir-client".
const char* role_unit(cert_kind kind);

/// When a certificate is valid, in seconds from now (negative: in the past).
/// Tests make expired (`not_after < 0`) or not yet valid (`not_before > 0`)
/// certificates with it.
struct validity {
  std::int64_t not_before = 0; ///< start, seconds from now
  std::int64_t not_after = 0;  ///< end, seconds from now

  /// From a little before now (hosts' clocks differ a little) for `days`.
  static validity days(int days);
};

/// A failure: one line naming the file (or the input) and what is wrong.
class cert_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What make_ca or issue wrote.
struct cert_files {
  std::string certificate;        ///< the certificate (issue: the chain)
  std::string key;                ///< its private key, mode 0600
  std::vector<std::string> hosts; ///< subjectAltName entries (issue only)
};

/// Whether `name` may name a certificate and its files: 1 to 64 letters,
/// digits, '.', '-' or '_'.
bool is_plain_name(const std::string& name);

/// Makes the cluster CA, CN=`name`: a self-signed certificate
/// (basicConstraints CA:TRUE, keyUsage keyCertSign, cRLSign) in DIR/ca.pem
/// and its EC P-256 key in DIR/ca-key.pem. Creates `dir` if missing.
/// Fails (errc::invalid_config, one line naming the file or the input);
/// an existing file is never overwritten.
[[nodiscard]] caf::expected<cert_files>
make_ca(const std::string& dir, const std::string& name, const validity& valid);

/// Signs a certificate CN=`name`, OU=role_unit(kind) with the CA in `dir`
/// (DIR/ca.pem, DIR/ca-key.pem): writes DIR/NAME.pem (the certificate, then
/// the CA's: the chain) and DIR/NAME-key.pem. `hosts` become the
/// subjectAltName (IP: when one parses as an address, else DNS:); a node
/// without hosts gets 127.0.0.1 and localhost. The certificate may not
/// outlive the CA. Fails as make_ca; an existing file is never overwritten.
[[nodiscard]] caf::expected<cert_files>
issue(const std::string& dir, cert_kind kind, const std::string& name,
      const std::vector<std::string>& hosts, const validity& valid);

} // namespace weir::net
