#include "actors/job_master/checkpoint_requests.hpp"

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir {

checkpoint_request checkpoint_request::checkpoint(id_promise rp, bool full) {
  checkpoint_request r;
  r.kind_ = full ? state::snapshot_kind::full_checkpoint
                 : state::snapshot_kind::checkpoint;
  r.promise_ = std::move(rp);
  return r;
}

checkpoint_request checkpoint_request::savepoint(path_promise rp,
                                                 std::string dir,
                                                 savepoint_mode mode) {
  checkpoint_request r;
  r.kind_ = state::snapshot_kind::savepoint;
  r.promise_ = std::move(rp);
  r.dir_ = std::move(dir);
  r.mode_ = mode;
  return r;
}

void checkpoint_request::refuse(const caf::error& err) {
  caf::visit([&](auto& rp) { rp.deliver(err); }, promise_);
}

void checkpoint_request::complete(int64_t id) {
  if (auto* rp = caf::get_if<id_promise>(&promise_))
    rp->deliver(id);
}

void checkpoint_request::complete(const std::string& path) {
  if (auto* rp = caf::get_if<path_promise>(&promise_))
    rp->deliver(path);
}

void checkpoint_requests::add(int64_t id, checkpoint_request req) {
  waiting_.emplace(id, std::move(req));
}

std::optional<checkpoint_request> checkpoint_requests::take(int64_t id) {
  auto i = waiting_.find(id);
  if (i == waiting_.end())
    return std::nullopt;
  auto req = std::move(i->second);
  waiting_.erase(i);
  return req;
}

void checkpoint_requests::refuse(int64_t id, const caf::error& err) {
  if (auto req = take(id))
    req->refuse(err);
}

void checkpoint_requests::abort_all(const std::string& why) {
  for (auto& [id, req] : waiting_)
    req.refuse(make_error(errc::checkpoint_aborted,
                          fmt::format("checkpoint {} was abandoned: {}", id, why)));
  waiting_.clear();
}

} // namespace weir
