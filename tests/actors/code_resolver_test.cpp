// The TaskExecutor's code resolver refuses names and hashes that would
// build paths outside its cache, whoever sent them.
#include "caf_doctest.hpp"

#include <filesystem>
#include <fstream>

#include "actors/task_executor/code_resolver.hpp"
#include "event_log_capture.hpp"
#include "fakes.hpp"
#include "messages/errors.hpp"
#include "storage/blob_store.hpp"

using namespace weir;
using namespace weir::test;

namespace {

namespace fs = std::filesystem;

struct resolver_fixture : actor_fixture {
  temp_dir root;
  std::string cache = root.sub("te/blobs");
  std::string origin = root.sub("client/libx.so");
  std::string hash;
  code_resolver_actor resolver = spawn_code_resolver(sys, cache, "te-1");
  job_master_actor jm = sys.spawn(fake_job_master);

  resolver_fixture() {
    fs::create_directories(root.sub("client"));
    std::ofstream{origin} << "library bytes";
    hash = storage::content_hash("library bytes");
  }

  ~resolver_fixture() {
    caf::anon_send_exit(resolver, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(jm, caf::exit_reason::user_shutdown);
    run();
  }

  /// Every file below the test's directory outside the origin's.
  std::vector<std::string> written() const {
    std::vector<std::string> out;
    for (auto& f : fs::recursive_directory_iterator{root.path()})
      if (f.is_regular_file() && f.path() != origin)
        out.push_back(f.path().string());
    return out;
  }
};

} // namespace

TEST_CASE_FIXTURE(resolver_fixture,
                  "a blob name that is not a file name is refused before "
                  "anything is written") {
  event_log_capture log;
  // The origin holds the same content: without the check, the resolver
  // would copy it to <cache>/<hash>/../../x, next to the cache.
  user_code code;
  code.libraries = {{"../../x", hash, origin}};
  auto err = error_of<local_code>(*this, resolver, blob_atom_v, code, jm);
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err)
        == "TaskExecutor te-1 refuses the job's user code: library name "
           "'../../x' is not a file name");
  CHECK(log.lines_with("refuses").size() == 1);
  // A shipped file would be fetched from the JobMaster and written.
  code.libraries.clear();
  code.files = {{"/etc/x", hash, ""}};
  code.always_ship = true;
  CHECK(describe(error_of<local_code>(*this, resolver, blob_atom_v, code, jm))
        == "TaskExecutor te-1 refuses the job's user code: file name "
           "'/etc/x' is not a file name");
  code.files = {{"x", "../../../x", ""}};
  CHECK(describe(error_of<local_code>(*this, resolver, blob_atom_v, code, jm))
        == "TaskExecutor te-1 refuses the job's user code: file hash "
           "'../../../x' is not a content hash (32 lowercase hex digits)");
  CHECK(log.lines_with("refuses").size() == 3);
  CHECK(written().empty());
  CHECK_FALSE(fs::exists(root.sub("te/x")));
  CHECK_FALSE(fs::exists(cache));
}

TEST_CASE_FIXTURE(resolver_fixture,
                  "a library with a file name is placed in the cache") {
  user_code code;
  code.libraries = {{"libx.so", hash, origin}};
  auto local = request<local_code>(resolver, blob_atom_v, code, jm);
  auto cached = cache + "/" + hash + "/libx.so";
  CHECK(local.libraries == std::vector<std::string>{cached});
  CHECK(written() == std::vector<std::string>{cached});
}
