#pragma once

// The JSON form of what weir's client API carries (docs/operations.md §
// Client API): job statuses and results, collected rows, JobGraphs.
// Field names are the C++ members'; a field a reader does not know is
// ignored and one it misses keeps its default, so that a client and a
// jobmanager one version apart still understand each other.

#include <string_view>
#include <vector>

#include <caf/expected.hpp>
#include <nlohmann/json_fwd.hpp>

#include "messages/job_graph.hpp"
#include "messages/job_result.hpp"

namespace weir::wire {

nlohmann::json encode(const job_status& x);
nlohmann::json encode(const std::vector<job_status>& xs);
nlohmann::json encode(const job_result& x);
nlohmann::json encode(const cancel_outcome& x);
nlohmann::json encode(const std::vector<collected_table>& xs);
nlohmann::json encode(const job_graph& x);

/// Reads a `T` from `j`; an error (`errc::invalid_job`) names `what` and
/// the field that does not fit.
template <class T>
[[nodiscard]] caf::expected<T> decode(const nlohmann::json& j, std::string_view what);

} // namespace weir::wire
