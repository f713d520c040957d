#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include <doctest/doctest.h>

namespace weir::test {

/// A fresh directory under /tmp, removed with its contents at the end.
class temp_dir {
public:
  temp_dir() {
    std::string pattern = "/tmp/weir-unit-test-XXXXXX";
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }

  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::string& path() const { return path_; }

  /// `<dir>/<name>`.
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

} // namespace weir::test
