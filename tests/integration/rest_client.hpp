#pragma once

// Reaching a jobmanager's REST API from the integration tests.

#include <chrono>
#include <regex>
#include <string>

#include <httplib.h>

#include "process.hpp"

namespace weir::test {

/// The URL the jobmanager logged for its REST API ("" after 30 s).
inline std::string rest_url(running_process& jobmanager) {
  using namespace std::chrono_literals;
  if (!jobmanager.wait_for_stderr("REST API at http://", 30s)
      || !jobmanager.wait_for_stderr("\n", 30s))
    return {};
  std::smatch m;
  const auto& log = jobmanager.stderr_so_far();
  if (!std::regex_search(log, m,
                         std::regex{"REST API at (http://[0-9.]+:[0-9]+)\n"}))
    return {};
  return m[1];
}

/// GET `path` of the API at `url` (no answer within 10 s: an empty result).
inline httplib::Result rest_get(const std::string& url, const std::string& path,
                                const httplib::Headers& headers = {}) {
  using namespace std::chrono_literals;
  httplib::Client client{url};
  client.set_connection_timeout(10s);
  client.set_read_timeout(10s);
  return client.Get(path.c_str(), headers);
}

} // namespace weir::test
