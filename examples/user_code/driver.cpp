// An example driver: counts the words of a file with one job, then keeps
// the ten most frequent with a second job that uses the example operator
// library, and prints them.
//
//   weir run -D -c top_words
//     --libjars build/examples/user_code/libweir_example_ops.so
//     build/examples/user_code/libweir_example_driver.so examples/data/sample.txt
//
// (options first: what follows the driver library is the driver's own
// arguments, as with Flink's jar file)
//
// (the input path is read by the cluster's workers; with --file FILE the
// driver finds an attached copy by name instead).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "operators/plugin.hpp"

namespace {

using weir::plugin::driver_context;

std::string word_count_spec(const std::string& input) {
  nlohmann::json spec = {
    {"name", "top words: count"},
    {"parallelism", 2},
    {"vertices",
     {{{"id", "lines"}, {"operator", "text_file"}, {"params", {{"path", input}}}},
      {{"id", "words"}, {"operator", "flat_map"},
       {"params", {{"function", "tokenize"}}}},
      {{"id", "counts"}, {"operator", "count"}},
      {{"id", "out"}, {"operator", "collect"}, {"parallelism", 1}}}},
    {"edges",
     {{{"from", "lines"}, {"to", "words"}, {"partitioning", "forward"}},
      {{"from", "words"}, {"to", "counts"}, {"partitioning", "hash"}},
      {{"from", "counts"}, {"to", "out"}, {"partitioning", "rebalance"}}}}};
  return spec.dump();
}

std::string top_spec(const std::string& counts, int n) {
  nlohmann::json spec = {
    {"name", "top words: top"},
    {"vertices",
     {{{"id", "counts"}, {"operator", "inline_text"}, {"params", {{"text", counts}}}},
      {{"id", "parsed"}, {"operator", "parse_count"}},
      // One top_n subtask sees every count (whatever -p says).
      {{"id", "top"}, {"operator", "top_n"}, {"parallelism", 1},
       {"params", {{"n", std::to_string(n)}}}},
      {{"id", "out"}, {"operator", "collect"}, {"parallelism", 1}}}},
    {"edges",
     {{{"from", "counts"}, {"to", "parsed"}, {"partitioning", "forward"}},
      {{"from", "parsed"}, {"to", "top"}, {"partitioning", "rebalance"}},
      {{"from", "top"}, {"to", "out"}, {"partitioning", "forward"}}}}};
  return spec.dump();
}

int top_words(driver_context& ctx) {
  if (ctx.args().empty())
    throw std::runtime_error("usage: top_words INPUT [N]");
  auto input = ctx.args()[0];
  // An attached file (--file) is found by its name.
  if (!std::filesystem::exists(input))
    input = ctx.file(input);
  int n = ctx.args().size() > 1 ? std::stoi(ctx.args()[1]) : 10;
  auto counted = ctx.run(word_count_spec(std::filesystem::absolute(input)));
  std::string lines;
  for (auto& r : counted.records)
    lines += r.key + "\t" + std::to_string(r.num) + "\n";
  auto top = ctx.run(top_spec(lines, n));
  for (auto& r : top.records)
    ctx.print(r.key + "\t" + std::to_string(r.num));
  return 0;
}

void setup(weir::plugin::registrar& r) {
  r.add_driver("top_words", top_words);
}

} // namespace

WEIR_PLUGIN(setup)
