// The example host's functions as a user library (docs/cpp-api.md, steps
// 2 and 3): what travels to a session cluster's workers with the job, and
// a driver that runs the same job inside a cluster of its own.
//
//   weir run -D -c word_count libweir_example_functions.so FILE
#include <string>

#include "api/job_builder.hpp"
#include "api/user_function.hpp"
#include "operators/plugin.hpp"

// [words]
// Each word of a line, lower-cased, as a record keyed by the word: travels
// by its name, "words", to whichever workers load this library.
WEIR_FLAT_MAP(words, [](weir::record&& line, std::vector<weir::record>& out) {
  std::string word;
  for (char c : line.text + " ") {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.push_back(weir::record::integer(word, 1));
      word.clear();
    }
  }
}, weir::default_schema::keyed_numbers());
// [/words]

// [job]
/// How often each word of `path` occurs: one job, whoever runs it.
weir::job_definition word_count(const std::string& path) {
  weir::job_builder job{"word count"};
  job.parallelism(2);
  job.read_text_file(path).name("lines")
    .flat_map(words).name("words")
    .key_by().sum("value").name("counts")
    .collect().name("out").parallelism(1);
  return job.build();
}
// [/job]

namespace {

// [driver]
/// Step 3: the same job from a driver (`weir run -D -c word_count ...`).
int word_count_driver(weir::plugin::driver_context& ctx) {
  if (ctx.args().empty())
    throw std::runtime_error("usage: word_count FILE");
  auto counts = ctx.run(word_count(ctx.args()[0]));
  for (auto row : counts.table("out"))
    ctx.print(row.get<std::string>("key") + "\t"
              + std::to_string(row.get<int64_t>("value")));
  return 0;
}

void setup(weir::plugin::registrar& r) {
  r.add_driver("word_count", word_count_driver);
}
// [/driver]

} // namespace

WEIR_PLUGIN(setup)
