#include "rest/job_inspection.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <random>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "os/command.hpp"
#include "messages/errors.hpp"
#include "operators/library_loader.hpp"
#include "plan/job_spec.hpp"
#include "storage/detail/job_graph_codec.hpp"

namespace weir {

namespace {

using nlohmann::json;

/// The child's exit codes.
constexpr int resolved = 0;
constexpr int refused = 2;
constexpr int out_of_memory = 3;

/// Output of the child that is kept (a library may print anything).
constexpr size_t max_child_output = 64 * 1024;
/// The largest result file read back: a JobGraph fits in a message.
constexpr std::streamsize max_result_bytes = 256 << 20;

std::string signal_name(int sig) {
  auto* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("signal {} (SIG{})", sig, abbrev)
                           : fmt::format("signal {}", sig);
}

/// Reads at most max_result_bytes of `path`; nothing if it cannot.
std::optional<std::string> read_result(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return std::nullopt;
  std::string bytes;
  bytes.resize(static_cast<size_t>(max_result_bytes) + 1);
  in.read(bytes.data(), max_result_bytes + 1);
  if (in.gcount() > max_result_bytes)
    return std::nullopt;
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

std::string random_suffix() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

/// Removes the files it names when it goes.
struct file_pair {
  std::string request, result;
  ~file_pair() {
    std::remove(request.c_str());
    std::remove(result.c_str());
  }
};

/// What became of a child that did not finish its work.
std::string child_failure(const os::command_result& r,
                          const inspection_limits& limits) {
  if (r.start_error != 0)
    return fmt::format("cannot start it: {}", std::strerror(r.start_error));
  if (r.timed_out)
    return fmt::format("it did not finish within {} ms "
                       "(rest.submit.inspection-timeout)",
                       limits.timeout.count());
  if (r.exit_code == out_of_memory)
    return fmt::format("it needed more than its {} MiB of address space "
                       "(rest.submit.inspection-memory)",
                       limits.memory_mb);
  if (r.signal != 0)
    return fmt::format("it was killed by {}", signal_name(r.signal));
  return fmt::format("it exited with code {}", r.exit_code);
}

} // namespace

caf::expected<job_graph> inspect_in_child(const job_inspection& what,
                                          const std::string& work_dir,
                                          const inspection_limits& limits) {
  auto base = fmt::format("{}/inspect-{}", work_dir, random_suffix());
  file_pair files{base + ".json", base + ".result"};
  json request{{"spec", what.spec},
               {"params", what.params},
               {"config", what.config},
               {"libraries", what.libraries}};
  if (what.parallelism)
    request["parallelism"] = *what.parallelism;
  {
    std::ofstream out{files.request, std::ios::binary};
    out << request.dump();
    if (!out)
      return make_error(errc::storage_failure,
                        fmt::format("cannot write {}", files.request));
  }
  std::error_code ec;
  auto weir = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    return make_error(errc::invalid_job,
                      "field 'libraries': cannot find this program to check "
                      "the spec in a process of its own (/proc/self/exe)");
  auto r = os::run_command({weir.string(), "inspect-job", files.request,
                        files.result, std::to_string(limits.memory_mb)},
                       limits.timeout, {}, max_child_output);
  if (!r.timed_out && (r.exit_code == resolved || r.exit_code == refused)) {
    auto bytes = read_result(files.result);
    if (bytes && r.exit_code == refused)
      return make_error(errc::invalid_job, *bytes);
    if (bytes) // a graph of no job yet: its id is nil, as its key says
      return storage::detail::decode_job_graph(job_id{}.to_string(), *bytes);
  }
  return make_error(errc::invalid_job,
                    fmt::format("field 'libraries': the process that loads "
                                "them to check the spec failed: {}",
                                child_failure(r, limits)));
}

namespace {

std::string result_path; // for the new-handler

/// Writes `text` as the result and returns `code`.
int finish(const std::string& text, int code) {
  std::ofstream out{result_path, std::ios::binary | std::ios::trunc};
  out << text;
  return out ? code : 1;
}

/// The inspection itself: a problem as `weir run` words it, or the graph.
int inspect(const json& request) {
  std::vector<std::string> libraries = request.at("libraries");
  const ops::registry* operators = nullptr;
  try {
    operators = &ops::registry_for(libraries);
  } catch (const std::exception& e) {
    return finish(fmt::format("field 'libraries': {}", e.what()), refused);
  }
  auto spec = parse_job_spec_text(request.at("spec").get<std::string>(),
                                  "spec");
  if (!spec)
    return finish(describe(spec.error()), refused);
  for (auto& [key, value] : request.at("config").items())
    spec->config[key] = value.get<std::string>(); // the request's win
  std::optional<int32_t> parallelism;
  if (request.contains("parallelism"))
    parallelism = request.at("parallelism").get<int32_t>();
  auto graph = resolve_job_graph(
    *spec, request.at("params").get<std::map<std::string, std::string>>(),
    parallelism, operators);
  if (!graph)
    return finish(describe(graph.error()), refused);
  return finish(storage::detail::encode_job_graph(*graph), resolved);
}

} // namespace

int run_job_inspection(const std::vector<std::string>& args) {
  if (args.size() != 3) {
    std::fputs("weir inspect-job: an internal action of the jobmanager's "
               "REST API (REQUEST RESULT MEMORY_MB)\n",
               stderr);
    return refused;
  }
  result_path = args[1];
  // Before any library is loaded: its constructor runs under these.
  auto memory = static_cast<rlim_t>(std::stoll(args[2])) << 20;
  rlimit as{memory, memory};
  ::setrlimit(RLIMIT_AS, &as);
  rlimit core{0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  std::set_new_handler([] { ::_exit(out_of_memory); });
  try {
    std::ifstream in{args[0], std::ios::binary};
    std::stringstream text;
    text << in.rdbuf();
    return inspect(json::parse(text.str()));
  } catch (const std::bad_alloc&) {
    ::_exit(out_of_memory);
  } catch (const std::exception& e) {
    return finish(fmt::format("the request to inspect is unreadable: {}",
                              e.what()),
                  refused);
  }
}

} // namespace weir
