#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace weir::ha {

/// One key of etcd with its revisions (etcd's mvccpb.KeyValue).
struct etcd_entry {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t lease = 0;
};

/// A condition of a transaction: `key`'s create revision (or, with
/// `modified`, its mod revision) is `revision`; 0: the key does not exist.
/// Leader keys are compared by create revision: a key that expired with its
/// lease and was created again has another one.
struct etcd_condition {
  std::string key;
  int64_t revision = 0;
  bool modified = false;
};

/// One operation of a transaction on one key: a put (with a lease, or 0), a
/// removal, or a read.
struct etcd_op {
  enum kind : uint8_t { put, remove, get };
  kind what = get;
  std::string key;
  std::string value = {};
  int64_t lease = 0;
};

/// What a transaction did: whether its conditions held (the success
/// operations ran, else the failure ones), the store's revision after it,
/// and the entries of each of its reads, in order.
struct etcd_txn_result {
  bool succeeded = false;
  int64_t revision = 0;
  std::vector<std::vector<etcd_entry>> reads;
};

/// A client of etcd's v3 API through its HTTP/JSON gateway (docs/deployment.md
/// § etcd says why the gateway and not gRPC). Requests go to the first of its
/// endpoints that accepts a connection, starting with the one that answered
/// last; a request that was sent is never sent again elsewhere. Errors are
/// one line naming the endpoint: `errc::timeout` when a request was sent but
/// not answered (it may have been applied), else `errc::storage_failure`.
/// Safe to call from several threads (requests are serialized).
class etcd_client {
public:
  /// `endpoints`: "HOST:PORT" each (plain HTTP); `timeout`: of each request.
  etcd_client(std::vector<std::string> endpoints,
              std::chrono::milliseconds timeout);
  ~etcd_client();

  etcd_client(const etcd_client&) = delete;
  etcd_client& operator=(const etcd_client&) = delete;

  /// A new lease of `ttl` seconds; its id.
  [[nodiscard]] caf::expected<int64_t> grant_lease(int64_t ttl);

  /// Renews `lease`; the seconds it has left, 0 when it has expired (or was
  /// revoked).
  [[nodiscard]] caf::expected<int64_t> keep_alive(int64_t lease);

  /// Ends `lease` at once, removing the keys attached to it.
  [[nodiscard]] caf::error revoke(int64_t lease);

  /// The entries of [key, range_end) (`key` alone when range_end is empty),
  /// in key order.
  [[nodiscard]] caf::expected<std::vector<etcd_entry>> range(std::string_view key,
                                               std::string_view range_end
                                               = {});

  /// Runs `success` when every condition holds, else `failure`, atomically.
  [[nodiscard]] caf::expected<etcd_txn_result> txn(const std::vector<etcd_condition>& when,
                                     const std::vector<etcd_op>& success,
                                     const std::vector<etcd_op>& failure = {});

  /// The range end that covers every key starting with `prefix`.
  static std::string prefix_end(std::string_view prefix);

  /// The endpoints, comma-separated (for messages).
  std::string endpoints() const;

private:
  struct connection;

  /// POSTs `body` to `path` ("/v3/kv/range"); the response body.
  [[nodiscard]] caf::expected<std::string> post(const std::string& path,
                                  const std::string& body);

  std::vector<std::string> endpoints_;
  std::chrono::milliseconds timeout_;
  std::mutex mtx_;
  size_t current_ = 0;
  std::unique_ptr<connection> conn_;
};

} // namespace weir::ha
