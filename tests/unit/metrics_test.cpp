// Metrics (docs/operations.md § Metrics): Prometheus' text format, a
// taskmanager's registry of subtask reports, the exposition of both
// processes and the metrics port's forms.
#include <doctest/doctest.h>

#include "actors/task_executor/task_metrics.hpp"
#include "metrics/server.hpp"
#include "metrics/prometheus.hpp"
#include "metrics/prometheus_text.hpp"
#include "messages/flink_ids.hpp"
#include "rest/json.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

subtask_labels sink(int32_t index, int32_t attempt = 0) {
  return subtask_labels{*job_id::parse("0123456789abcdef0123456789abcdef"),
                        "evens", 1, "out", "out", index, attempt};
}

io_metrics records(int64_t in, int64_t out) {
  io_metrics m;
  m.records_in = in;
  m.records_out = out;
  return m;
}

} // namespace

TEST_CASE("the text format: families in order, labels escaped, values") {
  prometheus_text t;
  t.family("weir_a", prometheus_text::kind::counter, "Lines\nwith \\.");
  t.family("weir_b", prometheus_text::kind::gauge, "B.");
  t.add("weir_b", {}, 1.5);
  t.add("weir_a", {{"x", "say \"hi\"\\\n"}, {"y", "2"}}, int64_t{42});
  t.add("weir_a", {{"x", ""}, {"y", "3"}}, int64_t{-1});
  t.family("weir_a", prometheus_text::kind::gauge, "ignored: declared");
  CHECK(t.str()
        == "# HELP weir_a Lines\\nwith \\\\.\n"
           "# TYPE weir_a counter\n"
           "weir_a{x=\"say \\\"hi\\\"\\\\\\n\",y=\"2\"} 42\n"
           "weir_a{x=\"\",y=\"3\"} -1\n"
           "# HELP weir_b B.\n"
           "# TYPE weir_b gauge\n"
           "weir_b 1.5\n");
  CHECK_THROWS_AS(t.add("weir_c", {}, 1.0), std::logic_error);
}

TEST_CASE("the registry keeps a subtask's newest attempt and ended ones "
          "for a while") {
  task_metrics reg{1min};
  auto t0 = task_metrics::clock::time_point{} + 1h;
  reg.update(sink(0), records(10, 10), false, t0);
  reg.update(sink(1, 1), records(5, 5), false, t0);
  reg.update(sink(1, 0), records(99, 99), false, t0); // older attempt
  reg.update(sink(0), records(250, 250), true, t0 + 1s);
  reg.update(sink(0), records(240, 240), false, t0 + 2s); // late periodic
  reg.set_slots(2, 1);
  auto s = reg.read(t0 + 2s);
  REQUIRE(s.subtasks.size() == 2);
  CHECK(s.subtasks[0].metrics.records_out == 250);
  CHECK(s.subtasks[0].ended);
  CHECK(s.subtasks[1].labels.attempt_number == 1);
  CHECK(s.subtasks[1].metrics.records_out == 5);
  CHECK(s.slots_total == 2);
  CHECK(s.slots_free == 1);
  // The ended subtask goes a minute after it ended; the running one stays.
  CHECK(reg.read(t0 + 61s).subtasks.size() == 2);
  auto later = reg.read(t0 + 62s);
  REQUIRE(later.subtasks.size() == 1);
  CHECK(later.subtasks[0].labels.subtask_index == 1);
}

