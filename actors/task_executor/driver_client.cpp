#include "actors/task_executor/driver_client.hpp"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <fmt/format.h>

#include "plan/job_spec.hpp"
#include "messages/errors.hpp"
#include "operators/library_loader.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

class driver_client : public ops::driver_services {
public:
  driver_client(caf::actor_system& sys, dispatcher_actor dispatcher,
                job_master_actor jm, const task_deployment& driver,
                const local_code& code)
    : sys_(sys),
      dispatcher_(std::move(dispatcher)),
      jm_(std::move(jm)),
      attempt_(driver.attempt),
      application_(driver.job),
      code_(driver.code),
      libraries_(code.libraries),
      defaults_(driver.chain.front().params),
      printed_{driver.chain.front().id, default_schema::lines(), {}} {
    printed_.rows.reset(printed_.fields);
  }

  std::string submit(const std::string& spec_json,
                     plugin::job_priority priority) override {
    auto spec = parse_job_spec_text(spec_json, "job spec");
    if (!spec)
      throw std::runtime_error(describe(spec.error()));
    std::optional<int32_t> parallelism;
    if (auto p = param("parallelism"); !p.empty())
      parallelism = std::atoi(p.c_str());
    auto graph = resolve_job_graph(*spec, {}, parallelism,
                                   &ops::registry_for(libraries_));
    if (!graph)
      throw std::runtime_error(describe(graph.error()));
    graph->code = code_;
    graph->application = application_;
    graph->priority = priority == plugin::job_priority::daemon
                        ? job_priority::daemon
                        : job_priority::normal;
    if (auto sp = param("savepoint"); !sp.empty()) {
      graph->config.emplace("execution.savepoint.path", sp);
      if (param("allow-non-restored") == "true")
        graph->config.emplace("execution.savepoint.ignore-unclaimed-state",
                              "true");
    }
    caf::scoped_actor self{sys_};
    std::string id, problem;
    self->request(dispatcher_, 60s, submit_atom_v, std::move(*graph))
      .receive([&](job_id x) { id = x.to_string(); },
               [&](caf::error& err) { problem = describe(err); });
    if (id.empty())
      throw std::runtime_error("job rejected: " + problem);
    return id;
  }

  plugin::job_outcome wait(const std::string& id) override {
    auto job = job_id::parse(id);
    if (!job)
      throw std::runtime_error("'" + id + "' is not a job id");
    caf::scoped_actor self{sys_};
    for (;;) {
      std::optional<job_result> result;
      std::string problem;
      // Renewed every second: the Dispatcher answers once the job ended.
      self->request(dispatcher_, 1s, result_atom_v, *job)
        .receive([&](job_result& r) { result = std::move(r); },
                 [&](caf::error& err) {
                   if (err != caf::sec::request_timeout)
                     problem = describe(err);
                 });
      if (!problem.empty())
        throw std::runtime_error("cannot wait for job " + id + ": " + problem);
      if (result) {
        plugin::job_outcome out;
        out.id = id;
        out.state = to_string(result->state);
        out.error = result->error;
        out.records = to_records(result->collected);
        out.runtime_ms = result->end_time_ms - result->start_time_ms;
        out.records_in = result->metrics.records_in;
        out.records_out = result->metrics.records_out;
        for (auto& v : result->metrics.vertices)
          out.vertices.push_back(plugin::vertex_outcome{
            v.vertex, v.records_in, v.records_out, v.counters});
        return out;
      }
    }
  }

  void print(const std::string& line) override {
    // The driver's vertex is its collect sink: its lines are rows of
    // (value: string).
    auto t = printed_;
    t.rows.columns[0].push_str(line);
    t.rows.rows = 1;
    caf::anon_send(jm_, collect_atom_v, attempt_, std::move(t));
  }

  void returned(int status) override {
    // Sent before the subtask reports FAILED, on the same way to the
    // JobMaster as print()'s lines, so it arrives first.
    caf::anon_send(jm_, exit_status_atom_v, attempt_,
                   static_cast<int32_t>(status));
  }

private:
  std::string param(const std::string& name) const {
    auto i = defaults_.find(name);
    return i == defaults_.end() ? std::string{} : i->second;
  }

  caf::actor_system& sys_;
  dispatcher_actor dispatcher_;
  job_master_actor jm_;
  execution_attempt_id attempt_;
  job_id application_;
  user_code code_;
  std::vector<std::string> libraries_;
  std::map<std::string, std::string> defaults_;
  /// An empty table of the driver's printed lines.
  collected_table printed_;
};

} // namespace

std::unique_ptr<ops::driver_services>
make_driver_client(caf::actor_system& sys, dispatcher_actor dispatcher,
                   job_master_actor jm, const task_deployment& driver,
                   const local_code& code) {
  return std::make_unique<driver_client>(sys, std::move(dispatcher),
                                         std::move(jm), driver, code);
}

} // namespace weir
