#include "reference.hpp"

#include <random>

namespace weir::test {

std::map<std::string, int64_t> reference_word_counts(const std::string& text) {
  std::map<std::string, int64_t> counts;
  std::string word;
  auto flush = [&] {
    if (!word.empty())
      ++counts[word];
    word.clear();
  };
  for (unsigned char c : text) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                 || (c >= '0' && c <= '9') || c == '_';
    if (!alnum) {
      flush();
      continue;
    }
    word += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  flush();
  return counts;
}

std::vector<std::string> as_lines(const std::map<std::string, int64_t>& m) {
  std::vector<std::string> out;
  for (auto& [k, v] : m)
    out.push_back(k + "\t" + std::to_string(v));
  return out;
}

std::string random_text(uint32_t seed, int lines) {
  static const std::vector<std::string> vocab{
    "River",  "weir",  "flow", "STREAM", "data_flow", "x42", "Zürich",
    "don't",  "e-mail", "über", "flink",  "ray",     "dask", "Ω",
    "snake_case", "CamelCase", "123", "a", "I", "naïve"};
  static const std::vector<std::string> seps{" ", "  ", ", ", ". ", "\t",
                                             "; ", "!? ", " -- ", "\xc2\xa0"};
  std::mt19937 rng{seed};
  std::string text;
  for (int l = 0; l < lines; ++l) {
    auto words = rng() % 12;
    for (uint32_t w = 0; w < words; ++w) {
      text += vocab[rng() % vocab.size()];
      text += seps[rng() % seps.size()];
    }
    text += (l % 7 == 3) ? "\r\n" : "\n";
  }
  return text;
}

} // namespace weir::test