TEST_CASE("a taskmanager's exposition: subtasks, operators, process") {
  task_metrics::snapshot s;
  s.slots_total = 2;
  s.slots_free = 1;
  auto m = records(7, 6);
  m.load.bytes_out = 96;
  m.load.busy_ms_per_s = 12.5;
  m.load.output_queue = 3;
  m.vertices = {{"out", 7, 6, {}}};
  s.subtasks.push_back(subtask_sample{sink(1), m, true});
  auto text = taskmanager_metrics_text(s, "tm-1", process_usage{4096, 0.25},
                                       metric_naming{"flink", "h1"});
  auto job = *job_id::parse("0123456789abcdef0123456789abcdef");
  auto tm = "host=\"h1\",tm_id=\"" + flink_resource_id(resource_id{"tm-1"})
            + "\"";
  // Flink's task scope: task_id is the chain's 32-hex id.
  std::string labels = "{" + tm + ",job_id=\"0123456789abcdef0123456789abcdef\","
                       "job_name=\"evens\",task_id=\"" + flink_vertex_id(job, "out")
                       + "\",task_name=\"out\",subtask_index=\"1\","
                       "task_attempt_num=\"0\"}";
  auto has = [&](const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
  };
  CHECK(has("flink_taskmanager_taskSlotsTotal{" + tm + "} 2"));
  CHECK(has("flink_taskmanager_taskSlotsAvailable{" + tm + "} 1"));
  CHECK(has("flink_taskmanager_Status_Process_RSS{" + tm + "} 4096"));
  CHECK(has("flink_taskmanager_Status_Process_CPU_Time{" + tm + "} 0.25"));
  // Counters as gauges, as Flink's reporter exports them.
  CHECK(has("# TYPE flink_taskmanager_job_task_numRecordsOut gauge"));
  CHECK(has("flink_taskmanager_job_task_numRecordsIn" + labels + " 7"));
  CHECK(has("flink_taskmanager_job_task_numRecordsOut" + labels + " 6"));
  CHECK(has("flink_taskmanager_job_task_numBytesOut" + labels + " 96"));
  CHECK(has("flink_taskmanager_job_task_busyTimeMsPerSecond" + labels
            + " 12.5"));
  CHECK(has("flink_taskmanager_job_task_buffers_outputQueueLength" + labels
            + " 3"));
  auto op = labels.substr(0, labels.size() - 1) + ",operator_id=\""
            + flink_vertex_id(job, "out") + "\",operator_name=\"out\"}";
  CHECK(has("flink_taskmanager_job_task_operator_numRecordsOut" + op + " 6"));
  // weir's prefix of old names the same series weir_*.
  auto old = taskmanager_metrics_text(s, "tm-1", process_usage{4096, 0.25},
                                      metric_naming{"weir", "h1"});
  CHECK(old.find("\nweir_taskmanager_job_task_numRecordsIn" + labels + " 7\n")
        != std::string::npos);
  CHECK(old.find("flink_") == std::string::npos);
}

TEST_CASE("the jobmanager's exposition: cluster, jobs by state, per job") {
  jobmanager_metrics_input in;
  in.cluster = cluster_overview{2, 4, 1, 0};
  in.submissions = 3;
  in.now_ms = 5000;
  job_status running;
  running.id = *job_id::parse("0123456789abcdef0123456789abcdef");
  running.name = "evens";
  running.state = job_state::running;
  running.start_time_ms = 1000;
  running.restarts = 2;
  running.checkpoints.completed = 4;
  checkpoint_entry last;
  last.status = "COMPLETED";
  last.duration_ms = 30;
  last.state_size = 2048;
  last.alignment_ms = 5;
  running.checkpoints.history = {last};
  in.jobs = {running};
  task_manager_info tm;
  tm.id = resource_id{"tm-1"};
  tm.heartbeat_rtt_us = 1500;
  in.task_managers = {tm};
  auto text = jobmanager_metrics_text(in, metric_naming{"flink", "h1"});
  auto has = [&](const std::string& line) {
    return text.find(line + "\n") != std::string::npos;
  };
  std::string host = "{host=\"h1\"}";
  std::string job = "{host=\"h1\",job_id=\"0123456789abcdef0123456789abcdef\","
                    "job_name=\"evens\"}";
  CHECK(has("flink_jobmanager_numRegisteredTaskManagers" + host + " 2"));
  CHECK(has("flink_jobmanager_taskSlotsTotal" + host + " 4"));
  CHECK(has("flink_jobmanager_taskSlotsAvailable" + host + " 1"));
  CHECK(has("flink_jobmanager_numRunningJobs" + host + " 1"));
  CHECK(has("flink_jobmanager_numJobs{host=\"h1\",state=\"RUNNING\"} 1"));
  CHECK(has("flink_jobmanager_numJobs{host=\"h1\",state=\"FINISHED\"} 0"));
  CHECK(has("flink_jobmanager_numJobsSubmitted" + host + " 3"));
  CHECK(has("flink_jobmanager_taskmanager_heartbeatRoundTripMs{host=\"h1\","
            "tm_id=\"" + flink_resource_id(tm.id) + "\"} 1.5"));
  CHECK(has("flink_jobmanager_job_uptime" + job + " 4000"));
  CHECK(has("flink_jobmanager_job_numRestarts" + job + " 2"));
  CHECK(has("# TYPE flink_jobmanager_job_numRestarts gauge"));
  CHECK(has("flink_jobmanager_job_numberOfCompletedCheckpoints" + job + " 4"));
  CHECK(has("flink_jobmanager_job_lastCheckpointDuration" + job + " 30"));
  CHECK(has("flink_jobmanager_job_lastCheckpointSize" + job + " 2048"));
  CHECK(has("flink_jobmanager_job_lastCheckpointAlignmentTime" + job + " 5"));
}

