#include "messages/job_result.hpp"

#include <chrono>

namespace weir {

bool operator==(const job_result& a, const job_result& b) {
  return a.id == b.id && a.name == b.name && a.state == b.state
         && a.error == b.error && a.start_time_ms == b.start_time_ms
         && a.end_time_ms == b.end_time_ms
         && a.metrics.records_in == b.metrics.records_in
         && a.metrics.records_out == b.metrics.records_out
         && a.collected == b.collected
         && a.graph_fingerprint == b.graph_fingerprint
         && a.exit_status == b.exit_status;
}

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
    .count();
}

} // namespace weir
