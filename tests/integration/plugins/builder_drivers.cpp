// Drivers that build their jobs with the C++ job builder: a function
// named with WEIR_MAP travels to the workers; a lambda cannot.
#include <string>

#include "api/job_builder.hpp"
#include "api/user_function.hpp"
#include "operators/plugin.hpp"

namespace {

using weir::plugin::driver_context;
using weir::record;

WEIR_MAP(doubled, [](record&& r) {
  r.num *= 2;
  return std::move(r);
});

/// The sum of 2, 4, ... 2000, computed on the cluster's workers.
int travelling(driver_context& ctx) {
  weir::job_builder job{"doubled sum"};
  job.parallelism(2);
  job.sequence(1, 1000)
    .map(doubled).name("double")
    .map("key_mod", {{"modulus", "1"}})
    .key_by().sum("value").name("total")
    .collect();
  for (auto row : ctx.run(job.build()).table("collect"))
    ctx.print(row.line());
  return 0;
}

/// The same with a lambda: refused before it is submitted.
int lambda_job(driver_context& ctx) {
  weir::job_builder job{"with a lambda"};
  job.sequence(1, 1000)
    .map([](record&& r) {
      r.num *= 2;
      return std::move(r);
    }).name("double")
    .collect();
  ctx.run(job.build());
  return 0;
}

void setup(weir::plugin::registrar& r) {
  r.add_driver("travelling", travelling);
  r.add_driver("lambda_job", lambda_job);
}

} // namespace

WEIR_PLUGIN(setup)
