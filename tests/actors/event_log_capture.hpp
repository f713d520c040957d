#pragma once

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "../unit/temp_dir.hpp"
#include "actors/common/event_log.hpp"

namespace weir::test {

/// Turns the event log on, into a file of its own, while it lives (the log
/// is one per process: one capture at a time).
class event_log_capture {
public:
  event_log_capture() : file_(std::fopen(dir_.sub("events.log").c_str(), "w")) {
    REQUIRE(file_ != nullptr);
    enable_event_log(file_, "test");
  }

  event_log_capture(const event_log_capture&) = delete;
  event_log_capture& operator=(const event_log_capture&) = delete;

  ~event_log_capture() {
    enable_event_log(nullptr, "");
    std::fclose(file_);
  }

  /// The lines written so far that contain `text`.
  std::vector<std::string> lines_with(std::string_view text) const {
    std::ifstream in{dir_.sub("events.log")};
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);)
      if (line.find(text) != std::string::npos)
        out.push_back(line);
    return out;
  }

private:
  temp_dir dir_;
  std::FILE* file_;
};

} // namespace weir::test
