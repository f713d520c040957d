#pragma once

// A job store that fails writes while the simulation says so (a full disk,
// an I/O error): every write fails whole, as RocksDB's do, and nothing of
// it is stored. Reads go through.

#include <memory>

#include "storage/kv_store.hpp"

namespace weir::sim {

class faulty_store final : public storage::kv_store {
public:
  faulty_store(std::shared_ptr<storage::kv_store> inner,
               std::shared_ptr<bool> failing)
    : failing_(std::move(failing)), inner_(std::move(inner)) {
  }

  /// While the shared flag is true, every write fails (an I/O error).
  bool failing() const { return *failing_; }
  /// From now on every write fails: this jobmanager lost the leadership,
  /// as the etcd-fenced store refuses its writes (docs/deployment.md).
  void fence() { fenced_ = true; }

  [[nodiscard]] caf::expected<std::optional<std::string>> get(storage::column c,
                                                std::string_view key) override {
    return inner_->get(c, key);
  }
  [[nodiscard]] caf::error put(storage::column c, std::string_view key,
                 std::string_view value, storage::durability d) override;
  [[nodiscard]] caf::error remove(storage::column c, std::string_view key,
                    storage::durability d) override;
  [[nodiscard]] caf::error write(const storage::write_batch& batch,
                   storage::durability d) override;
  [[nodiscard]] caf::error scan_prefix(storage::column c, std::string_view prefix,
                         const storage::scan_callback& f) override {
    return inner_->scan_prefix(c, prefix, f);
  }
  [[nodiscard]] caf::error persist() override;

private:
  [[nodiscard]] caf::error refuse(std::string_view key);
  bool refusing() const { return *failing_ || fenced_; }

  std::shared_ptr<bool> failing_;
  bool fenced_ = false;
  std::shared_ptr<storage::kv_store> inner_;
};

} // namespace weir::sim
