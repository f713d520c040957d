#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/params.hpp"

namespace weir::ops {

namespace {

/// Writes each batch's lines (by its line_writer) to stdout with one
/// fwrite, so lines of sinks running in parallel threads never interleave
/// within a line.
class stdout_sink : public sink {
public:
  explicit stdout_sink(line_writer w) : write_line_(w) {
  }

  void open(const operator_context& ctx) override {
    if (ctx.input != nullptr)
      schema_ = *ctx.input;
  }

  void write(const row_batch& in) override {
    buf_.clear();
    append_lines(buf_, in, schema_, write_line_);
    if (buf_.empty())
      return;
    if (std::fwrite(buf_.data(), 1, buf_.size(), stdout) != buf_.size()
        || std::fflush(stdout) != 0)
      throw operator_error("cannot write to stdout");
  }

  bool blocking_io() const override { return true; }

private:
  line_writer write_line_;
  schema schema_;
  std::string buf_;
};

/// Drops records. With a delay it is deliberately slow (for backpressure
/// tests): each batch takes that long, and the sink declares blocking I/O so
/// that its subtask sleeps on a thread of its own.
class discard_sink : public sink {
public:
  explicit discard_sink(std::chrono::milliseconds delay) : delay_(delay) {
  }

  void write(const row_batch&) override {
    if (delay_.count() > 0)
      std::this_thread::sleep_for(delay_);
  }

  bool blocking_io() const override { return delay_.count() > 0; }

  std::chrono::microseconds delay_per_batch() const override { return delay_; }

private:
  std::chrono::microseconds delay_;
};

/// Keeps rows, of any schema, until the runtime takes them through
/// collected().
class collect_sink : public sink {
public:
  void open(const operator_context& ctx) override {
    table_.sink = ctx.vertex_id;
    if (ctx.input != nullptr)
      table_.fields = *ctx.input;
    table_.rows.reset(table_.fields);
  }

  void write(const row_batch& in) override { table_.rows.append(in); }

  collected_table* collected() override { return &table_; }

private:
  collected_table table_;
};

const std::vector<param_spec>& discard_params() {
  static const std::vector<param_spec> specs{
    {"delay_ms", param_kind::non_negative, false},
  };
  return specs;
}

/// A sink operator without parameters.
operator_factory plain_sink(std::string name,
                            std::unique_ptr<sink> (*make)()) {
  operator_factory f;
  f.name = name;
  f.make_sink = [name, make](const params& p) {
    throw_if(check_params(name, p, {}));
    return make();
  };
  f.validate = [name](const params& p, role) {
    return check_params(name, p, {});
  };
  return f;
}

} // namespace

std::unique_ptr<sink> make_stdout_sink(line_writer w) {
  return std::make_unique<stdout_sink>(w);
}

operator_factory stdout_factory() {
  return plain_sink("stdout", []() -> std::unique_ptr<sink> {
    return make_stdout_sink(write_tsv_line);
  });
}

operator_factory discard_factory() {
  operator_factory f;
  f.name = "discard";
  f.make_sink = [](const params& p) -> std::unique_ptr<sink> {
    throw_if(check_params("discard", p, discard_params()));
    return std::make_unique<discard_sink>(
      std::chrono::milliseconds{int_param(p, "delay_ms", 0)});
  };
  f.validate = [](const params& p, role) {
    return check_params("discard", p, discard_params());
  };
  f.guarantee = [](const params&) { return sink_guarantee::discarded; };
  return f;
}

operator_factory collect_factory() {
  auto f = plain_sink("collect", []() -> std::unique_ptr<sink> {
    return std::make_unique<collect_sink>();
  });
  f.guarantee = [](const params&) {
    return sink_guarantee::collected_by_job_master;
  };
  return f;
}

} // namespace weir::ops
