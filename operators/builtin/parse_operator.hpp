#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "operators/operator.hpp"
#include "operators/formats/row_formats.hpp"

namespace weir::ops {

/// The `parse` transform: reads a text field of each input row (`field`,
/// default "value") as a line of `format` (csv, tsv, whitespace, json) and
/// emits a row of `schema`, with the input row's event time.
///
/// A line that does not parse, or whose text field is null:
///  - on_error fail (default): the job fails with "line N: <problem>",
///    e.g. "line 7: field 'status': 'abc' is not an int64" (the runtime
///    prefixes the vertex).
///  - on_error skip: the line is dropped and counted. skipped() says how
///    many, first_problem() what was wrong with the first ("line N: ...").
///    The operator reports neither itself: the runtime is to read them
///    (after finish(), or with its metrics) and report them with the job.
/// N counts the rows this subtask received, from 1: the file's line
/// number when the text comes straight from one text_file reader.
/// Checkpoints keep N, the count of skipped lines and the first problem.
class parse_transform : public transform {
public:
  enum class on_error { fail, skip };

  /// `f` is the delimited format, or nullopt for JSON lines.
  parse_transform(std::optional<delimited_format> f, schema s,
                  std::string field, on_error e);

  void open(const operator_context& ctx) override;
  void process(row_batch& in, row_batch& out, bool partial) override;
  std::string snapshot_state() const override;
  void restore_state(const std::string& bytes) override;
  /// At another parallelism, subtask i takes the counts of the old
  /// subtasks j with j mod n = i (so each old subtask's once), and the
  /// first problem of the lowest of them.
  void restore_rescaled(const std::vector<std::string>& old_states) override;

  /// Lines dropped by on_error skip.
  int64_t skipped() const { return skipped_; }
  int64_t rows_skipped() const override { return skipped_; }
  std::string skip_note() const override { return first_problem_; }

  /// "line N: <problem>" of the first line skipped, or "".
  const std::string& first_problem() const { return first_problem_; }

private:
  std::optional<delimited_format> format_;
  schema schema_;
  std::string field_;
  on_error on_error_;
  size_t field_index_ = 0;
  int32_t index_ = 0;
  int32_t parallelism_ = 1;
  int64_t lines_ = 0;
  int64_t skipped_ = 0;
  std::string first_problem_;
};

} // namespace weir::ops
