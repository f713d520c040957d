#include "actors/task_executor/driver_client.hpp"

#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include <caf/actor_system.hpp>
#include <caf/send.hpp>

#include <fmt/format.h>

#include "client/dispatcher_jobs.hpp"
#include "client/submission.hpp"
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
    : jobs_(sys, std::move(dispatcher)),
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
    // The driver's jobs take the way a host program's take
    // (client/submission.hpp), its defaults (-p, -s, -n) as settings.
    client::job_settings settings;
    if (auto p = param("parallelism"); !p.empty())
      settings.parallelism = std::atoi(p.c_str());
    settings.savepoint_path = param("savepoint");
    settings.allow_non_restored_state = !settings.savepoint_path.empty()
                                        && param("allow-non-restored")
                                             == "true";
    auto graph = client::plan_job(spec_json, "job spec", settings,
                                  ops::registry_for(libraries_));
    if (!graph)
      throw std::runtime_error(describe(graph.error()));
    graph->code = code_;
    graph->application = application_;
    graph->priority = priority == plugin::job_priority::daemon
                        ? job_priority::daemon
                        : job_priority::normal;
    auto id = client::submit(jobs_, *graph);
    if (!id)
      throw std::runtime_error("job rejected: " + describe(id.error()));
    return id->to_string();
  }

  job_result wait(const std::string& id) override {
    auto job = job_id::parse(id);
    if (!job)
      throw std::runtime_error("'" + id + "' is not a job id");
    for (;;) {
      auto result = jobs_.await_result(*job, 1s);
      if (!result)
        throw std::runtime_error("cannot wait for job " + id + ": "
                                 + describe(result.error()));
      if (*result) {
        client::drop_partial_rows(**result);
        return std::move(**result);
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

  /// The driver's cluster, as any client reaches one in its process.
  client::dispatcher_jobs jobs_;
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
