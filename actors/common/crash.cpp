#include "actors/common/crash.hpp"

#include "messages/errors.hpp"

namespace weir {

caf::error crash_reason(std::exception_ptr what) {
  try {
    std::rethrow_exception(what);
  } catch (const std::exception& e) {
    return make_error(errc::crashed, std::string{"uncaught exception: "}
                                       + e.what());
  } catch (...) {
    return make_error(errc::crashed, "uncaught exception of unknown type");
  }
}

} // namespace weir
