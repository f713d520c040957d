// Job submission over REST: POST /jars/upload keeps a user library (Flink's
// field "jarfile"), GET /jars lists them, POST /jars/{jarid}/run runs one's
// driver as an application, POST /jobs turns a weir job spec into a
// JobGraph the way `weir run -m` does and submits it (docs/operations.md §
// REST API).
#include "rest/job_inspection.hpp"
#include "rest/context.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "client/submission.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "plan/job_spec.hpp"
#include "rest/body.hpp"
#include "rest/json.hpp"
#include "storage/blob_store.hpp"

namespace weir::rest {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;
using nlohmann::json;
namespace fs = std::filesystem;

/// Storing a library (synced) and submitting may take longer than a look-up.
constexpr auto submit_deadline = std::chrono::seconds{60};

/// The upload id of `name` with these bytes: "<content hash>_<name>" (Flink
/// prefixes a random id), so that uploading the same library twice keeps
/// one copy.
std::string upload_id(const std::string& hash, const std::string& name) {
  return hash + "_" + name;
}

/// Writes `bytes` to `path` through a temporary file of its own in a
/// directory no upload id can name, so that a reader never sees half a
/// library and two uploads of one library never share a file. An id that
/// exists has these bytes already (the id holds their hash).
bool write_file(const fs::path& path, const std::string& bytes) {
  std::error_code ec;
  if (fs::exists(path, ec))
    return true;
  static std::atomic<uint64_t> next{0};
  auto incoming = path.parent_path() / ".incoming";
  fs::create_directories(incoming, ec);
  auto tmp = incoming / std::to_string(next++);
  {
    std::ofstream out{tmp, std::ios::binary | std::ios::trunc};
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec)
    fs::remove(tmp, ec);
  return fs::exists(path, ec);
}

/// Longest library name an upload keeps (its id adds 33 characters and
/// must stay a file name).
constexpr size_t max_upload_name = 200;

/// POST /jars/upload: multipart/form-data with the library in "jarfile".
reply upload(context& ctx, const Req& req) {
  if (!req.is_multipart_form_data() || !req.has_file("jarfile"))
    return error_reply(400, "expected multipart/form-data with the library "
                            "in field 'jarfile'");
  auto file = req.get_file_value("jarfile");
  auto name = fs::path{file.filename}.filename().string();
  if (auto err = check_file_name("library name", name))
    return error_reply(400, describe(err));
  if (name.size() > max_upload_name)
    return error_reply(400, fmt::format("library name: longer than {} bytes",
                                        max_upload_name));
  if (file.content.rfind("\x7f" "ELF", 0) != 0)
    return error_reply(400, fmt::format("'{}' is not a shared library (no ELF "
                                        "header)",
                                        name));
  auto id = upload_id(storage::content_hash(file.content), name);
  if (!write_file(fs::path{ctx.upload_dir} / id, file.content))
    return error_reply(500, fmt::format("cannot store '{}' in {}", name,
                                        ctx.upload_dir));
  return reply{200, json{{"filename", id}, {"status", "success"}}};
}

/// The uploaded libraries a submission names, read back with their blob
/// references (the name as uploaded, no origin: workers take them from the
/// blob store); an error naming the first unusable one.
struct uploaded {
  std::vector<std::string> paths;
  std::vector<blob_ref> refs;
  std::vector<std::string> bytes;
};

caf::expected<uploaded> read_uploads(const context& ctx,
                                     const std::vector<std::string>& ids) {
  auto invalid = [](std::string problem) {
    return make_error(errc::invalid_request, std::move(problem));
  };
  uploaded out;
  // Each library is read whole: a name listed twice (or a thousand times)
  // must not multiply that.
  constexpr size_t max_libraries = 64;
  if (ids.size() > max_libraries)
    return invalid(fmt::format("field 'libraries': more than {} libraries",
                               max_libraries));
  for (size_t i = 0; i < ids.size(); ++i) {
    auto field = fmt::format("libraries[{}]", i);
    auto& id = ids[i];
    if (std::find(ids.begin(), ids.begin() + static_cast<long>(i), id)
        != ids.begin() + static_cast<long>(i))
      return invalid(
        fmt::format("field '{}': '{}' is listed twice", field, id));
    auto sep = id.find('_');
    auto path = (fs::path{ctx.upload_dir} / id).string();
    auto file = is_file_name(id) && sep != std::string::npos
                  ? storage::read_user_file(path)
                  : storage::user_file{{}, {}, true, {}};
    if (!file.ok())
      return invalid(fmt::format("field '{}': no uploaded library '{}' (POST "
                                 "/jars/upload gives the name)",
                                 field, id));
    out.paths.push_back(path);
    out.refs.push_back(blob_ref{id.substr(sep + 1), file.ref.hash, ""});
    out.bytes.push_back(std::move(file.bytes));
  }
  return out;
}

/// The JobGraph of a POST /jobs body, resolved and validated as the CLI
/// does (spec errors name the field, prefixed "spec: "), with the uploaded
/// libraries it names in `libs`; `errc::invalid_request` (400) when the
/// request is wrong.
caf::expected<job_graph> graph_of(const context& ctx, const json& body,
                                  uploaded& libs) {
  auto invalid = [](std::string problem) {
    return make_error(errc::invalid_request, std::move(problem));
  };
  auto spec_field = body.find("spec");
  if (spec_field == body.end() || !spec_field->is_object())
    return invalid("field 'spec' must be a weir job spec (a JSON object)");
  auto ids = strings_field(body, "libraries");
  if (!ids)
    return ids.error();
  auto parallelism = int_field(body, "parallelism", 1, INT32_MAX);
  if (!parallelism)
    return parallelism.error();
  auto params = text_map_field(body, "params");
  if (!params)
    return params.error();
  auto config = text_map_field(body, "config");
  if (!config)
    return config.error();
  auto read = read_uploads(ctx, *ids);
  if (!read)
    return read.error();
  libs = std::move(*read);
  // The libraries load in a child process to check the spec's operators
  // and derive its schemas, as the client of `weir run -m` does: never in
  // the jobmanager, which their constructors would run in.
  job_inspection what;
  what.spec = spec_field->dump();
  what.params = {params->begin(), params->end()};
  if (*parallelism)
    what.parallelism = static_cast<int32_t>(**parallelism);
  what.config = {config->begin(), config->end()};
  what.libraries = libs.paths;
  inspection_limits limits;
  limits.timeout = ctx.config.get(keys::rest_inspection_timeout);
  limits.memory_mb = ctx.config.get(keys::rest_inspection_memory).mb;
  auto graph = inspect_in_child(what, ctx.upload_dir, limits);
  if (!graph)
    return invalid(describe(graph.error()));
  graph->code.libraries = libs.refs;
  return std::move(*graph);
}

/// A refused submission: bad input is 400 (a duplicate id 409), the rest
/// the cluster's.
reply submission_refused(const caf::error& err) {
  auto is = [&](errc code) {
    return err.category() == errc_category()
           && err.code() == static_cast<uint8_t>(code);
  };
  if (is(errc::duplicate_job))
    return error_reply(409, describe(err));
  if (is(errc::invalid_job) || is(errc::invalid_config))
    return error_reply(400, describe(err));
  return refused(err);
}

/// Ships `libs` to the blob store and submits `graph`: `answer(id)` once
/// the Dispatcher stored it, a refusal otherwise.
template <class F>
reply submit_graph(context& ctx, job_graph graph, const uploaded& libs,
                   F answer) {
  return ctx.ask([&](caf::scoped_actor& self, dispatcher_actor& d,
                     resource_manager_actor&) {
    reply out = error_reply(500, "no answer");
    bool shipped = true;
    for (size_t i = 0; shipped && i < libs.refs.size(); ++i)
      self
        ->request(d, submit_deadline, blob_atom_v, put_atom_v,
                  libs.refs[i].hash, libs.bytes[i])
        .receive([](bool) {},
                 [&](caf::error& err) {
                   out = submission_refused(err);
                   shipped = false;
                 });
    if (!shipped)
      return out;
    self->request(d, submit_deadline, submit_atom_v, std::move(graph))
      .receive([&](job_id& id) { out = answer(id); },
               [&](caf::error& err) { out = submission_refused(err); });
    return out;
  });
}

/// POST /jobs: 202 {"jobid", "jobUrl"} once the Dispatcher stored the job.
reply submit(context& ctx, const Req& req) {
  auto body = parse_body(req.body);
  if (!body)
    return refused(body.error());
  uploaded libs;
  auto graph = graph_of(ctx, *body, libs);
  if (!graph)
    return refused(graph.error());
  return submit_graph(ctx, std::move(*graph), libs, [](const job_id& id) {
    return reply{202, json{{"jobid", id.to_string()},
                           {"jobUrl", "/jobs/" + id.to_string()}}};
  });
}

/// Milliseconds since the epoch of `path`'s last change (0: unknown).
int64_t mtime_ms(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000
         + st.st_mtim.tv_nsec / 1000000;
}

/// GET /jars: the uploaded libraries, newest first. Their drivers are not
/// listed ("entry" is empty): that would load the library (weir info
/// --libjars LIB lists them).
reply list_jars(context& ctx) {
  std::vector<json> found;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(ctx.upload_dir, ec)) {
    auto id = e.path().filename().string();
    auto sep = id.find('_');
    if (id.empty() || id[0] == '.' || sep == std::string::npos)
      continue;
    auto when = mtime_ms(e.path());
    found.push_back(json{{"id", id},
                         {"name", id.substr(sep + 1)},
                         {"uploaded", when},
                         {"entry", json::array()}});
  }
  std::sort(found.begin(), found.end(), [](const json& a, const json& b) {
    return a["uploaded"].get<int64_t>() > b["uploaded"].get<int64_t>();
  });
  return reply{200, json{{"address", ctx.address}, {"files", found}}};
}

