#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>

#include "storage/kv_store.hpp"

namespace weir::storage {

/// A kv_store in memory, one ordered map per column: the semantics of the
/// RocksDB backend without its durability (every write is "synced" the moment
/// it returns, and lost with the process). For tests and the embedded local
/// cluster. Never fails.
class memory_store final : public kv_store {
public:
  [[nodiscard]] caf::expected<std::optional<std::string>> get(column c,
                                                std::string_view key) override;

  [[nodiscard]] caf::error put(column c, std::string_view key, std::string_view value,
                 durability d) override;

  [[nodiscard]] caf::error remove(column c, std::string_view key, durability d) override;

  [[nodiscard]] caf::error write(const write_batch& batch, durability d) override;

  [[nodiscard]] caf::error scan_prefix(column c, std::string_view prefix,
                         const scan_callback& f) override;

private:
  using table = std::map<std::string, std::string, std::less<>>;

  table& table_of(column c) { return tables_[static_cast<size_t>(c)]; }

  std::mutex mtx_;
  std::array<table, all_columns.size()> tables_;
};

} // namespace weir::storage
