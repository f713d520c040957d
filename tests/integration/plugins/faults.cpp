// User code that misbehaves, and user code that counts: operators of the
// outcome-and-error tests (tests/integration/outcome_test.cpp).
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "operators/plugin.hpp"

namespace {

using weir::record;
namespace ops = weir::ops;

/// Read through a volatile pointer, so that the compiler emits a real
/// store through null (a trap instruction would be SIGILL, not SIGSEGV).
int* volatile nowhere = nullptr;

/// `numbers` (transform on lines): each line that is an integer becomes
/// (key: "n", value: it); the others are dropped and counted as
/// `bad_lines`, the integers as `good_lines` (ops::counter).
class numbers : public ops::record_transform {
protected:
  void open_records(const ops::operator_context& ctx) override {
    good_ = ctx.counter("good_lines");
    bad_ = ctx.counter("bad_lines");
    ctx.counter("never"); // registered, stays 0
  }

  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in) {
      char* end = nullptr;
      auto n = std::strtoll(r.text.c_str(), &end, 10);
      if (r.text.empty() || *end != '\0') {
        bad_.inc();
        continue;
      }
      good_.inc();
      out.push_back(record::integer("n", n));
    }
    in.clear();
  }

private:
  ops::counter good_;
  ops::counter bad_;
};

void setup(weir::plugin::registrar& r) {
  // `throws`: std::stoll of every line (std::invalid_argument on a word).
  r.add_operator(weir::plugin::map_operator(
    "throws",
    [](record&& x) { return record::integer(x.text, std::stoll(x.text)); },
    weir::default_schema::keyed_numbers()));
  // `segv`: writes through a null pointer at its first record.
  r.add_operator(weir::plugin::map_operator("segv", [](record&& x) {
    *nowhere = 1;
    return std::move(x);
  }));
  ops::operator_factory f;
  f.name = "numbers";
  f.make_transform = [](const ops::params&) {
    return std::make_unique<numbers>();
  };
  f.output_schema = [](const ops::params&, const ops::schema_query&) {
    return ops::derived_schema{weir::default_schema::keyed_numbers(), {}};
  };
  r.add_operator(std::move(f));
  // `counts`: runs the job spec in file args[0] and prints what its
  // outcome says about its vertex `tokens`.
  r.add_driver("counts", [](weir::plugin::driver_context& ctx) {
    std::ifstream in{ctx.args().at(0)};
    std::stringstream spec;
    spec << in.rdbuf();
    auto outcome = ctx.run(spec.str());
    auto& tokens = outcome.vertex("tokens");
    ctx.print("bad_lines " + std::to_string(outcome.counter("tokens", "bad_lines")));
    ctx.print("good_lines " + std::to_string(outcome.counter("tokens", "good_lines")));
    ctx.print("tokens " + std::to_string(tokens.records_in) + " in, "
              + std::to_string(tokens.records_out) + " out");
    ctx.print("job " + std::to_string(outcome.metrics.records_in) + " in, "
              + std::to_string(outcome.metrics.records_out) + " out");
    ctx.print(outcome.runtime_ms() >= 0 ? "runtime measured" : "no runtime");
    try {
      outcome.counter("tokens", "bad_line");
    } catch (const std::out_of_range& e) {
      std::string what = e.what();
      ctx.print(what.substr(what.find(": ") + 2));
    }
    return 0;
  });
}

} // namespace

WEIR_PLUGIN(setup)
