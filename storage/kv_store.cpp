#include "storage/kv_store.hpp"

namespace weir::storage {

std::string to_string(column c) {
  switch (c) {
    case column::job_graphs:
      return "job_graphs";
    case column::job_results:
      return "job_results";
    case column::checkpoints:
      return "checkpoints";
    case column::blobs:
      return "blobs";
  }
  return "unknown";
}

std::string key_name(column c, std::string_view key) {
  return to_string(c) + '/' + printable(key);
}

void write_batch::put(column c, std::string key, std::string value) {
  ops_.push_back(write_op{c, std::move(key), std::move(value)});
}

void write_batch::remove(column c, std::string key) {
  ops_.push_back(write_op{c, std::move(key), std::nullopt});
}

} // namespace weir::storage
