// A host program that embeds weir (docs/cpp-api.md): its own actor
// system, its own actor, and a cluster inside it or a session it uses.
//
//   host FILE                        an embedded cluster in this process
//   host FILE HOST:PORT LIBRARY      the session cluster at HOST:PORT; the
//                                    job's functions travel in LIBRARY
//                                    (libweir_example_functions.so)
//
// Prints how often each word of FILE occurs, then (embedded) how many
// words begin with each letter and the words of five letters or more as a
// host actor receives them.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "api/actor_sink.hpp"
#include "api/cluster.hpp"
#include "api/job_builder.hpp"
#include "api/user_function.hpp"
#include "messages/errors.hpp"

// The job, and the `words` function it uses (functions.cpp, linked into
// this program and built as a library for the session case).
weir::job_definition word_count(const std::string& path);

namespace {

// [result-rows]
/// The job's result holds one table per collect sink, by the sink's name;
/// each row is read by field name and type.
void print_counts(const weir::job_result& result) {
  std::vector<std::string> lines;
  for (auto row : result.table("out"))
    lines.push_back(fmt::format("{}\t{}", row.get<std::string>("key"),
                                row.get<int64_t>("value")));
  // [/result-rows]
  std::sort(lines.begin(), lines.end());
  for (auto& line : lines)
    fmt::print("{}\n", line);
}

int fail(const caf::error& err) {
  fmt::print(stderr, "host: {}\n", weir::describe(err));
  return 1;
}

// [embedded]
/// Step 1: a cluster in this process runs the job.
int run_embedded(caf::actor_system& sys, const std::string& path) {
  auto cluster = weir::embedded_cluster::start(sys);
  if (!cluster)
    return fail(cluster.error());
  auto result = (*cluster)->run(word_count(path));
  if (!result)
    return fail(result.error());
  print_counts(*result);
  // [/embedded]
  // [letters]
  // Words by their first letter: a key-selector lambda, then rows of
  // three fields, read back by name and type.
  weir::job_builder letters{"words by letter"};
  letters.read_text_file(path)
    .flat_map("tokenize")
    .key_by([](const weir::record& r) {
      return std::string(1, static_cast<char>(std::tolower(
                              static_cast<unsigned char>(r.key[0]))));
    })
    .sum("value").name("per letter")
    .select("key as letter, upper(key) as capital, value as words")
    .collect().name("letters");
  auto by_letter = (*cluster)->run(letters.build());
  if (!by_letter)
    return fail(by_letter.error());
  std::vector<std::string> lines;
  for (auto row : by_letter->table("letters"))
    lines.push_back(fmt::format("{} ({}): {} words",
                                row.get<std::string>("letter"),
                                row.get<std::string>("capital"),
                                row.get<int64_t>("words")));
  std::sort(lines.begin(), lines.end());
  for (auto& line : lines)
    fmt::print("{}\n", line);
  // [/letters]
  // [host-actor]
  // A host actor receives the long words as the job finds them; the
  // lambda runs as it is, in this process.
  auto printer = sys.spawn(
    [](weir::row_receiver_actor::pointer)
      -> weir::row_receiver_actor::behavior_type {
      return {[](weir::data_atom, weir::row_delivery& d) {
        for (auto& r : weir::records_of(d))
          fmt::print("long word: {}\n", r.key);
        return true; // the sink's credit back
      }};
    });
  weir::job_builder job{"long words"};
  job.read_text_file(path)
    .flat_map("tokenize")
    .filter([](const weir::record& r) { return r.key.size() >= 5; })
    .to(weir::actor_sink(sys, printer)).name("printer");
  auto long_words = (*cluster)->run(job.build());
  caf::anon_send_exit(printer, caf::exit_reason::user_shutdown);
  if (!long_words)
    return fail(long_words.error());
  return long_words->state == weir::job_state::finished ? 0 : 1;
  // [/host-actor]
}

// [session]
/// Step 2: a session cluster runs it; `words` travels in `library`.
int run_on_session(caf::actor_system& sys, const std::string& path,
                   const std::string& address, const std::string& library) {
  auto remote = weir::remote_access::start(sys);
  if (!remote)
    return fail(remote.error());
  auto client = (*remote)->connect(address);
  if (!client)
    return fail(client.error());
  weir::submit_options opts;
  opts.libraries = {library};
  auto id = client->submit(word_count(path), opts);
  if (!id)
    return fail(id.error());
  auto result = client->wait(*id);
  if (!result)
    return fail(result.error());
  print_counts(*result);
  return 0;
}
// [/session]

} // namespace

// [main]
int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    fmt::print(stderr, "usage: host FILE [REST_HOST:PORT LIBRARY]\n");
    return 2;
  }
  caf::actor_system_config cfg;
  if (argc == 2) {
    weir::prepare_actor_system(cfg);
  } else if (auto err = weir::prepare_remote_actor_system(cfg)) {
    return fail(err);
  }
  caf::actor_system sys{cfg};
  return argc == 2 ? run_embedded(sys, argv[1])
                   : run_on_session(sys, argv[1], argv[2], argv[3]);
}
// [/main]
