#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/ids.hpp"
#include "messages/job_graph.hpp"
#include "messages/schema.hpp"

namespace weir {

/// One input of a subtask: the channels of one incoming edge. A `forward`
/// edge gives one channel, any other edge one per producer subtask.
struct input_gate_desc {
  int32_t channels = 0;
  /// Records on this gate are partial aggregates from a combining producer.
  bool preaggregated = false;
  /// The producing vertex, its rows and the edge's key fields by name (a
  /// two-input operator's inputs differ; for others task_deployment::input
  /// and input_key say the same for every gate).
  std::string from;
  schema rows;
  std::vector<std::string> key;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, input_gate_desc& x) {
  return f(caf::meta::type_name("input_gate_desc"), x.channels,
           x.preaggregated, x.from, x.rows, x.key);
}

/// One output of a subtask: an outgoing edge of the chain's last operator.
struct output_desc {
  partitioning part = partitioning::forward;
  int32_t consumers = 0;     ///< parallelism of the consuming task
  int32_t channel_base = 0;  ///< first channel of this edge on each consumer
  /// When not empty, records are pre-aggregated with this keyed aggregation
  /// (count, sum, min, max, avg) before they are sent (a combiner).
  std::string combine;
  /// The consuming aggregation's parameters (its field), for the combiner.
  std::map<std::string, std::string> combine_params;
  /// Hash partitioning: the key fields, by name, in the producer's output
  /// schema (the edge's `key`).
  std::vector<std::string> key;
  /// The side output of the chain's last operator this edge takes (its
  /// schema: that vertex's side_outputs); empty: the main output.
  std::string output;
  /// Hash partitioning: the consumer's max parallelism (its key groups); a
  /// row goes to the consumer owning its key's group. 0: key hash modulo
  /// the consumers (deployments that predate key groups, in tests).
  int32_t key_groups = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, output_desc& x) {
  return f(caf::meta::type_name("output_desc"), x.part, x.consumers,
           x.channel_base, x.combine, x.combine_params, x.key, x.output,
           x.key_groups);
}

/// The checkpointed state of one subtask's operators: vertex id → bytes.
using operator_states = std::map<std::string, std::string>;

/// A job's user code on one node: the libraries to load, in order, and
/// the attached files by name, as local paths.
struct local_code {
  std::vector<std::string> libraries;
  std::map<std::string, std::string> files;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, local_code& x) {
  return f(caf::meta::type_name("local_code"), x.libraries, x.files);
}

/// The keyed state backend of a job, as its JobMaster resolved it.
struct state_backend_desc {
  /// state.backend.type: "hashmap" (heap) or "rocksdb".
  std::string type = "hashmap";
  /// execution.checkpointing.incremental (RocksDB only).
  bool incremental = false;
  /// `<execution.checkpointing.dir>/<job id>`, where RocksDB checkpoints
  /// write their files; empty when checkpoints are not stored in files
  /// (RocksDB then sends canonical bytes, as the heap backend does).
  std::string checkpoint_dir;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, state_backend_desc& x) {
  return f(caf::meta::type_name("state_backend_desc"), x.type, x.incremental,
           x.checkpoint_dir);
}

/// Everything a TaskExecutor needs to run one subtask: the chain of
/// operators it runs, its position and its inputs and outputs.
struct task_deployment {
  job_id job;
  execution_attempt_id attempt;
  /// How many times the job restarted before this attempt (0 at first).
  int32_t attempt_number = 0;
  allocation_id alloc;
  int32_t task_index = 0;    ///< which chain of the job
  int32_t subtask_index = 0; ///< which parallel instance
  int32_t parallelism = 1;
  /// The chain's max parallelism (its key groups; messages/key_groups.hpp).
  int32_t max_parallelism = 128;
  std::string job_name;
  std::string task_name;     ///< e.g. "lines -> words"
  std::vector<vertex_spec> chain;
  /// The schema of the rows on every input gate (the upstream vertices'
  /// output schema; equal for all inputs), and the key fields of the input
  /// edges by name (hash partitioning; empty otherwise).
  schema input;
  std::vector<std::string> input_key;
  std::vector<input_gate_desc> inputs;
  std::vector<output_desc> outputs;
  /// False when some source of the job never ends (a streaming job).
  bool bounded = true;
  /// State to restore before the first record (from the checkpoint the job
  /// restarts from); empty for a fresh start.
  operator_states restore;
  state_backend_desc backend;
  /// The job's libraries and files (the TaskExecutor resolves them to local
  /// paths before it builds the operators).
  user_code code;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_deployment& x) {
  return f(caf::meta::type_name("task_deployment"), x.job, x.attempt, x.attempt_number, x.alloc,
           x.task_index, x.subtask_index, x.parallelism, x.max_parallelism, x.job_name, x.task_name, x.chain,
           x.input, x.input_key, x.inputs, x.outputs, x.bounded, x.restore, x.backend, x.code);
}

} // namespace weir
