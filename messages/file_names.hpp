#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "messages/job_graph.hpp"

namespace weir {

/// Longest file name, in bytes: one path component (Linux's NAME_MAX).
constexpr size_t max_file_name_bytes = 255;

/// Whether `name` can be one component of a path as it is: not empty, at
/// most max_file_name_bytes long, no '/' and no NUL, not "." or "..". A
/// name another process sent (a blob's name, a vertex id) is checked with
/// this where it is received, before a path is built from it.
bool is_file_name(std::string_view name);

/// Whether `hash` has the form of a blob's content hash (the blob store's
/// key, storage::content_hash: XXH3-128 as 32 lowercase hex digits).
bool is_content_hash(std::string_view hash);

/// "" when `name` is a file name, else "FIELD 'NAME' is not a file name"
/// (the name made printable, and cut after 64 bytes with its length).
std::string file_name_problem(std::string_view field, std::string_view name);

/// "" when `hash` is a content hash, else "FIELD 'HASH' is not a content
/// hash (32 lowercase hex digits)".
std::string content_hash_problem(std::string_view field, std::string_view hash);

/// The first problem of a job's libraries and files, libraries first: a
/// name that is not a file name ("library name '../../x' is not a file
/// name", "file name ..."), a hash that is not a content hash ("library
/// hash ...", "file hash ..."); "" when there is none. Classpath entries
/// are paths on purpose and not checked.
std::string user_code_problem(const user_code& code);

} // namespace weir
