#include "client/dispatcher_jobs.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir::client {

namespace {

using namespace std::chrono_literals;

/// As the REST client's: a look-up, storing, a checkpoint.
constexpr auto quick = caf::timespan{30s};
constexpr auto storing = caf::timespan{2min};
constexpr auto checkpointing = caf::timespan{10min};

} // namespace

dispatcher_jobs::dispatcher_jobs(caf::actor_system& sys,
                                 dispatcher_actor dispatcher)
  : dispatcher_(std::move(dispatcher)),
    self_(std::make_unique<caf::scoped_actor>(sys)) {
}

dispatcher_jobs::~dispatcher_jobs() {
  if (fetcher_)
    (*self_)->send_exit(fetcher_, caf::exit_reason::user_shutdown);
}

template <class T, class... Ts>
caf::expected<T> dispatcher_jobs::ask(caf::timespan timeout, Ts&&... xs) {
  caf::expected<T> out = make_error(errc::timeout, "no answer");
  (*self_)
    ->request(dispatcher_, timeout, std::forward<Ts>(xs)...)
    .receive([&](T& x) { out = std::move(x); },
             [&](caf::error& err) { out = std::move(err); });
  return out;
}

caf::expected<std::vector<job_status>> dispatcher_jobs::list() {
  return ask<std::vector<job_status>>(quick, list_atom_v);
}

caf::expected<job_status> dispatcher_jobs::status(const job_id& id,
                                                  bool detailed) {
  return ask<job_status>(quick, status_atom_v, id, detailed);
}

caf::expected<cancel_outcome> dispatcher_jobs::cancel(const job_id& id) {
  return ask<cancel_outcome>(quick, cancel_atom_v, id);
}

caf::expected<int64_t> dispatcher_jobs::checkpoint(const job_id& id,
                                                   bool full) {
  return ask<int64_t>(checkpointing, take_checkpoint_atom_v, id, full);
}

caf::expected<std::string>
dispatcher_jobs::savepoint(const job_id& id, const std::string& dir,
                           savepoint_mode mode) {
  return ask<std::string>(checkpointing, savepoint_atom_v, id, dir, mode);
}

caf::expected<int32_t> dispatcher_jobs::rescale(const job_id& id,
                                                int32_t parallelism) {
  return ask<int32_t>(checkpointing, rescale_atom_v, id, parallelism);
}

caf::expected<std::vector<collected_table>>
dispatcher_jobs::collect(const job_id& id, int64_t offset) {
  return ask<std::vector<collected_table>>(quick, collect_atom_v, id, offset);
}

namespace {

/// Asks the Dispatcher for job `id`'s result once, with no deadline, and
/// passes what comes to `client` as a plain message: the job_result, the
/// error the Dispatcher answered with, or the down_msg of a Dispatcher that
/// went down without answering; then ends. The request never expires:
/// renewing a short one let a result that came between two requests go
/// to one the client had given up, and an application cluster, whose
/// Dispatcher ends right after its application's result, left the client
/// with a lost master instead. The answer comes before the down_msg: both
/// travel the one connection to the master, in order.
caf::actor fetch_result(caf::actor_system& sys, dispatcher_actor dispatcher,
                        job_id id, caf::actor client) {
  return sys.spawn([=](caf::event_based_actor* self) {
    self->monitor(dispatcher);
    self->set_down_handler([=](caf::down_msg& dm) {
      self->send(client, std::move(dm));
      self->quit();
    });
    self->request(dispatcher, caf::infinite, result_atom_v, id)
      .then(
        [=](job_result& r) {
          self->send(client, std::move(r));
          self->quit();
        },
        [=](caf::error& err) {
          self->send(client, std::move(err));
          self->quit();
        });
  });
}

} // namespace

caf::expected<std::optional<job_result>>
dispatcher_jobs::await_result(const job_id& id,
                              std::chrono::milliseconds patience) {
  auto& self = *self_;
  if (!fetcher_ || !(fetched_ == id)) {
    if (fetcher_)
      self->send_exit(fetcher_, caf::exit_reason::user_shutdown);
    fetched_ = id;
    fetcher_ = fetch_result(self->system(), dispatcher_, id,
                            caf::actor_cast<caf::actor>(self));
  }
  caf::expected<std::optional<job_result>> out{std::nullopt};
  bool done = true;
  self->receive(
    [&](job_result& r) { out = std::optional<job_result>{std::move(r)}; },
    [&](caf::error& err) { out = std::move(err); },
    [&](caf::down_msg& dm) {
      out = make_error(errc::peer_lost,
                       fmt::format("the jobmanager's Dispatcher is gone ({})",
                                   describe(dm.reason)));
    },
    caf::after(patience) >> [&] { done = false; });
  if (done)
    fetcher_ = nullptr;
  return out;
}

caf::error dispatcher_jobs::put_blob(const std::string& hash,
                                     std::string bytes) {
  auto r = ask<bool>(storing, blob_atom_v, put_atom_v, hash, std::move(bytes));
  return r ? caf::error{} : r.error();
}

caf::expected<job_id> dispatcher_jobs::submit(const job_graph& g) {
  return ask<job_id>(storing, submit_atom_v, g);
}

} // namespace weir::client
