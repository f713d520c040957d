// Drivers of the driver-mode tests (and an operator stuck in user code).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "operators/plugin.hpp"

namespace {

using weir::plugin::driver_context;
using weir::plugin::job_priority;

std::string paced_job(const std::string& name, long count) {
  return R"({"name": ")" + name + R"(", "vertices": [
    {"id": "events", "operator": "generator", "params": {"count": )"
         + std::to_string(count) + R"(, "rate": 1000, "keys": 3}},
    {"id": "out", "operator": "discard"}],
    "edges": [{"from": "events", "to": "out", "partitioning": "forward"}]})";
}

const char* sum_job = R"({"name": "sum", "vertices": [
    {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 1000}},
    {"id": "keyed", "operator": "map", "params": {"function": "key_mod", "modulus": 1}},
    {"id": "total", "operator": "sum"},
    {"id": "out", "operator": "collect"}],
    "edges": [{"from": "numbers", "to": "keyed", "partitioning": "forward"},
              {"from": "keyed", "to": "total", "partitioning": "hash"},
              {"from": "total", "to": "out", "partitioning": "forward"}]})";

/// Prints the result of the sum job ("0<TAB>500500").
void print_sum(driver_context& ctx) {
  for (auto row : ctx.run(sum_job).table("out"))
    ctx.print(row.line());
}

void setup(weir::plugin::registrar& r) {
  // A map that never returns (it says so on stderr first): user code stuck
  // where no cancel reaches it.
  r.add_operator(weir::plugin::map_operator("stuck", [](weir::record&&) {
    std::fprintf(stderr, "stuck in user code\n");
    std::fflush(stderr);
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(1));
    return weir::record{};
  }));
  // Starts a long job, then fails: the job must be cancelled.
  r.add_driver("fails_after_submitting", [](driver_context& ctx) -> int {
    ctx.submit(paced_job("long", 1000000));
    throw std::runtime_error("boom");
  });
  // An endless daemon job and a bounded one: the application ends when the
  // bounded one (and the driver) did.
  r.add_driver("daemon_and_work", [](driver_context& ctx) {
    ctx.submit(paced_job("endless daemon", -1), job_priority::daemon);
    print_sum(ctx);
    return 0;
  });
  // Runs the job spec in file args[0] and prints its records.
  r.add_driver("run_spec", [](driver_context& ctx) {
    std::ifstream in{ctx.args().at(0)};
    std::stringstream spec;
    spec << in.rdbuf();
    for (auto& table : ctx.run(spec.str()).collected)
      for (auto row : weir::table_view{table})
        ctx.print(row.line());
    return 0;
  });
  // Waits for an endless job (cancelling the driver must end it), then
  // tries to submit another one.
  r.add_driver("waits_on_endless", [](driver_context& ctx) {
    auto id = ctx.submit(paced_job("endless", -1));
    ctx.print("waiting for " + id);
    auto outcome = ctx.wait(id);
    ctx.print("the endless job ended " + weir::to_string(outcome.state));
    ctx.submit(paced_job("after the wait", -1));
    return 0;
  });
  // Prints its arguments, one line each ("arg: X").
  r.add_driver("echo_args", [](driver_context& ctx) {
    for (auto& a : ctx.args())
      ctx.print("arg: " + a);
    return 0;
  });
  // Runs a job, then returns the status args[0] (the application's exit
  // status).
  r.add_driver("returns_status", [](driver_context& ctx) {
    print_sum(ctx);
    return std::stoi(ctx.args().at(0));
  });
  // Runs a job, then waits (polling) until the file args[0] exists.
  r.add_driver("wait_for_file", [](driver_context& ctx) {
    print_sum(ctx);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!std::filesystem::exists(ctx.args().at(0))
           && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ctx.print("done");
    return 0;
  });
}

} // namespace

WEIR_PLUGIN(setup)