/// DELETE /jars/{jarid}.
reply delete_jar(context& ctx, const std::string& id) {
  std::error_code ec;
  if (!is_file_name(id) || id[0] == '.'
      || !fs::remove(fs::path{ctx.upload_dir} / id, ec))
    return error_reply(404, fmt::format("no uploaded library '{}' (GET /jars "
                                        "lists them)",
                                        id));
  return reply{200, json::object()};
}

/// `text` split at blanks, quotes keeping blanks in an argument (Flink's
/// programArgs).
std::vector<std::string> split_args(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool any = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      any = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (any || !cur.empty())
        out.push_back(std::move(cur));
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty())
    out.push_back(std::move(cur));
  return out;
}

/// What POST /jars/{jarid}/run asks for, from its body or (as Flink also
/// takes them) its query: the driver job of the uploaded library.
caf::expected<client::driver_request> driver_of(const Req& req,
                                                const json& body) {
  auto invalid = [](std::string problem) {
    return make_error(errc::invalid_request, std::move(problem));
  };
  auto query = [&](const char* name) {
    return req.has_param(name) ? req.get_param_value(name) : std::string{};
  };
  client::driver_request r;
  auto entry = string_field(body, "entryClass", query("entry-class"));
  if (!entry)
    return entry.error();
  if (entry->empty())
    return invalid("field 'entryClass' must name the library's driver, as "
                   "weir run -c does (a library has no manifest to name it)");
  r.name = *entry;
  if (body.contains("programArgsList")) {
    auto list = strings_field(body, "programArgsList");
    if (!list)
      return list.error();
    r.args = *list;
  } else if (auto text = string_field(body, "programArgs", ""); !text) {
    return text.error();
  } else if (!text->empty()) {
    r.args = split_args(*text);
  } else if (req.has_param("programArg")) {
    // Flink's query form: comma-separated.
    std::string all = query("programArg");
    for (size_t from = 0; from <= all.size();) {
      auto to = std::min(all.find(',', from), all.size());
      r.args.push_back(all.substr(from, to - from));
      from = to + 1;
    }
  } else {
    r.args = split_args(query("program-args"));
  }
  auto parallelism = int_field(body, "parallelism", 1, INT32_MAX);
  if (!parallelism)
    return parallelism.error();
  if (*parallelism)
    r.parallelism = **parallelism;
  else if (req.has_param("parallelism")) {
    try {
      auto p = std::stoll(query("parallelism"));
      if (p < 1 || p > INT32_MAX)
        throw std::out_of_range{"parallelism"};
      r.parallelism = p;
    } catch (...) {
      return invalid(fmt::format("query parameter 'parallelism': '{}' is not "
                                 "a positive integer",
                                 query("parallelism")));
    }
  }
  auto savepoint = string_field(body, "savepointPath", query("savepointPath"));
  if (!savepoint)
    return savepoint.error();
  r.savepoint_path = *savepoint;
  auto allow = bool_field(body, "allowNonRestoredState",
                          query("allowNonRestoredState") == "true");
  if (!allow)
    return allow.error();
  r.allow_non_restored_state = *allow;
  auto mode = string_field(body, "restoreMode", "NO_CLAIM");
  if (!mode)
    return mode.error();
  if (*mode == "CLAIM")
    return invalid("field 'restoreMode': weir never takes over a savepoint "
                   "(CLAIM); it restores as NO_CLAIM does");
  if (*mode != "NO_CLAIM" && *mode != "LEGACY")
    return invalid(fmt::format("field 'restoreMode': '{}' is not CLAIM, "
                               "NO_CLAIM or LEGACY",
                               *mode));
  return r;
}

