// The C++ job builder in a driver (docs/cpp-api.md): a function named with
// WEIR_MAP runs on the workers of an application cluster, which load the
// driver's library; a lambda is refused before anything is submitted.
#include <doctest/doctest.h>

#include "process.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;

TEST_CASE("a driver's job with a function named by WEIR_MAP runs on the cluster's workers") {
  auto r = run_weir({"run", "-D", "-c", "travelling",
                     test_plugin("builder_drivers")});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "0\t1001000\n");
}

TEST_CASE("a driver's job with a lambda is refused, naming the step") {
  auto r = run_weir({"run", "-D", "-c", "lambda_job",
                     test_plugin("builder_drivers")});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(
          "driver 'lambda_job' failed: job 'with a lambda': step 'double' (a "
          "map lambda) exists only in this process, so a cluster in another "
          "process cannot run it: define the function with WEIR_MAP, "
          "WEIR_FLAT_MAP or WEIR_FILTER in a library the cluster loads "
          "(--libjars, the driver's library), or run the job on an embedded "
          "cluster")
        != std::string::npos);
}
