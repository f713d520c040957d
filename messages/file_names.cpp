#include "messages/file_names.hpp"

#include <fmt/format.h>

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

std::string blob_problem(std::string_view kind, const blob_ref& b) {
  auto problem = file_name_problem(fmt::format("{} name", kind), b.name);
  if (problem.empty())
    problem = content_hash_problem(fmt::format("{} hash", kind), b.hash);
  return problem;
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

std::string file_name_problem(std::string_view field, std::string_view name) {
  if (is_file_name(name))
    return {};
  return fmt::format("{} {} is not a file name", field, quoted(name));
}

std::string content_hash_problem(std::string_view field,
                                 std::string_view hash) {
  if (is_content_hash(hash))
    return {};
  return fmt::format("{} {} is not a content hash (32 lowercase hex digits)",
                     field, quoted(hash));
}

std::string user_code_problem(const user_code& code) {
  for (auto& b : code.libraries)
    if (auto problem = blob_problem("library", b); !problem.empty())
      return problem;
  for (auto& b : code.files)
    if (auto problem = blob_problem("file", b); !problem.empty())
      return problem;
  return {};
}

} // namespace weir
