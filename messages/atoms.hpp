#pragma once

#include <caf/atom.hpp>

/// Every atom of weir's protocols, in one place (names are at most 10 chars).
namespace weir {

#define WEIR_ATOM(name, text)                                                  \
  using name##_atom = caf::atom_constant<caf::atom(text)>;                     \
  constexpr name##_atom name##_atom_v = name##_atom{};

WEIR_ATOM(adopt, "adopt")
WEIR_ATOM(backlog, "backlog")
WEIR_ATOM(barrier, "barrier")
WEIR_ATOM(beat, "beat")
WEIR_ATOM(blob, "blob")
WEIR_ATOM(cancel, "cancel")
WEIR_ATOM(checkpoint, "checkpoint")
WEIR_ATOM(collect, "collect")
WEIR_ATOM(commit, "commit")
WEIR_ATOM(crashed, "crashed")
WEIR_ATOM(connect, "connect")
WEIR_ATOM(credit, "credit")
WEIR_ATOM(data, "data")
WEIR_ATOM(disconnect, "disconnect")
WEIR_ATOM(done, "done")
WEIR_ATOM(end, "end")
WEIR_ATOM(exited, "exited")
WEIR_ATOM(exit_status, "exitstatus")
WEIR_ATOM(finish, "finish")
WEIR_ATOM(flush, "flush")
WEIR_ATOM(frame, "frame")
WEIR_ATOM(free, "free")
WEIR_ATOM(graph, "graph")
WEIR_ATOM(heartbeat, "heartbeat")
WEIR_ATOM(list, "list")
WEIR_ATOM(load, "load")
WEIR_ATOM(log, "log")
WEIR_ATOM(lookup, "lookup")
WEIR_ATOM(lost, "lost")
WEIR_ATOM(metrics, "metrics")
WEIR_ATOM(offer, "offer")
WEIR_ATOM(overview, "overview")
WEIR_ATOM(produce, "produce")
WEIR_ATOM(put, "put")
WEIR_ATOM(reconcile, "reconcile")
WEIR_ATOM(register, "register")
WEIR_ATOM(request, "request")
WEIR_ATOM(rescale, "rescale")
WEIR_ATOM(restart, "restart")
WEIR_ATOM(resume, "resume")
WEIR_ATOM(result, "result")
WEIR_ATOM(rm_changed, "rm_changed")
WEIR_ATOM(savepoint, "savepoint")
WEIR_ATOM(send, "send")
WEIR_ATOM(start, "start")
WEIR_ATOM(status, "status")
WEIR_ATOM(stop, "stop")
WEIR_ATOM(submit, "submit")
WEIR_ATOM(take_checkpoint, "take_ckpt")
WEIR_ATOM(tick, "tick")
WEIR_ATOM(timer, "timer")
WEIR_ATOM(trigger, "trigger")
WEIR_ATOM(unmet, "unmet")
WEIR_ATOM(update, "update")
WEIR_ATOM(watermark, "watermark")
WEIR_ATOM(write_failed, "writefail")
WEIR_ATOM(written, "written")

#undef WEIR_ATOM

} // namespace weir
