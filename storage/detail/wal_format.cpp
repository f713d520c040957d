#include "storage/detail/wal_format.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "storage/files.hpp"

namespace weir::storage::detail {

namespace {

// RocksDB's log format: 32 KiB blocks of fragments, each with a header of
// checksum (fixed32), length (fixed16) and type (plus the log number, 4
// bytes, for the recyclable types).
constexpr size_t block_size = 32768;
constexpr size_t header_size = 7;
constexpr size_t recyclable_header_size = 11;

enum fragment_type : uint8_t {
  zero = 0,
  full = 1,
  first = 2,
  middle = 3,
  last = 4,
  set_compression = 9,
};

uint32_t crc32c(const char* data, size_t n) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i)
    c = table[(c ^ static_cast<uint8_t>(data[i])) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

/// RocksDB stores checksums masked (crc32c::Mask).
uint32_t masked(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void append_fixed32(std::string& out, uint32_t x) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((x >> (8 * i)) & 0xFF));
}

uint32_t fixed32(const char* p) {
  uint32_t x = 0;
  for (int i = 3; i >= 0; --i)
    x = (x << 8) | static_cast<uint8_t>(p[i]);
  return x;
}

/// One fragment found at an offset of the file.
struct fragment {
  uint64_t offset = 0;
  size_t size = 0; // header and payload
  uint8_t type = 0;
  std::string_view payload;
  bool valid = false;
  std::string problem;
};

class reader {
public:
  explicit reader(const std::string& bytes) : bytes_(bytes) {
    // nop
  }

  std::vector<wal_record> run() {
    uint64_t pos = 0;
    while (pos < bytes_.size()) {
      auto block_end = std::min<uint64_t>((pos / block_size + 1) * block_size,
                                          bytes_.size());
      if (block_end - pos < header_size) {
        pos = block_end; // the block's zero trailer
        continue;
      }
      auto f = parse(pos, block_end);
      if (!f) {
        pos = block_end; // preallocated zeros, or a torn end of the file
        continue;
      }
      if (f->valid) {
        take(*f);
        pos += f->size;
        continue;
      }
      damage(*f);
      pos = resync(pos, block_end, *f);
    }
    // A record whose last fragment is missing at the end of the file is a
    // torn write (never acknowledged); a damaged one is reported.
    if (damaged_)
      out_.push_back(std::move(*damaged_));
    return std::move(out_);
  }

private:
  /// The fragment at `pos`; nothing for zeros or a truncated end of file.
  std::optional<fragment> parse(uint64_t pos, uint64_t block_end) const {
    const char* h = bytes_.data() + pos;
    fragment f;
    f.offset = pos;
    f.type = static_cast<uint8_t>(h[6]);
    auto length = static_cast<size_t>(static_cast<uint8_t>(h[4]))
                  | static_cast<size_t>(static_cast<uint8_t>(h[5])) << 8;
    if (f.type == zero && length == 0)
      return std::nullopt;
    bool recyclable = f.type >= 5 && f.type <= 8;
    auto hsize = recyclable ? recyclable_header_size : header_size;
    if (pos + hsize + length > block_end) {
      if (block_end == bytes_.size())
        return std::nullopt; // torn: the file ends inside the fragment
      f.size = block_end - pos;
      f.problem = "bad record length";
      return f;
    }
    f.size = hsize + length;
    f.payload = std::string_view{h + hsize, length};
    // The checksum covers the type, a recyclable log number and the payload.
    std::string covered{h + 6, hsize - 6};
    covered.append(f.payload);
    if (masked(crc32c(covered.data(), covered.size())) != fixed32(h)) {
      f.problem = "checksum mismatch";
      return f;
    }
    if (recyclable)
      f.type = static_cast<uint8_t>(f.type - 4);
    if (f.type > last && f.type != set_compression) {
      f.problem = fmt::format("unknown record type {}", f.type);
      return f;
    }
    f.valid = true;
    return f;
  }

  /// The next offset after the damaged fragment at `pos` where a fragment
  /// passes its checksum: first where its length says, else byte by byte
  /// within the block, else the next block.
  uint64_t resync(uint64_t pos, uint64_t block_end, const fragment& bad) {
    auto valid_at = [&](uint64_t at) {
      if (at + header_size > block_end)
        return false;
      auto f = parse(at, block_end);
      return f && f->valid;
    };
    if (valid_at(pos + bad.size))
      return pos + bad.size;
    for (auto at = pos + 1; at + header_size <= block_end; ++at)
      if (valid_at(at)) {
        extend_damage(at);
        return at;
      }
    extend_damage(block_end);
    return block_end;
  }

