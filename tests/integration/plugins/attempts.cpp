// Operators that read their context: a map that fails on the job's first
// attempt only (ops::operator_context::attempt_number), and one that tags
// records with where they ran.
#include <string>

#include "operators/plugin.hpp"

namespace {

using weir::record;
using weir::plugin::args;
using weir::plugin::param;
namespace ops = weir::ops;

void setup(weir::plugin::registrar& r) {
  // `fail_first_attempt` (parameter `after`): passes records on, but on
  // attempt 0 fails after `after` records per subtask.
  r.add_operator(weir::plugin::map_operator(
    "fail_first_attempt", {param<int64_t>("after", "records before failing")},
    [](const args& a, const ops::operator_context& ctx) {
      int64_t left = ctx.attempt_number == 0 ? a.get<int64_t>("after") : -1;
      return [left](record&& x) mutable {
        if (left >= 0 && left-- == 0)
          throw ops::operator_error("injected failure on attempt 0");
        return std::move(x);
      };
    }));
  // `where` (parameters of every type): the text value becomes
  // "<prefix><subtask>/<parallelism> attempt <n> <scale * 2> <flag>: <text>".
  r.add_operator(weir::plugin::map_operator(
    "where",
    {param<std::string>("prefix", "", "text before the position"),
     param<double>("scale", 1.5, "a number, shown doubled"),
     param<bool>("flag", false, "a flag, shown")},
    [](const args& a, const ops::operator_context& ctx) {
      auto tag = a.get<std::string>("prefix")
                 + std::to_string(ctx.subtask_index) + "/"
                 + std::to_string(ctx.parallelism) + " attempt "
                 + std::to_string(ctx.attempt_number) + " "
                 + std::to_string(a.get<double>("scale") * 2) + " "
                 + (a.get<bool>("flag") ? "true" : "false") + ": ";
      return [tag](record&& x) {
        x.text = tag + x.text;
        return std::move(x);
      };
    }));
}

} // namespace

WEIR_PLUGIN(setup)
