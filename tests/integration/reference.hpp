#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace weir::test {

/// Word counts computed independently of weir: lower-case ASCII, split on
/// every byte that is not an ASCII letter, digit or underscore.
std::map<std::string, int64_t> reference_word_counts(const std::string& text);

/// "key<TAB>value" lines of a map, sorted by key.
std::vector<std::string> as_lines(const std::map<std::string, int64_t>& m);

/// A text of `lines` lines from a fixed seed, mixing words of a small
/// vocabulary with upper case, digits, underscores, punctuation, tabs and
/// non-ASCII bytes.
std::string random_text(uint32_t seed, int lines);

} // namespace weir::test
