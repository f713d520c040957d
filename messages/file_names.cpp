#include "messages/file_names.hpp"

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "messages/printable.hpp"

namespace weir {

namespace {

/// How much of a refused name a message shows.
constexpr size_t shown_bytes = 64;

/// 'TEXT' for a message: printable, and cut with its length when long.
std::string quoted(std::string_view text) {
  if (text.size() <= shown_bytes)
    return fmt::format("'{}'", printable(text));
  return fmt::format("'{}...' ({} bytes)",
                     printable(text.substr(0, shown_bytes)), text.size());
}

caf::error check_blob(std::string_view kind, const blob_ref& b) {
  if (auto err = check_file_name(fmt::format("{} name", kind), b.name))
    return err;
  return check_content_hash(fmt::format("{} hash", kind), b.hash);
}

} // namespace

bool is_file_name(std::string_view name) {
  return !name.empty() && name.size() <= max_file_name_bytes
         && name.find('/') == std::string_view::npos
         && name.find('\0') == std::string_view::npos && name != "."
         && name != "..";
}

bool is_content_hash(std::string_view hash) {
  return hash.size() == 32
         && hash.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

caf::error check_file_name(std::string_view field, std::string_view name) {
  if (is_file_name(name))
    return caf::none;
  return make_error(errc::invalid_job, fmt::format("{} {} is not a file name",
                                                   field, quoted(name)));
}

caf::error check_content_hash(std::string_view field, std::string_view hash) {
  if (is_content_hash(hash))
    return caf::none;
  return make_error(
    errc::invalid_job,
    fmt::format("{} {} is not a content hash (32 lowercase hex digits)", field,
                quoted(hash)));
}

caf::error check_user_code(const user_code& code) {
  for (auto& b : code.libraries)
    if (auto err = check_blob("library", b))
      return err;
  for (auto& b : code.files)
    if (auto err = check_blob("file", b))
      return err;
  return caf::none;
}

std::string local_path(std::string_view given) {
  if (given.rfind("file://", 0) == 0)
    given.remove_prefix(7);
  else if (given.rfind("file:", 0) == 0)
    given.remove_prefix(5);
  return std::string{given};
}

} // namespace weir
