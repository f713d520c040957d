#pragma once

#include <memory>
#include <vector>

#include "actors/task_executor/output_gate.hpp"
#include "messages/deployment.hpp"
#include "messages/job_result.hpp"
#include "operators/operator.hpp"

namespace weir {

/// The operators of one subtask, chained: an optional source, transforms,
/// and either a sink or output gates. Plain class: the subtask actor feeds
/// it batches and sends what its gates release.
class operator_chain {
public:
  /// Builds every operator (no I/O yet); throws ops::operator_error.
  operator_chain(const task_deployment& d, const exchange_options& opts);
  ~operator_chain();

  /// Opens every operator (files are opened here); throws
  /// ops::operator_error naming the vertex.
  void open();

  bool has_source() const { return source_ != nullptr; }
  bool blocking_io() const;

  /// Pulls one batch from the source through the chain; false once the
  /// source is exhausted.
  bool run_source();

  /// Pushes an input batch of gate `gate` through the chain.
  void process(size_t gate, std::vector<record>& batch);

  /// End of all input: lets aggregations emit, closes open batches and
  /// finishes the sink.
  void finish();

  /// Removes in-progress sink output (failure or cancel).
  void abort();

  /// Checkpoint `checkpoint`'s barrier reached the sink: its output so far
  /// becomes durable but stays invisible (phase one of two).
  void prepare_commit(int64_t checkpoint);

  /// The checkpoint completed everywhere: the sink publishes its output.
  void commit(int64_t checkpoint);

  /// The state of every stateful operator, by vertex id (a checkpoint).
  operator_states snapshot() const;

  /// Restores what snapshot() returned (after open()); state of a vertex
  /// this chain does not have is an error naming it.
  void restore(const operator_states& states);

  std::vector<output_gate>& gates() { return gates_; }
  ops::source* source() { return source_.get(); }
  ops::sink* sink() { return sink_.get(); }
  const io_metrics& metrics() const { return metrics_; }

  /// Whether any gate has batches waiting for credit.
  bool backlogged() const;

private:
  void push(std::vector<record>& batch, size_t first_transform, bool partial);
  void deliver(std::vector<record>& batch);

  std::vector<ops::operator_context> contexts_; // source, transforms, sink
  std::unique_ptr<ops::source> source_;
  std::vector<std::unique_ptr<ops::transform>> transforms_;
  std::unique_ptr<ops::sink> sink_;
  std::vector<output_gate> gates_;
  std::vector<bool> preaggregated_; // per input gate
  std::vector<record> scratch_;
  size_t batch_records_;
  io_metrics metrics_;
};

} // namespace weir
