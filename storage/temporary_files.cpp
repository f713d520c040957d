#include "storage/temporary_files.hpp"

#include <filesystem>

namespace weir::storage {

namespace {

// Notes live next to the checkpoint records, whose keys are job ids.
constexpr column notes = column::checkpoints;
constexpr std::string_view prefix = "temporary/";

} // namespace

caf::error temporary_files::begin(const std::string& path) {
  return kv_.put(notes, std::string{prefix} + path, {}, durability::synced);
}

void temporary_files::end(const std::string& path) {
  // Ignored on purpose: see the header.
  static_cast<void>(kv_.remove(notes, std::string{prefix} + path,
                               durability::unsynced));
}

std::vector<std::string> temporary_files::remove_stale() {
  std::vector<std::string> noted;
  static_cast<void>(
    kv_.scan_prefix(notes, prefix, [&](std::string_view key, std::string_view) {
      noted.emplace_back(key.substr(prefix.size()));
    }));
  std::vector<std::string> removed;
  for (auto& path : noted) {
    std::error_code ec;
    if (std::filesystem::remove(path, ec))
      removed.push_back(path);
    end(path);
  }
  return removed;
}

std::vector<std::string>
temporary_files::remove_stale_checkpoints(const std::string& checkpoint_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> jobs;
  static_cast<void>(kv_.scan(notes, [&](std::string_view key, std::string_view) {
    if (key.substr(0, prefix.size()) != prefix)
      jobs.emplace_back(key);
  }));
  std::vector<std::string> removed;
  for (auto& job : jobs) {
    std::error_code ec;
    for (fs::directory_iterator i{fs::path{checkpoint_dir} / job, ec}, end;
         !ec && i != end; i.increment(ec)) {
      auto name = i->path().filename().string();
      bool tmp = name.rfind("chk-", 0) == 0 && name.size() > 8
                 && name.compare(name.size() - 4, 4, ".tmp") == 0;
      std::error_code ignored;
      if (tmp && fs::remove(i->path(), ignored))
        removed.push_back(i->path().string());
    }
  }
  return removed;
}

} // namespace weir::storage
