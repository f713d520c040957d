#pragma once

#include <string>
#include <vector>

#include "messages/job_result.hpp"

namespace weir::cli {

/// How `weir status` shows a running job's load: one line per task (chain),
/// in the order of the subtasks, "  <task>  <in> in/s  <out> out/s  busy
/// <b> ms/s  backpressured <p> ms/s": records per second summed over the
/// task's subtasks, busy and backpressured time the highest of one subtask
/// (Flink's "Busy (max)", "Backpressured (max)"), all over each subtask's
/// last metrics window. Subtasks that are not RUNNING count as zero.
std::vector<std::string>
task_load_lines(const std::vector<subtask_status>& subtasks);

/// How `weir status` shows event time: one line per task whose subtasks
/// have a watermark, "  <task>  input <t>  output <t>", each the least of
/// its subtasks' (Flink's currentInputWatermark and
/// currentOutputWatermark) in UTC, "none" before any and "end" once the
/// input ended. No lines for a job without watermarks.
std::vector<std::string>
watermark_lines(const std::vector<subtask_status>& subtasks);

} // namespace weir::cli
