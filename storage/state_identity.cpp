#include "storage/state_identity.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "messages/errors.hpp"
#include "storage/detail/object_reader.hpp"
#include "storage/detail/record_codec.hpp"

namespace weir::storage {

namespace {

/// The first problem of a stored identity record, or "" with `owner` set.
std::string read_owner(const std::string& value, std::string& owner) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(value);
  } catch (const nlohmann::json::parse_error& e) {
    return fmt::format("invalid JSON at byte {}", e.byte);
  }
  if (!doc.is_object())
    return "record is not a JSON object";
  std::string problem;
  detail::object_reader reader{doc, {}, problem};
  auto version = reader.int64("format_version");
  if (problem.empty() && version != detail::format_version)
    return fmt::format("unknown format_version {} (this weir reads {})",
                       version, detail::format_version);
  owner = reader.text("cluster_id");
  return problem;
}

} // namespace

caf::error claim_state_dir(kv_store& kv, const std::string& cluster_id,
                           const std::string& dir) {
  auto refuse = [](std::string why) {
    return make_error(errc::storage_failure, std::move(why));
  };
  auto doc = detail::new_record();
  doc["cluster_id"] = cluster_id;
  auto record = detail::dump_record(doc);
  auto stored = kv.get(identity_column, identity_key);
  if (!stored)
    return refuse(fmt::format("{}: cannot read its cluster id: {}", dir,
                              describe(stored.error())));
  if (!*stored) {
    if (auto err = kv.put(identity_column, identity_key, record,
                          durability::synced))
      return refuse(fmt::format("{}: cannot record its cluster id: {}", dir,
                                describe(err)));
    return caf::none;
  }
  std::string owner;
  if (auto problem = read_owner(**stored, owner); !problem.empty())
    return refuse(fmt::format("{}: unreadable cluster id record {}: {}", dir,
                              key_name(identity_column, identity_key),
                              problem));
  // Compare with the id as it would be stored (JSON keeps no invalid UTF-8).
  std::string expected;
  read_owner(record, expected);
  if (owner != expected)
    return refuse(fmt::format("{} belongs to cluster '{}', not '{}' "
                              "(high-availability.cluster-id)",
                              dir, printable(owner), printable(cluster_id)));
  return caf::none;
}

} // namespace weir::storage
