#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <caf/error.hpp>

#include "messages/job_graph.hpp"

namespace weir {

/// Longest file name, in bytes: one path component (Linux's NAME_MAX).
constexpr size_t max_file_name_bytes = 255;

/// Whether `name` can be one component of a path as it is: not empty, at
/// most max_file_name_bytes long, no '/' and no NUL, not "." or "..". A
/// name another process sent (a blob's name, a vertex id) is checked with
/// this where it is received, before a path is built from it.
bool is_file_name(std::string_view name);

/// A local path as Flink writes it, as a path: "file:///x" and "file:/x"
/// are "/x" (Flink's savepoint locations are such URIs); anything else
/// comes back as it is.
std::string local_path(std::string_view uri_or_path);

/// Whether `hash` has the form of a blob's content hash (the blob store's
/// key, storage::content_hash: XXH3-128 as 32 lowercase hex digits).
bool is_content_hash(std::string_view hash);

/// None when `name` is a file name, else errc::invalid_job with "FIELD
/// 'NAME' is not a file name" (the name made printable, and cut after 64
/// bytes with its length).
[[nodiscard]] caf::error check_file_name(std::string_view field,
                                         std::string_view name);

/// None when `hash` is a content hash, else errc::invalid_job with "FIELD
/// 'HASH' is not a content hash (32 lowercase hex digits)".
[[nodiscard]] caf::error check_content_hash(std::string_view field,
                                            std::string_view hash);

/// The first problem of a job's libraries and files, libraries first
/// (errc::invalid_job): a name that is not a file name ("library name
/// '../../x' is not a file name", "file name ..."), a hash that is not a
/// content hash ("library hash ...", "file hash ..."); none when there is
/// none. Classpath entries are paths on purpose and not checked.
[[nodiscard]] caf::error check_user_code(const user_code& code);

} // namespace weir