  void take(const fragment& f) {
    switch (f.type) {
      case full:
        close_partial();
        close_damaged();
        out_.push_back(wal_record{f.offset, f.size, true, {},
                                  std::string{f.payload}});
        break;
      case first:
        close_partial();
        close_damaged();
        partial_ = wal_record{f.offset, f.size, true, {},
                              std::string{f.payload}};
        break;
      case middle:
      case last:
        if (partial_) {
          partial_->size = f.offset + f.size - partial_->offset;
          partial_->batch.append(f.payload);
          if (f.type == last) {
            out_.push_back(std::move(*partial_));
            partial_.reset();
          }
        } else if (damaged_) {
          // The rest of a record whose start was damaged.
          extend_damage(f.offset + f.size);
          damaged_->batch.append(f.payload);
          if (f.type == last)
            close_damaged();
        }
        break;
      default:
        break; // set_compression: not a write batch
    }
  }

  void damage(const fragment& f) {
    if (!damaged_) {
      if (partial_) {
        damaged_ = std::move(*partial_);
        partial_.reset();
      } else {
        damaged_ = wal_record{f.offset, 0, false, {}, {}};
      }
      damaged_->intact = false;
      damaged_->problem = f.problem;
    }
    extend_damage(f.offset + f.size);
    damaged_->batch.append(f.payload);
  }

  void extend_damage(uint64_t end) {
    if (damaged_)
      damaged_->size = std::max(damaged_->size, end - damaged_->offset);
  }

  /// A record whose next fragment never came is damaged too.
  void close_partial() {
    if (!partial_)
      return;
    partial_->intact = false;
    partial_->problem = "record missing its later fragments";
    out_.push_back(std::move(*partial_));
    partial_.reset();
  }

  void close_damaged() {
    if (damaged_)
      out_.push_back(std::move(*damaged_));
    damaged_.reset();
  }

  const std::string& bytes_;
  std::vector<wal_record> out_;
  std::optional<wal_record> partial_;
  std::optional<wal_record> damaged_;
};

} // namespace

caf::expected<std::vector<wal_record>> read_wal(const std::string& path) {
  auto bytes = read_whole_file(path);
  if (!bytes)
    return bytes.error();
  return reader{*bytes}.run();
}

std::string encode_wal(const std::vector<wal_record>& records) {
  std::string out;
  for (auto& r : records) {
    std::string_view left{r.batch};
    bool begun = false;
    do {
      auto in_block = block_size - out.size() % block_size;
      if (in_block < header_size) {
        out.append(in_block, '\0'); // the block's trailer
        in_block = block_size;
      }
      auto n = std::min(left.size(), in_block - header_size);
      bool end = n == left.size();
      auto type = static_cast<char>(begun ? (end ? last : middle)
                                          : (end ? full : first));
      std::string covered{type};
      covered.append(left.substr(0, n));
      append_fixed32(out, masked(crc32c(covered.data(), covered.size())));
      out.push_back(static_cast<char>(n & 0xFF));
      out.push_back(static_cast<char>((n >> 8) & 0xFF));
      out.append(covered);
      left.remove_prefix(n);
      begun = true;
    } while (!left.empty());
  }
  return out;
}

uint64_t batch_sequence(const std::string& batch) {
  if (batch.size() < 12)
    return 0;
  uint64_t x = 0;
  for (int i = 7; i >= 0; --i)
    x = (x << 8) | static_cast<uint8_t>(batch[static_cast<size_t>(i)]);
  return x;
}

std::vector<std::string> wal_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::pair<unsigned long long, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator i{dir, ec}, end; !ec && i != end;
       i.increment(ec)) {
    auto name = i->path().filename().string();
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".log") != 0)
      continue;
    auto stem = name.substr(0, name.size() - 4);
    if (stem.find_first_not_of("0123456789") != std::string::npos)
      continue;
    found.emplace_back(std::strtoull(stem.c_str(), nullptr, 10),
                       i->path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> result;
  for (auto& f : found)
    result.push_back(std::move(f.second));
  return result;
}

} // namespace weir::storage::detail
