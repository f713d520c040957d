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

#include "api/job_builder.hpp"
#include "api/user_function.hpp"
#include "operators/plugin.hpp"

namespace {

using weir::plugin::driver_context;

/// A function that travels: named here, it runs on whichever workers
/// load this library (the application cluster's, which the driver's jobs
/// run on). Empty lines have no words; dropping them early is cheaper.
WEIR_FILTER(has_text, [](const weir::record& r) { return !r.text.empty(); });

weir::job_definition word_count(const std::string& input) {
  weir::job_builder job{"top words: count"};
  job.parallelism(2);
  job.read_text_file(input).name("lines")
    .filter(has_text)
    .flat_map("tokenize").name("words")
    .key_by().count().name("counts")
    .rebalance().collect().name("out").parallelism(1);
  return job.build();
}

weir::job_definition top_job(const std::string& counts, int n) {
  weir::job_builder job{"top words: top"};
  // inline_text, parse_count and top_n come from the example operator
  // library (--libjars).
  job.source("inline_text", {{"text", counts}}).name("counts")
    .apply("parse_count").name("parsed")
    // One top_n subtask sees every count (whatever -p says).
    .rebalance().apply("top_n", {{"n", std::to_string(n)}}).name("top")
    .parallelism(1)
    .collect().name("out").parallelism(1);
  return job.build();
}

int top_words(driver_context& ctx) {
  if (ctx.args().empty())
    throw std::runtime_error("usage: top_words INPUT [N]");
  auto input = ctx.args()[0];
  // An attached file (--file) is found by its name.
  if (!std::filesystem::exists(input))
    input = ctx.file(input);
  int n = ctx.args().size() > 1 ? std::stoi(ctx.args()[1]) : 10;
  auto counted = ctx.run(word_count(std::filesystem::absolute(input)));
  std::string lines;
  // Rows by field name and type: the count step emits (key, value).
  for (auto row : counted.table("out"))
    lines += row.get<std::string>("key") + "\t"
             + std::to_string(row.get<int64_t>("value")) + "\n";
  auto top = ctx.run(top_job(lines, n));
  for (auto row : top.table("out"))
    ctx.print(row.line());
  return 0;
}

void setup(weir::plugin::registrar& r) {
  r.add_driver("top_words", top_words);
}

} // namespace

WEIR_PLUGIN(setup)
