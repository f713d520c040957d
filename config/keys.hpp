#pragma once

// Every configuration key weir reads, in one table: Flink's name, the value
// type, the default and the meaning. docs/configuration.md lists the same
// keys with the same types and defaults (the `config` unit test checks it);
// `config_keys()` (keys.cpp) lists these constants for the parser.

#include <chrono>
#include <string>

#include "config/config_key.hpp"

namespace weir::keys {

using ms = std::chrono::milliseconds;
constexpr auto per_job = config_scope::job;

// Ranges shared by many keys. Durations end at a year: anything longer is a
// typo, and adding it to a clock would overflow.
constexpr value_range any_duration{"0", "8760 h"};
constexpr value_range positive_duration{"1 ms", "8760 h"};
constexpr value_range memory{"0", "16384g"}; // 16 TiB
constexpr value_range cpu_cores{"0", "65536"};

// --- cluster, jobmanager, resourcemanager ---------------------------------

inline constexpr config_key<bool> evenly_spread_out_slots{
  "cluster.evenly-spread-out-slots", "false",
  "Take slots from the TaskExecutor with the most free slots instead of "
  "filling one TaskExecutor after the other."};
inline constexpr config_key<std::string> storage_dir{
  "high-availability.storageDir", "",
  "RocksDB directory of job graphs and results. `weir jobmanager`: default "
  "$XDG_STATE_HOME/weir or ~/.local/state/weir; `weir run`: in memory "
  "unless set."};
inline constexpr config_key<std::string> cluster_id{
  "high-availability.cluster-id", "default",
  "Name of the cluster: processes and clients of different clusters (or weir "
  "versions) refuse each other's connections."};
inline constexpr config_key<std::string> ha_type{
  "high-availability.type", "none",
  "How jobmanagers agree on a leader. none: one host; a standby jobmanager "
  "waits for the RocksDB lock of the same high-availability.storageDir. "
  "etcd: leader election through etcd with a lease; job graphs, results, "
  "checkpoint metadata and blobs are files in high-availability.storageDir "
  "(shared by every jobmanager) with pointers in etcd "
  "(docs/deployment.md).",
  {}, config_scope::cluster, "none|NONE|etcd|ETCD"};
inline constexpr config_key<std::string> ha_etcd_endpoints{
  "high-availability.etcd.endpoints", "",
  "The etcd cluster of high-availability.type etcd: HOST:PORT of its client "
  "URLs (plain HTTP), comma-separated."};
inline constexpr config_key<ms> ha_etcd_lease_ttl{
  "high-availability.etcd.lease-ttl", "10 s",
  "The leader's etcd lease (whole seconds, at least 2 s): a leader that "
  "could not renew it stops before it ends; a standby takes over at most "
  "this long after a leader's host died.", {"2 s", "1 h"}};
inline constexpr config_key<ms> ha_etcd_retry_period{
  "high-availability.etcd.retry-period", "500 ms",
  "How often a standby jobmanager tries to become the leader.",
  {"10 ms", "1 min"}};
inline constexpr config_key<ms> client_leader_wait{
  "client.leader-wait", "60 s",
  "A client of an etcd-named cluster (-m etcd://...) that loses the leader "
  "or finds none waits this long for the next one, then gives up. Keep it "
  "above high-availability.etcd.lease-ttl plus retry-period to ride a "
  "leader's crash.",
  {"0 ms", "8760 h"}};
inline constexpr config_key<ms> registration_initial_timeout{
  "cluster.registration.initial-timeout", "100 ms",
  "First pause of a worker between attempts to reach the master; it doubles "
  "after every failed attempt.", positive_duration};
inline constexpr config_key<ms> registration_max_timeout{
  "cluster.registration.max-timeout", "10 s",
  "Longest pause of a worker between attempts to reach the master.",
  positive_duration};
inline constexpr config_key<int64_t> supervision_max_restarts{
  "jobmanager.supervision.max-restarts", "3",
  "Crashes that are restarted within jobmanager.supervision.within: of each "
  "job's JobMasters (counted per job by the Dispatcher; one more and that job "
  "fails) and of the Dispatcher and ResourceManager (counted by the "
  "jobmanager's supervisor; one more and it gives up, the jobmanager exits "
  "with code 4).", {"0", "1000000"}};
inline constexpr config_key<ms> supervision_within{
  "jobmanager.supervision.within", "1 min",
  "The window of jobmanager.supervision.max-restarts.", positive_duration};
inline constexpr config_key<std::string> jobmanager_address{
  "jobmanager.rpc.address", "127.0.0.1",
  "Address the jobmanager listens on, and that workers and clients connect "
  "to when no -m is given."};
inline constexpr config_key<int64_t> jobmanager_port{
  "jobmanager.rpc.port", "6123",
  "Port of the jobmanager (0: any free port, printed in its log).",
  {"0", "65535"}};
inline constexpr config_key<std::string> rest_address{
  "rest.bind-address", "127.0.0.1",
  "Address the jobmanager's REST API listens on."};
inline constexpr config_key<std::string> rest_client_address{
  "rest.address", "",
  "Address clients (weir list, weir run -m...) connect to for the REST API "
  "when no -m is given (default: jobmanager.rpc.address)."};
inline constexpr config_key<int64_t> rest_port{
  "rest.port", "8081",
  "Port of the jobmanager's REST API (0: any free port, printed in its log).",
  {"0", "65535"}};
inline constexpr config_key<memory_size> rest_max_content_length{
  "rest.server.max-content-length", "100 mb",
  "The largest request body the REST API accepts (a library uploaded with "
  "POST /jars/upload, a job spec); larger ones are answered 413.",
  {"1m", "2047m"}};
inline constexpr config_key<ms> rest_inspection_timeout{
  "rest.submit.inspection-timeout", "30 s",
  "How long the child process that loads a REST submission's libraries to "
  "check its spec may take; past that it is killed and the submission "
  "refused.", {"100 ms", "1 h"}};
inline constexpr config_key<memory_size> rest_inspection_memory{
  "rest.submit.inspection-memory", "2 gb",
  "Address space of the child process that loads a REST submission's "
  "libraries to check its spec; a library that needs more is refused.",
  {"64m", "1048576m"}};
inline constexpr config_key<bool> web_submit_enable{
  "web.submit.enable", "true",
  "Whether the REST API accepts libraries and jobs (POST /jars/upload, POST "
  "/jobs); false answers them 404, as if they did not exist."};
inline constexpr config_key<int64_t> minicluster_task_managers{
  "minicluster.number-of-taskmanagers", "1",
  "TaskExecutors of the embedded cluster of `weir run`.", {"1", "1024"}};
inline constexpr config_key<int64_t> parallelism_default{
  "parallelism.default", "1",
  "Parallelism of the vertices of a job that set none (`weir run -p`, `weir "
  "info -p`); when set it replaces the spec's `parallelism`.",
  {"1", "32768"}};
inline constexpr config_key<int64_t> max_parallelism{
  "pipeline.max-parallelism", "128",
  "Key groups of every vertex: the highest parallelism its keyed state can "
  "be split over (docs/state.md § Key groups). Unset: the savepoint's a "
  "job restores, else 1.5 x the vertex's parallelism rounded up to a power "
  "of two, at least 128 (Flink's rule).",
  {"1", "32768"}, per_job};
inline constexpr config_key<ms> auto_watermark_interval{
  "pipeline.auto-watermark-interval", "200 ms",
  "How often a vertex with \"watermarks\" sends its advanced watermark "
  "(0: after every batch that advances it). Per job or cluster-wide.",
  any_duration, per_job};
inline constexpr config_key<ms> taskmanager_timeout{
  "resourcemanager.taskmanager-timeout", "30 s",
  "Driver mode (a CLI-created cluster): a worker the ResourceManager started "
  "and that has held no slot this long is stopped.", positive_duration};
inline constexpr config_key<double> start_worker_max_failure_rate{
  "resourcemanager.start-worker.max-failure-rate", "10",
  "Driver mode: worker starts that may fail per minute; beyond that no "
  "worker is started until the minute has passed.", {"0", "1000000"}};
inline constexpr config_key<std::string> resourcemanager_backend{
  "resourcemanager.backend", "local",
  "Driver mode: where the ResourceManager starts workers: local (processes "
  "beside the jobmanager) or slurm (one Slurm batch job per worker, "
  "docs/deployment.md).", {}, config_scope::cluster, "local|slurm"};
inline constexpr config_key<std::string> slurm_partition{
  "resourcemanager.slurm.partition", "",
  "Slurm backend: the partition of the worker jobs (sbatch --partition); "
  "default Slurm's default partition."};
inline constexpr config_key<std::string> slurm_account{
  "resourcemanager.slurm.account", "",
  "Slurm backend: the account the worker jobs are charged to (sbatch "
  "--account); default the user's default account."};
inline constexpr config_key<ms> slurm_time_limit{
  "resourcemanager.slurm.time-limit", "0",
  "Slurm backend: the time limit of a worker job, rounded up to whole "
  "minutes (sbatch --time); 0: the partition's default.", any_duration};
inline constexpr config_key<int64_t> slurm_cpus_per_slot{
  "resourcemanager.slurm.cpus-per-slot", "1",
  "Slurm backend: CPUs a worker job asks for per slot when its slot profile "
  "names no CPU cores (sbatch --cpus-per-task).", {"1", "4096"}};
inline constexpr config_key<memory_size> slurm_memory_per_slot{
  "resourcemanager.slurm.memory-per-slot", "1 gb",
  "Slurm backend: memory a worker job asks for per slot when its slot "
  "profile names no memory (sbatch --mem).", {"1m", "16384g"}};
inline constexpr config_key<std::string> slurm_sbatch_args{
  "resourcemanager.slurm.sbatch-args", "",
  "Slurm backend: more sbatch arguments for every worker job, separated by "
  "spaces (no quoting), e.g. `--qos=high --constraint=ssd`."};
inline constexpr config_key<std::string> slurm_bin_dir{
  "resourcemanager.slurm.bin-dir", "",
  "Slurm backend: the directory of sbatch, squeue and scancel; default: "
  "found on PATH."};
inline constexpr config_key<ms> slurm_poll_interval{
  "resourcemanager.slurm.poll-interval", "1 s",
  "Slurm backend: how often squeue is asked which worker jobs ended.",
  positive_duration};
inline constexpr config_key<ms> reconcile_timeout{
  "jobmanager.failover.reconcile-timeout", "10 s",
  "How long the JobMaster of a job a jobmanager recovered waits for the "
  "workers that kept its subtasks running to register again, to adopt "
  "them instead of restarting the job. 0: it does not wait, and restarts "
  "the job's subtasks from its newest checkpoint.", {"0", "1 h"}};
inline constexpr config_key<ms> slot_request_timeout{
  "slot.request.timeout", "300 s",
  "How long a job waits for all of its slots before it fails.",
  positive_duration, per_job};
inline constexpr config_key<std::string> scheduler{
  "jobmanager.scheduler", "default",
  "default: a job runs at its configured parallelism and waits for its "
  "slots; adaptive: at what the slots it can get allow, up to that, "
  "rescaled in place as TaskManagers come and go "
  "(docs/state.md § Adaptive scheduler).",
  {}, per_job, "default|adaptive"};
inline constexpr config_key<std::string> scheduler_mode{
  "scheduler-mode", "",
  "reactive: the adaptive scheduler runs every vertex up to its max "
  "parallelism, using every slot of the cluster (Flink's reactive mode).",
  {}, per_job, "reactive"};
inline constexpr config_key<ms> adaptive_stabilization_timeout{
  "jobmanager.adaptive-scheduler.resource-stabilization-timeout", "10 s",
  "Adaptive scheduler: how long more slots must stay available before a "
  "running job scales up to them.", any_duration, per_job};
inline constexpr config_key<ms> adaptive_resource_wait_timeout{
  "jobmanager.adaptive-scheduler.resource-wait-timeout", "300 s",
  "Adaptive scheduler: how long a job waits for its first slot before it "
  "fails.", positive_duration, per_job};

// --- collect sinks ------------------------------------------------------------

inline constexpr config_key<memory_size> collect_max_bytes{
  "collect.max-bytes", "64 mb",
  "Most a job's collect sinks may hand to its JobMaster in all; past it the "
  "job fails.", memory};
inline constexpr config_key<memory_size> collect_batch_max{
  "collect-sink.batch-size.max", "2 mb",
  "Most one client poll of collected rows gets (at least one row).",
  memory};

// --- heartbeats -----------------------------------------------------------

inline constexpr config_key<ms> heartbeat_interval{
  "heartbeat.interval", "500 ms",
  "How often connected processes exchange heartbeats.", positive_duration};
inline constexpr config_key<int64_t> heartbeat_rpc_failure_threshold{
  "heartbeat.rpc-failure-threshold", "2",
  "Heartbeat requests that may fail in a row (the peer answered that it "
  "cannot be reached) before the peer is declared lost.", {"1", "1000"}};
inline constexpr config_key<ms> heartbeat_timeout{
  "heartbeat.timeout", "3 s",
  "A peer silent this long is declared lost (its TaskExecutor, its "
  "subtasks).", positive_duration};

// --- taskmanager ------------------------------------------------------------

inline constexpr config_key<std::string> local_state_root{
  "taskmanager.state.local.root-dirs", "",
  "Directory under which a worker keeps its RocksDB state (one subdirectory "
  "per worker, removed when it exits); default the system's temporary "
  "directory ($TMPDIR or /tmp)."};
inline constexpr config_key<double> taskmanager_cpu_cores{
  "taskmanager.cpu.cores", "0",
  "CPU cores of a worker, split evenly over its slots (0: unknown).",
  cpu_cores};
inline constexpr config_key<memory_size> taskmanager_off_heap{
  "taskmanager.memory.task.off-heap.size", "0",
  "Direct (off-heap) memory of a worker's tasks, split evenly over its slots "
  "(0: unknown).", memory};
inline constexpr config_key<memory_size> taskmanager_managed{
  "taskmanager.memory.managed.size", "0",
  "Native (managed) memory of a worker, split evenly over its slots (0: "
  "unknown).", memory};
inline constexpr config_key<memory_size> taskmanager_heap{
  "taskmanager.memory.task.heap.size", "0",
  "Task heap memory of a worker, split evenly over its slots (0: unknown).",
  memory};
inline constexpr config_key<memory_size> network_max{
  "taskmanager.memory.network.max", "1 gb",
  "Network buffers of a worker (buffers of 32 KiB): a deployment whose "
  "subtasks need more than are free is refused and its job fails.", memory};
inline constexpr config_key<int64_t> network_buffers_per_channel{
  "taskmanager.network.memory.buffers-per-channel", "2",
  "Exclusive network buffers (credits) of each input channel of a subtask "
  "(each output channel needs one).", {"1", "1024"}};
inline constexpr config_key<int64_t> network_floating_per_gate{
  "taskmanager.network.memory.floating-buffers-per-gate", "8",
  "Network buffers each input gate of a subtask lends to the channels "
  "whose producers have data waiting.", {"1", "65536"}};
inline constexpr config_key<int64_t> network_max_exclusive_per_gate{
  "taskmanager.network.memory.max-exclusive-buffers-per-gate", "64",
  "An input gate whose channels would need more exclusive buffers than "
  "this has none: all its credit floats (wide hash exchanges).",
  {"0", "1073741824"}};
inline constexpr config_key<std::string> taskmanager_host{
  "taskmanager.host", "127.0.0.1",
  "Address a worker's data port listens on, and that the workers exchanging "
  "data with it connect to: set it to an address the other workers reach "
  "when they run on other hosts."};
inline constexpr config_key<int64_t> taskmanager_data_port{
  "taskmanager.data.port", "0",
  "Port of a worker's data port, where other workers send it their batches "
  "(0: any free port).", {"0", "65535"}};
inline constexpr config_key<int64_t> task_slots{
  "taskmanager.numberOfTaskSlots", "1",
  "Slots per TaskExecutor (`weir run`: default enough for the job).",
  {"1", "32768"}};
inline constexpr config_key<std::string> resource_id{
  "taskmanager.resource-id", "", "Name of a worker; default HOST-PID."};
inline constexpr config_key<ms> taskmanager_registration_timeout{
  "taskmanager.registration.timeout", "0",
  "A worker that cannot reach its jobmanager this long (since it started or "
  "lost it) ends with code 5; 0: it keeps trying. Workers of an application "
  "cluster default to 1 min.", any_duration};

inline constexpr config_key<ms> keep_tasks_timeout{
  "taskmanager.failover.keep-tasks-timeout", "30 s",
  "How long a worker keeps running the subtasks of a lost JobMaster (its "
  "jobmanager failed over) for the next one to adopt them without a "
  "restart; then they are canceled. 0: canceled at once, and the job "
  "restarts from its latest checkpoint.", {"0", "1 h"}};

// --- metrics ----------------------------------------------------------------

inline constexpr config_key<std::string> prom_port{
  "metrics.reporter.prom.port", "",
  "A taskmanager's Prometheus endpoint (/metrics): a port, a range "
  "FROM-TO (the first free one) or 0 (any free port); unset: none."};
inline constexpr config_key<std::string> prom_host{
  "metrics.reporter.prom.host", "127.0.0.1",
  "Address a taskmanager's Prometheus endpoint listens on."};
inline constexpr config_key<std::string> prom_prefix{
  "metrics.reporter.prom.prefix", "flink",
  "What every Prometheus series' name starts with, before Flink's scope and "
  "metric name: flink gives Flink's own names (flink_taskmanager_job_task_"
  "numRecordsIn), so that Flink's dashboards and alerts work; weir gives "
  "weir's names of old.",
  {}, config_scope::cluster, "flink|weir"};

// --- driver mode (per job) --------------------------------------------------

inline constexpr config_key<double> driver_cpu_cores{
  "driver.cpu-cores", "0",
  "Driver mode: CPU cores of the driver's slot (-Dc/--drivercpus). Per job.",
  cpu_cores, per_job};
inline constexpr config_key<memory_size> driver_heap_memory{
  "driver.heap-memory", "0",
  "Driver mode: heap memory of the driver's slot (-Dhm/--driverheapmemory). "
  "Per job.",
  memory, per_job};
inline constexpr config_key<memory_size> driver_direct_memory{
  "driver.direct-memory", "0",
  "Driver mode: direct memory of the driver's slot "
  "(-Ddm/--driverdirectmemory). Per job.",
  memory, per_job};
inline constexpr config_key<memory_size> driver_native_memory{
  "driver.native-memory", "0",
  "Driver mode: native memory of the driver's slot "
  "(-Dnm/--drivernativememory). Per job.",
  memory, per_job};

// --- checkpoints, savepoints, state -----------------------------------------

inline constexpr config_key<std::string> checkpoint_dir{
  "execution.checkpointing.dir", "",
  "Directory of completed checkpoints' data (Flink's state.checkpoints.dir); "
  "default <state directory>/checkpoints, none (memory only) for `weir run` "
  "without --state-dir."};
inline constexpr config_key<bool> checkpoint_incremental{
  "execution.checkpointing.incremental", "false",
  "RocksDB state: checkpoints write only the files the previous one did not "
  "(shared files under <dir>/<job id>/shared). Per job.",
  {}, per_job};
inline constexpr config_key<ms> checkpoint_interval{
  "execution.checkpointing.interval", "0",
  "How often the JobMaster triggers a checkpoint (0: never; Flink's default "
  "is off too). Per job or cluster-wide.",
  any_duration, per_job};
inline constexpr config_key<ms> checkpoint_timeout{
  "execution.checkpointing.timeout", "10 min",
  "A checkpoint not acknowledged by every subtask within this time is "
  "abandoned.",
  positive_duration, per_job};
inline constexpr config_key<int64_t> max_concurrent_checkpoints{
  "execution.checkpointing.max-concurrent-checkpoints", "1",
  "Checkpoints that may be pending at once.", {"1", "1000"}, per_job};
inline constexpr config_key<ms> checkpoint_min_pause{
  "execution.checkpointing.min-pause", "0",
  "Least time between the end of one checkpoint and the start of the next.",
  any_duration, per_job};
inline constexpr config_key<std::string> savepoint_dir{
  "execution.checkpointing.savepoint-dir", "",
  "Default directory of savepoints (`weir savepoint`, `weir stop`).",
  {}, per_job};
inline constexpr config_key<std::string> savepoint_path{
  "execution.savepoint.path", "",
  "A savepoint the job starts from (`weir run -s PATH`). Per job.",
  {}, per_job};
inline constexpr config_key<bool> savepoint_ignore_unclaimed_state{
  "execution.savepoint.ignore-unclaimed-state", "false",
  "Start from a savepoint even if it holds state of vertices the job does "
  "not have (`weir run -n`). Per job.",
  {}, per_job};
inline constexpr config_key<int64_t> checkpoints_retained{
  "state.checkpoints.num-retained", "1",
  "Completed checkpoints kept; a failover restores the newest.",
  {"1", "10000"}, per_job};
inline constexpr config_key<std::string> state_backend{
  "state.backend.type", "hashmap",
  "Where keyed state lives: hashmap (objects on the heap) or rocksdb (an "
  "embedded RocksDB per operator instance, on local disk). Per job.",
  {}, per_job, "hashmap|rocksdb"};

// --- restart strategy (per job) ---------------------------------------------

/// What the names of the keys below start with (a client sends its own
/// settings of them along with a job it submits to a session cluster).
inline constexpr std::string_view restart_strategy_prefix = "restart-strategy.";

inline constexpr config_key<std::string> restart_strategy{
  "restart-strategy.type", "exponential-delay",
  "How a job reacts to a failure: none, fixed-delay, exponential-delay or "
  "failure-rate (Flink's names). The default restarts every job, bounded "
  "or not, checkpointed or not.",
  {}, per_job,
  "none|off|disable|fixed-delay|fixeddelay|exponential-delay|"
  "exponentialdelay|failure-rate|failurerate"};
inline constexpr config_key<int64_t> fixed_delay_attempts{
  "restart-strategy.fixed-delay.attempts", "1",
  "fixed-delay: restarts before the job fails.", {"0", "2147483647"}, per_job};
inline constexpr config_key<ms> fixed_delay_delay{
  "restart-strategy.fixed-delay.delay", "1 s",
  "fixed-delay: pause before each restart.", any_duration, per_job};
inline constexpr config_key<ms> exponential_initial_backoff{
  "restart-strategy.exponential-delay.initial-backoff", "1 s",
  "exponential-delay: first pause.", any_duration, per_job};
inline constexpr config_key<ms> exponential_max_backoff{
  "restart-strategy.exponential-delay.max-backoff", "1 min",
  "exponential-delay: longest pause.", any_duration, per_job};
inline constexpr config_key<double> exponential_backoff_multiplier{
  "restart-strategy.exponential-delay.backoff-multiplier", "2.0",
  "exponential-delay: factor between consecutive pauses.",
  {"1", "1000"}, per_job};
inline constexpr config_key<double> exponential_jitter_factor{
  "restart-strategy.exponential-delay.jitter-factor", "0.1",
  "exponential-delay: random spread of each pause (0.1 = +-10 %).",
  {"0", "1"}, per_job};
inline constexpr config_key<ms> exponential_reset_backoff_threshold{
  "restart-strategy.exponential-delay.reset-backoff-threshold", "1 h",
  "exponential-delay: a failure-free period after which the pause starts "
  "over.",
  positive_duration, per_job};
inline constexpr config_key<int64_t> exponential_attempts{
  "restart-strategy.exponential-delay.attempts-before-reset-backoff", "5",
  "exponential-delay: restarts before the job fails, counted since the "
  "pauses last started over.",
  {"0", "2147483647"}, per_job};
inline constexpr config_key<int64_t> failure_rate_max_failures{
  "restart-strategy.failure-rate.max-failures-per-interval", "1",
  "failure-rate: failures tolerated per interval.",
  {"1", "2147483647"}, per_job};
inline constexpr config_key<ms> failure_rate_interval{
  "restart-strategy.failure-rate.failure-rate-interval", "1 min",
  "failure-rate: the interval.", positive_duration, per_job};
inline constexpr config_key<ms> failure_rate_delay{
  "restart-strategy.failure-rate.delay", "1 s",
  "failure-rate: pause before each restart.", any_duration, per_job};

// --- security and connections ----------------------------------------------

inline constexpr config_key<bool> ssl_internal_enabled{
  "security.ssl.internal.enabled", "false",
  "Mutual TLS on every connection between weir processes and clients. A "
  "jobmanager asked to listen on a non-loopback address refuses to start "
  "unless this is set, to true or (explicitly) to false."};
inline constexpr config_key<std::string> ssl_internal_certificate{
  "security.ssl.internal.certificate", "",
  "PEM file: this process's certificate chain (its own certificate first)."};
inline constexpr config_key<std::string> ssl_internal_key{
  "security.ssl.internal.key", "",
  "PEM file: the private key of security.ssl.internal.certificate."};
inline constexpr config_key<std::string> ssl_internal_trust{
  "security.ssl.internal.trust-certificates", "",
  "PEM file: the CA certificate(s) a peer's certificate must chain to."};
inline constexpr config_key<ms> ssl_internal_handshake_timeout{
  "security.ssl.internal.handshake-timeout", "5 s",
  "A connection that has not finished its handshakes (TLS, when enabled, "
  "then weir's) this long after it was accepted is closed.",
  {"100 ms", "10 min"}};
inline constexpr config_key<bool> ssl_rest_enabled{
  "security.ssl.rest.enabled", "false",
  "HTTPS for the REST API, with security.ssl.rest.certificate and "
  "security.ssl.rest.key."};
inline constexpr config_key<std::string> ssl_rest_certificate{
  "security.ssl.rest.certificate", "",
  "PEM file: the REST API's certificate chain (its own certificate first)."};
inline constexpr config_key<std::string> ssl_rest_key{
  "security.ssl.rest.key", "",
  "PEM file: the private key of security.ssl.rest.certificate."};
inline constexpr config_key<bool> ssl_rest_authentication{
  "security.ssl.rest.authentication-enabled", "false",
  "With security.ssl.rest.enabled: REST clients must present a certificate "
  "from security.ssl.rest.trust-certificates (mutual TLS)."};
inline constexpr config_key<std::string> ssl_rest_trust{
  "security.ssl.rest.trust-certificates", "",
  "PEM file: the CA certificate(s) a REST client's certificate must chain "
  "to (security.ssl.rest.authentication-enabled)."};
inline constexpr config_key<int64_t> max_pending_connections{
  "security.max-pending-connections", "256",
  "Accepted connections that may be in their handshake at once; beyond "
  "that, new connections are closed at once.", {"1", "65536"}};
inline constexpr config_key<memory_size> rpc_max_message_size{
  "rpc.max-message-size", "256 mb",
  "The largest message a process accepts from a peer (blobs, job graphs, "
  "batches); a peer announcing a larger one is disconnected before "
  "anything is allocated for it.", {"1m", "2047m"}};
inline constexpr config_key<memory_size> rpc_max_pending_bytes{
  "rpc.max-pending-bytes", "1 gb",
  "The most memory all connections together may hold for messages whose "
  "bytes are still arriving; a connection whose message would take more "
  "is closed.", {"1m", "1048576m"}};

} // namespace weir::keys
