// The single-thread limit for the window benchmark (bench/window_count.json): N records
// i = 0..N-1 as the job's two sequence subtasks make them (the first half and the second), each
// keyed by i mod 1000 with the event time (i mod N/2) / 1000 ms; a count per key and 1 s tumbling
// window, each window emitted once the event time has passed its end, as the job's watermarks
// make it fire. Plain C++17, no framework: the two halves are read in step, so event time never
// goes back, and the open windows live in a hash map keyed by key and window.
//
// Build: g++ -O2 -std=c++17 window_count.cpp -o window_count
// Run:   ./window_count N
// Prints one JSON line: records, windows (rows emitted), check (the sum over rows of
// (key + 1) * (window start in s + 1) * count, as the benchmark computes it from the job's output),
// seconds, records_per_s.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: window_count N\n");
    return 2;
  }
  const int64_t n = std::atoll(argv[1]);
  const int64_t half = n / 2;
  const int64_t keys = 1000;
  const int64_t size_ms = 1000;
  auto start = std::chrono::steady_clock::now();
  // Key * 2^32 + window start in s → count.
  std::unordered_map<uint64_t, int64_t> open;
  int64_t current = 0; // the window start (ms) the event time is in
  int64_t rows = 0;
  uint64_t check = 0;
  auto fire = [&](int64_t before) {
    for (auto it = open.begin(); it != open.end();) {
      int64_t window = static_cast<int64_t>(it->first & 0xffffffffu);
      if (window * size_ms >= before) {
        ++it;
        continue;
      }
      int64_t key = static_cast<int64_t>(it->first >> 32);
      check += static_cast<uint64_t>((key + 1) * (window + 1) * it->second);
      ++rows;
      it = open.erase(it);
    }
  };
  for (int64_t j = 0; j < half; ++j) {
    int64_t t = j / 1000;
    int64_t window_start = t - t % size_ms;
    if (window_start != current) { // the watermark passed the windows before
      fire(window_start);
      current = window_start;
    }
    for (int64_t i : {j, half + j}) {
      uint64_t key = static_cast<uint64_t>(i % keys);
      ++open[(key << 32) | static_cast<uint64_t>(window_start / size_ms)];
    }
  }
  fire(INT64_MAX);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"records\": %lld, \"windows\": %lld, \"check\": %llu, \"seconds\": %.3f, "
              "\"records_per_s\": %.0f}\n",
              static_cast<long long>(2 * half), static_cast<long long>(rows),
              static_cast<unsigned long long>(check), secs, 2 * half / secs);
  return 0;
}
