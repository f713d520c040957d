#include "messages/errors.hpp"

#include <iterator>

#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>
#include <caf/sec.hpp>

namespace weir {

std::string to_string(errc x) {
  static constexpr const char* names[] = {
    "none",           "invalid_job",       "duplicate_job",
    "unknown_job",    "fencing_token_mismatch", "slot_unavailable",
    "storage_failure", "operator_failure", "canceled", "timeout",
    "storage_locked", "supervision_gave_up",
    "leader_lost", "crashed", "application_finished", "application_failed",
    "not_running", "checkpoint_aborted", "blob_not_found", "invalid_config",
    "storage_corrupt", "peer_lost", "insufficient_network_buffers",
    "registration_refused", "protocol_violation", "invalid_request"};
  static_assert(std::size(names)
                  == static_cast<size_t>(errc::invalid_request)
                       + 1,
                "one name per errc");
  auto i = static_cast<size_t>(x);
  return i < std::size(names) ? names[i] : "unknown";
}

std::optional<errc> parse_errc(std::string_view name) {
  for (int i = 1; i <= static_cast<int>(errc::invalid_request); ++i)
    if (to_string(static_cast<errc>(i)) == name)
      return static_cast<errc>(i);
  return std::nullopt;
}

caf::atom_value errc_category() {
  return caf::atom("weir");
}

caf::error make_error(errc code, std::string context) {
  if (context.empty())
    return caf::error{static_cast<uint8_t>(code), errc_category()};
  return caf::error{static_cast<uint8_t>(code), errc_category(),
                    caf::make_message(std::move(context))};
}

std::string describe(const caf::error& err) {
  if (!err)
    return "no error";
  auto& ctx = err.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  if (err.category() == errc_category())
    return to_string(static_cast<errc>(err.code()));
  if (err.category() == caf::atom("exit")) {
    // How a remote actor's end reaches us: say it in words, not enum names.
    switch (static_cast<caf::exit_reason>(err.code())) {
      case caf::exit_reason::remote_link_unreachable:
      case caf::exit_reason::unreachable:
        return "the network connection to it broke or it was killed";
      case caf::exit_reason::kill:
      case caf::exit_reason::user_shutdown:
        return "it was shut down";
      default:
        return "it ended: " + caf::to_string(err);
    }
  }
  if (err.category() == caf::atom("system"))
    return "system error: " + caf::to_string(static_cast<caf::sec>(err.code()));
  return caf::to_string(err);
}

} // namespace weir
