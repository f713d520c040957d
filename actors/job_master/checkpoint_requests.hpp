#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <caf/typed_response_promise.hpp>
#include <caf/variant.hpp>

#include "messages/barrier.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir {

/// A client's `weir checkpoint`, `weir savepoint` or `weir stop` waiting
/// for its checkpoint: the kind of snapshot asked for and the promise of
/// the reply (the checkpoint's id, or the savepoint's path).
class checkpoint_request {
public:
  using id_promise = caf::typed_response_promise<int64_t>;
  using path_promise = caf::typed_response_promise<std::string>;

  checkpoint_request() = default;

  /// `weir checkpoint` (`--full`: a full one); answered with the id.
  static checkpoint_request checkpoint(id_promise rp, bool full);

  /// `weir savepoint` or `weir stop`: into `dir`, then stop the job as
  /// `mode` says; answered with the path.
  static checkpoint_request savepoint(path_promise rp, std::string dir,
                                      savepoint_mode mode);

  /// The snapshot the subtasks take for it.
  state::snapshot_kind kind() const { return kind_; }

  bool is_savepoint() const { return kind_ == state::snapshot_kind::savepoint; }

  /// A savepoint's directory.
  const std::string& dir() const { return dir_; }

  /// Whether the job stops after the savepoint.
  bool stop() const { return mode_ != savepoint_mode::keep_running; }
  /// Whether it stops with event time where it was (not drained).
  bool suspend() const { return mode_ == savepoint_mode::stop; }

  /// Answers the client with `err`.
  void refuse(const caf::error& err);

  /// Answers a checkpoint's client with the completed checkpoint's id.
  void complete(int64_t id);

  /// Answers a savepoint's client with the savepoint's path.
  void complete(const std::string& path);

private:
  state::snapshot_kind kind_ = state::snapshot_kind::checkpoint;
  caf::variant<id_promise, path_promise> promise_;
  std::string dir_;
  savepoint_mode mode_ = savepoint_mode::keep_running;
};

/// Clients' requests waiting for their checkpoints, by checkpoint id.
class checkpoint_requests {
public:
  void add(int64_t id, checkpoint_request req);

  /// The request waiting for checkpoint `id`, removed; none if no client
  /// asked for it.
  std::optional<checkpoint_request> take(int64_t id);

  /// Answers the request of checkpoint `id` (if any) with `err`.
  void refuse(int64_t id, const caf::error& err);

  /// Answers every waiting request: checkpoint N was abandoned because of
  /// `why` (errc::checkpoint_aborted).
  void abort_all(const std::string& why);

  size_t size() const { return waiting_.size(); }

private:
  std::map<int64_t, checkpoint_request> waiting_;
};

} // namespace weir
