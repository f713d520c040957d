#include "actors/common/log_files.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "actors/common/event_log.hpp"
#include "messages/errors.hpp"

namespace weir {

std::vector<log_file> log_files() {
  std::vector<log_file> out;
  auto path = event_log_path();
  struct stat st {};
  if (!path.empty() && ::stat(path.c_str(), &st) == 0)
    out.push_back({std::filesystem::path{path}.filename().string(),
                   static_cast<int64_t>(st.st_size),
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1000
                     + st.st_mtim.tv_nsec / 1000000});
  return out;
}

caf::expected<std::string> read_log_piece(const std::string& name,
                                          int64_t offset) {
  auto path = event_log_path();
  if (path.empty() || std::filesystem::path{path}.filename() != name)
    return make_error(errc::invalid_request,
                      "no log file '" + name + "' (the logs list names them)");
  if (offset < 0)
    return make_error(errc::invalid_request,
                      "log offset " + std::to_string(offset) + " is negative");
  std::ifstream file{path, std::ios::binary};
  if (!file)
    return make_error(errc::invalid_request,
                      "log file '" + name + "' cannot be read");
  std::string piece(static_cast<size_t>(log_piece_bytes), '\0');
  file.seekg(offset);
  if (!file)
    return std::string{}; // past its end
  file.read(piece.data(), log_piece_bytes);
  piece.resize(static_cast<size_t>(file.gcount()));
  return piece;
}

} // namespace weir
