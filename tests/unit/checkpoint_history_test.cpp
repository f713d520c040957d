// The JobMaster's checkpoint statistics (checkpoint_history): counts and
// history as the REST API shows them.
#include <doctest/doctest.h>

#include "actors/job_master/checkpoint_history.hpp"

using namespace weir;

TEST_CASE("checkpoints move from in progress to completed or failed") {
  checkpoint_history h;
  h.restored(4, 50);
  h.triggered(5, false, 3, 100);
  h.acknowledged(5, 7, 110);
  h.acknowledged(5, 3, 120);
  h.triggered(6, true, 3, 130);
  h.completed(5, 4096, 150);
  h.failed(6, "expired", 400);
  h.failed(6, "again", 500); // an ended checkpoint stays as it ended
  h.triggered(7, false, 3, 600);
  auto s = h.stats(700);
  CHECK(s.total == 3);
  CHECK(s.completed == 1);
  CHECK(s.failed == 1);
  CHECK(s.in_progress == 1);
  CHECK(s.restored == 1);
  CHECK(s.restored_id == 4);
  REQUIRE(s.history.size() == 3);
  CHECK(s.history[0].id == 7); // newest first
  CHECK(s.history[0].duration_ms == 100);
  CHECK(s.history[1].status == "FAILED");
  CHECK(s.history[1].failure == "expired");
  CHECK(s.history[1].savepoint);
  CHECK(s.history[2].status == "COMPLETED");
  CHECK(s.history[2].state_size == 4096);
  CHECK(s.history[2].duration_ms == 50);
  CHECK(s.history[2].acknowledged == 3);
  CHECK(s.history[2].latest_ack_time_ms == 120);
  CHECK(s.history[2].alignment_ms == 7); // the longest
  h.fail_pending("the job restarted", 800);
  CHECK(h.stats(800).history[0].failure == "the job restarted");
  CHECK(h.stats(800).in_progress == 0);
}

TEST_CASE("the history keeps the newest ten") {
  checkpoint_history h;
  for (int64_t id = 1; id <= 12; ++id)
    h.triggered(id, false, 1, id);
  auto s = h.stats(20);
  CHECK(s.total == 12);
  CHECK(s.in_progress == 10); // the two dropped can no longer end here
  REQUIRE(s.history.size() == checkpoint_history::kept);
  CHECK(s.history.back().id == 3);
}
