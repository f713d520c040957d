#pragma once

#include <memory>
#include <string>

#include "operators/builtin/aggregation.hpp"
#include "operators/registry.hpp"

// Factories of weir's built-in operators, assembled by registry::builtin().
// Each make_* function checks the parameters again and throws operator_error
// when they are bad (a job may reach a TaskExecutor without a client check).

namespace weir::ops {

/// `sequence` (source): the numbers from..to, split contiguously.
operator_factory sequence_factory();
operator_factory elements_factory();

/// `generator` (source): keyed numbers, optionally bounded and rate-limited.
operator_factory generator_factory();

/// `map`, `flat_map`, `filter` (transforms with a named function).
operator_factory map_factory();
operator_factory flat_map_factory();
operator_factory filter_factory();

/// filter "where", map "select", project "fields": expressions on fields
/// (expr_operators.cpp).
std::unique_ptr<transform> make_where_transform(const std::string& text);
std::unique_ptr<transform> make_select_transform(const std::string& param,
                                                 const std::string& text);
derived_schema where_schema(const std::string& text, const schema_query& q);
derived_schema select_schema(const std::string& param, const std::string& text,
                             const schema_query& q);
operator_factory project_factory();

/// `count`, `sum`, `min`, `max`, `avg` (keyed aggregations; all but avg
/// combinable).
operator_factory aggregation_factory(aggregation_kind kind);

/// `parse` (transform): text fields to typed rows (parse_operator.hpp).
operator_factory parse_factory();

/// `json_lines` (source and sink): rows as one JSON object a line.
operator_factory json_lines_factory();

/// `weir.driver` (source): runs a driver program (driver mode).
operator_factory driver_factory();

/// `stdout`, `discard`, `collect` (sinks).
operator_factory stdout_factory();
operator_factory discard_factory();
operator_factory collect_factory();

/// The text_file source side (see text_file_source.cpp).
/// The text_file parameters alone (no file system access).
std::string check_text_file_params(const params& p);
std::string check_text_file_source(const params& p);
/// Whether the file the parameter 'path' names can be read: "" or the
/// problem.
std::string check_input_path(const params& p);
std::unique_ptr<source> make_text_file_source(const params& p);

/// How the text sinks write row `i` of `b` (whose schema is `s`): one
/// line, its '\n' included.
using line_writer = void (*)(std::string& out, const row_batch& b, size_t i,
                             const schema& s);

/// text_file's formats: "tsv" (append_row_text: the fields as they are,
/// tab-separated), "csv" (append_delimited); and JSON lines
/// (append_json_line).
void write_tsv_line(std::string& out, const row_batch& b, size_t i,
                    const schema& s);
void write_csv_line(std::string& out, const row_batch& b, size_t i,
                    const schema& s);
void write_json_line(std::string& out, const row_batch& b, size_t i,
                     const schema& s);

/// Appends every row of `b` with `w`.
void append_lines(std::string& out, const row_batch& b, const schema& s,
                  line_writer w);

/// The text_file sink side (see text_file_sink.cpp).
std::string check_text_file_sink(const params& p);
std::unique_ptr<sink> make_text_file_sink(const params& p);
/// text_file with "delivery": "exactly-once": part files committed on
/// checkpoints.
std::unique_ptr<sink> make_transactional_file_sink(const std::string& dir,
                                                   line_writer w);
/// Checks the text_file sink's parameters (path, delivery, format).
std::string check_text_file_sink_params(const params& p);

/// The parameter 'delivery' of a sink writing files (at-least-once or
/// exactly-once; exactly-once needs a directory): "" or the problem.
std::string check_delivery(const params& p);
/// What a sink writing files guarantees with its parameter 'delivery'.
sink_guarantee delivery_guarantee(const params& p);
/// Whether the sink's 'path' can be written: '-' or a path in an existing
/// directory. "" or the problem.
std::string check_output_path(const params& p);
/// "" when `path` is absent, a regular file or a directory; else the
/// problem that a file sink would replace it (/dev/null, a FIFO).
std::string special_output_problem(const std::string& path);
/// A sink writing lines with `w` where the parameters 'path' (a file, a
/// directory of part files, "-" for stdout) and 'delivery' say.
std::unique_ptr<sink> make_text_sink(const params& p, line_writer w);

/// A sink writing lines to stdout (also text_file with path "-").
std::unique_ptr<sink> make_stdout_sink(line_writer w);

} // namespace weir::ops