TEST_CASE("metrics.reporter.prom.port: a port, a range or 0") {
  auto range = [](const std::string& text) {
    auto r = parse_port_range(text);
    return r ? std::make_pair(int{r->first}, int{r->last})
             : std::make_pair(-1, -1);
  };
  CHECK(range("0") == std::make_pair(0, 0));
  CHECK(range("9250") == std::make_pair(9250, 9250));
  CHECK(range("9250-9260") == std::make_pair(9250, 9260));
  for (auto bad : {"", "x", "65536", "9260-9250", "0-10", "9250-", "-9250",
                   "9250 ", "1-2-3"})
    CHECK_MESSAGE(range(bad) == std::make_pair(-1, -1), bad);
}

TEST_CASE("/taskmanagers/{id}: Flink's TaskManagerInfo fields") {
  task_manager_info tm;
  tm.id = resource_id{"tm-1"};
  tm.slots_total = 3;
  tm.slots_free = 1;
  tm.last_heartbeat_ms = 1234;
  tm.hardware = hardware_description{4, 8192, 4096, 1024};
  tm.data = data_endpoint{tm.id, "127.0.0.1", 6121};
  auto job = *job_id::parse("0123456789abcdef0123456789abcdef");
  resource_profile one{1.0, 512, 64, 0};
  tm.slots = {{0, one, allocation_id::random(), job},
              {1, one, allocation_id::random(), job},
              {2, one, {}, {}}};
  auto profile = [](double cpu, int heap, int off_heap) {
    return nlohmann::json{{"cpuCores", cpu},
                          {"taskHeapMemory", heap},
                          {"taskOffHeapMemory", off_heap},
                          {"managedMemory", 0},
                          {"networkMemory", 0},
                          {"extendedResources", nlohmann::json::object()}};
  };
  auto expected = nlohmann::json{
    {"id", flink_resource_id(tm.id)},
    {"weir-name", "tm-1"},
    {"path", "weir://127.0.0.1:6121/tm-1"},
    {"slotsNumber", 3},
    {"freeSlots", 1},
    {"timeSinceLastHeartbeat", 1234},
    {"dataPort", 6121},
    {"jmxPort", -1},
    {"totalResource", profile(3.0, 1536, 192)},
    {"freeResource", profile(1.0, 512, 64)},
    {"hardware",
     {{"cpuCores", 4},
      {"physicalMemory", 8192},
      {"freeMemory", 4096},
      {"managedMemory", 1024}}},
    {"memoryConfiguration", {{"managedMemory", 1024}}}};
  CHECK(rest::task_managers({tm})
        == nlohmann::json{{"taskmanagers", {expected}}});
  // The details add the allocated slots (and no JVM metrics).
  expected["allocatedSlots"] = {{{"jobId", job.to_string()},
                                 {"resource", profile(1.0, 512, 64)}},
                                {{"jobId", job.to_string()},
                                 {"resource", profile(1.0, 512, 64)}}};
  expected["metrics"] = nlohmann::json::object();
  CHECK(rest::task_manager(tm) == expected);
}
