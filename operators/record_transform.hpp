#pragma once

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "messages/record.hpp"
#include "operators/operator.hpp"

namespace weir::ops {

/// Appends `records` to `out`, rows of schema `s`; the first record that
/// does not fit it fails the job naming operator `who`.
inline void append_records(row_batch& out, const schema& s,
                           const std::vector<record>& records,
                           const std::string& who) {
  for (auto& r : records)
    if (!append_record(out, s, r))
      throw operator_error(fmt::format(
        "'{}' emitted a record that does not fit its output schema {}: "
        "key '{}', {} value",
        who, to_string(s), r.key, r.is_text ? "a text" : "an int64"));
}

/// A transform written against records (a string key, an int64 or string
/// value): the named functions of map, flat_map and filter from before
/// rows, and user code of the same kind. It runs on the default schemas
/// (default_schema::matches): rows become records, and the records it
/// emits become rows of its output schema. A record that does not fit the
/// output schema fails the job with a message naming the operator.
class record_transform : public transform {
public:
  void open(const operator_context& ctx) override {
    if (ctx.input != nullptr)
      input_ = *ctx.input;
    if (ctx.output != nullptr)
      output_ = *ctx.output;
    name_ = ctx.vertex_id;
    open_records(ctx);
  }

  void process(row_batch& in, row_batch& out, bool partial) override {
    records_.clear();
    records_.reserve(in.rows);
    for (size_t i = 0; i < in.rows; ++i)
      records_.push_back(to_record(in, input_, i));
    results_.clear();
    apply(records_, results_, partial);
    append(results_, out);
  }

  void finish(row_batch& out) override {
    results_.clear();
    finish_records(results_);
    append(results_, out);
  }

  void on_timer(int64_t time, time_domain domain, row_batch& out) override {
    results_.clear();
    on_timer_records(time, domain, results_);
    append(results_, out);
  }

protected:
  /// Called by open() once the schemas are known.
  virtual void open_records(const operator_context&) {}
  /// Consumes `in` (records may be moved from), appends results to `out`.
  virtual void apply(std::vector<record>& in, std::vector<record>& out,
                     bool partial)
    = 0;
  virtual void finish_records(std::vector<record>&) {}
  /// A timer is due (transform::on_timer): append what it emits. A record
  /// keeps the event time it is given (record::timestamp).
  virtual void on_timer_records(int64_t /*time*/, time_domain /*domain*/,
                                std::vector<record>& /*out*/) {}

private:
  void append(const std::vector<record>& records, row_batch& out) {
    append_records(out, output_, records, name_);
  }

  schema input_;
  schema output_;
  std::string name_;
  std::vector<record> records_;
  std::vector<record> results_;
};

} // namespace weir::ops
