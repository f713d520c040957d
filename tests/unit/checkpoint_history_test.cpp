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

TEST_CASE("the latest savepoint stays known when newer checkpoints push it "
          "out of the history") {
  checkpoint_history h{2}; // two checkpoints retained
  h.triggered(1, true, 1, 10, true);
  h.completed(1, 100, 20);
  h.externalized(1, "/sp/savepoint-1");
  for (int64_t id = 2; id <= 13; ++id) {
    h.triggered(id, false, 1, id * 100);
    h.completed(id, id, id * 100 + 5);
  }
  auto s = h.stats(2000);
  REQUIRE(s.history.size() == checkpoint_history::kept);
  CHECK(s.history.back().id == 4);
  CHECK(s.latest_savepoint.id == 1);
  CHECK(s.latest_savepoint.external_path == "/sp/savepoint-1");
  CHECK(s.latest_savepoint.stop); // a stop's savepoint (SYNC_SAVEPOINT)
  CHECK(s.latest_completed.id == 13);
  // The newest two checkpoints keep their state; older ones were discarded.
  CHECK_FALSE(s.history[0].discarded);
  CHECK_FALSE(s.history[1].discarded);
  CHECK(s.history[2].discarded);
  CHECK(s.latest_failed.id == 0); // none failed
}

TEST_CASE("a savepoint that could not be written failed") {
  checkpoint_history h;
  h.triggered(1, true, 2, 10);
  h.completed(1, 64, 20);
  h.write_failed(1, "could not write the savepoint: disk full", 30);
  auto s = h.stats(40);
  CHECK(s.completed == 0);
  CHECK(s.failed == 1);
  CHECK(s.history[0].status == "FAILED");
  CHECK(s.latest_failed.failure == "could not write the savepoint: disk full");
  CHECK(s.latest_savepoint.id == 0);
}

TEST_CASE("the summary: extremes and average of all, percentiles") {
  checkpoint_history h;
  for (int64_t id = 1; id <= 100; ++id) {
    h.triggered(id, false, 1, id * 1000);
    h.completed(id, id * 10, id * 1000 + id); // duration id ms
  }
  auto s = h.stats(200000);
  CHECK(s.state_size.min == 10);
  CHECK(s.state_size.max == 1000);
  CHECK(s.state_size.avg == 505);
  CHECK(s.duration.p50 == 51);
  CHECK(s.duration.p99 == 100);
  CHECK(s.duration.p999 == 100);
  checkpoint_history none;
  CHECK(none.stats(0).duration.max == 0);
}

TEST_CASE("each subtask's acknowledgement is kept with its checkpoint") {
  checkpoint_history h;
  h.triggered(1, false, 2, 100);
  h.acknowledged(1, 3, 110, subtask_ack{"a -> b", 1, 0, 64, 0});
  h.acknowledged(1, 0, 120, subtask_ack{"a -> b", 0, 0, 32, 0});
  h.completed(1, 96, 130);
  auto acks = h.stats(140).latest_completed.acks;
  REQUIRE(acks.size() == 2);
  CHECK(acks[0].task == "a -> b");
  CHECK(acks[0].subtask == 1);
  CHECK(acks[0].ack_time_ms == 110);
  CHECK(acks[0].alignment_ms == 3);
  CHECK(acks[0].state_size == 64);
  CHECK(acks[1].subtask == 0);
}
