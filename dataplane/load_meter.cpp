#include "dataplane/load_meter.hpp"

#include <utility>

namespace weir {

namespace {

using std::chrono::duration;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

int64_t whole_ms(load_meter::clock::duration d) {
  return duration_cast<milliseconds>(d).count();
}

double per_second(double delta, double seconds) {
  return delta / seconds;
}

} // namespace

load_meter::load_meter(clock_fn now) : now_(std::move(now)) {
}

void load_meter::start() {
  if (started_)
    return;
  started_ = true;
  mark_ = now_();
  last_sample_ = mark_;
  mode_ = depth_ > 0 ? mode::busy : mode::idle;
}

void load_meter::enter() {
  if (depth_++ > 0 || !started_)
    return;
  switch_to(now_(), mode::busy);
}

void load_meter::leave(bool output_waits) {
  if (depth_ == 0 || --depth_ > 0 || !started_)
    return;
  switch_to(now_(), output_waits ? mode::backpressured : mode::idle);
}

void load_meter::switch_to(clock::time_point now, mode next) {
  spent_[static_cast<size_t>(mode_)] += now - mark_;
  mark_ = now;
  mode_ = next;
}

task_load load_meter::sample(int64_t records_in, int64_t records_out,
                             int32_t input_queue, int32_t output_queue) {
  if (started_)
    switch_to(now_(), mode_);
  task_load x = last_;
  x.bytes_in = bytes_in_;
  x.bytes_out = bytes_out_;
  auto busy = static_cast<size_t>(mode::busy);
  auto idle = static_cast<size_t>(mode::idle);
  auto bp = static_cast<size_t>(mode::backpressured);
  x.busy_ms = whole_ms(spent_[busy]);
  x.idle_ms = whole_ms(spent_[idle]);
  x.backpressured_ms = whole_ms(spent_[bp]);
  x.input_queue = input_queue;
  x.output_queue = output_queue;
  double secs = duration<double>(mark_ - last_sample_).count();
  // Rates over a window much shorter than the metrics interval (a final
  // report right after a periodic one) would be wild: the previous ones
  // stay.
  constexpr double min_window_s = 0.1;
  if (started_ && secs >= min_window_s) {
    auto ms_per_s = [&](size_t m) {
      auto d = duration<double, std::milli>(spent_[m] - last_spent_[m]);
      return per_second(d.count(), secs);
    };
    x.records_in_per_s = per_second(double(records_in - last_records_in_), secs);
    x.records_out_per_s
      = per_second(double(records_out - last_records_out_), secs);
    x.bytes_in_per_s = per_second(double(bytes_in_ - last_.bytes_in), secs);
    x.bytes_out_per_s = per_second(double(bytes_out_ - last_.bytes_out), secs);
    x.busy_ms_per_s = ms_per_s(busy);
    x.idle_ms_per_s = ms_per_s(idle);
    x.backpressured_ms_per_s = ms_per_s(bp);
    last_sample_ = mark_;
    last_records_in_ = records_in;
    last_records_out_ = records_out;
    for (size_t m = 0; m < 3; ++m)
      last_spent_[m] = spent_[m];
    last_ = x;
  }
  return x;
}

} // namespace weir