/// The driver request of a /jars/{jarid}/run or /plan request; its body
/// (none: {}) into `body`.
caf::expected<client::driver_request> jar_request(const Req& req, json& body) {
  if (!req.body.empty()) {
    auto parsed = parse_body(req.body);
    if (!parsed)
      return parsed.error();
    body = std::move(*parsed);
  } else {
    body = json::object();
  }
  return driver_of(req, body);
}

/// POST /jars/{jarid}/run: the library's driver as an application, as
/// `weir run -D -m ... -c NAME LIB ARGS` submits it; 200 {"jobid"}.
reply run_jar(context& ctx, const Req& req, const std::string& jarid) {
  json body;
  auto request = jar_request(req, body);
  if (!request)
    return refused(request.error());
  auto libs = read_uploads(ctx, {jarid});
  if (!libs)
    return error_reply(404, fmt::format("no uploaded library '{}' (GET /jars "
                                        "lists them)",
                                        jarid));
  if (!request->savepoint_path.empty()) {
    if (auto err = client::check_restore_file(request->savepoint_path))
      return error_reply(400, "savepointPath: " + describe(err));
  }
  auto graph = client::driver_job_graph(*request);
  graph.code.libraries = libs->refs;
  if (auto given = string_field(body, "jobId", ""); !given) {
    return refused(given.error());
  } else if (!given->empty()) {
    auto id = job_id::parse(*given);
    if (!id)
      return error_reply(400, fmt::format("field 'jobId': '{}' is not 32 "
                                          "hexadecimal characters",
                                          *given));
    graph.id = *id;
  }
  return submit_graph(ctx, std::move(graph), *libs, [](const job_id& id) {
    return reply{200, json{{"jobid", id.to_string()}}};
  });
}

