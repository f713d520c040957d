#include "sim/faulty_store.hpp"

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir::sim {

caf::error faulty_store::refuse(std::string_view key) {
  if (fenced_)
    return make_error(errc::storage_failure,
                      fmt::format("simulated store: refused the write of "
                                  "'{}': this jobmanager is no longer the "
                                  "leader",
                                  key));
  return make_error(errc::storage_failure,
                    fmt::format("simulated store: writing '{}' failed "
                                "(injected I/O error)",
                                key));
}

caf::error faulty_store::put(storage::column c, std::string_view key,
                             std::string_view value, storage::durability d) {
  if (refusing())
    return refuse(key);
  return inner_->put(c, key, value, d);
}

caf::error faulty_store::remove(storage::column c, std::string_view key,
                                storage::durability d) {
  if (refusing())
    return refuse(key);
  return inner_->remove(c, key, d);
}

caf::error faulty_store::write(const storage::write_batch& batch,
                               storage::durability d) {
  if (refusing())
    return refuse("a batch");
  return inner_->write(batch, d);
}

caf::error faulty_store::persist() {
  if (refusing())
    return refuse("(flush)");
  return inner_->persist();
}

} // namespace weir::sim
