#include "messages/flink_ids.hpp"

#include <xxhash.h>

#include <fmt/format.h>

namespace weir {

namespace {

std::string hex128(const std::string& text) {
  auto h = XXH3_128bits(text.data(), text.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

} // namespace

std::string flink_vertex_id(const job_id& job, const std::string& vertex) {
  // The job id first, so that equal names of two jobs differ.
  return hex128(job.to_string() + '\0' + vertex);
}

std::string flink_resource_id(const resource_id& worker) {
  return hex128(std::string{"taskmanager"} + '\0' + worker.value);
}

} // namespace weir