/// GET and POST /jars/{jarid}/plan: the plan of the job that would run,
/// the driver's own (the driver and the sink of what it prints); the jobs
/// the driver submits are built as it runs, and their plans are theirs.
reply plan_jar(context& ctx, const Req& req, const std::string& jarid) {
  json body;
  auto request = jar_request(req, body);
  if (!request)
    return refused(request.error());
  std::error_code ec;
  if (!is_file_name(jarid) || jarid[0] == '.'
      || !fs::is_regular_file(fs::path{ctx.upload_dir} / jarid, ec))
    return error_reply(404, fmt::format("no uploaded library '{}' (GET /jars "
                                        "lists them)",
                                        jarid));
  auto graph = client::driver_job_graph(*request);
  job_status s;
  s.id = job_id::random();
  if (auto given = string_field(body, "jobId", ""); given && !given->empty())
    if (auto id = job_id::parse(*given))
      s.id = *id;
  s.name = graph.name;
  return reply{200, json{{"plan", plan(s, graph)}}};
}

} // namespace

void add_jar_list_routes(httplib::Server& http, context& ctx) {
  http.Get("/jars", [&ctx](const Req&, Res& res) { send(res, list_jars(ctx)); });
  http.Delete(R"(/jars/([^/]+))", [&ctx](const Req& req, Res& res) {
    send(res, delete_jar(ctx, req.matches[1]));
  });
}

void add_submit_routes(httplib::Server& http, context& ctx) {
  http.Post("/jars/upload", [&ctx](const Req& req, Res& res) {
    send(res, upload(ctx, req));
  });
  http.Post("/jobs", [&ctx](const Req& req, Res& res) {
    send(res, submit(ctx, req));
  });
  http.Post(R"(/jars/([^/]+)/run)", [&ctx](const Req& req, Res& res) {
    send(res, run_jar(ctx, req, req.matches[1]));
  });
  auto plan_route = [&ctx](const Req& req, Res& res) {
    send(res, plan_jar(ctx, req, req.matches[1]));
  };
  http.Get(R"(/jars/([^/]+)/plan)", plan_route);
  http.Post(R"(/jars/([^/]+)/plan)", plan_route);
}

} // namespace weir::rest
