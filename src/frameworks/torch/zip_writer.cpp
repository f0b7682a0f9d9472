#include "frameworks/torch/zip_writer.h"

#include <zlib.h>

#include <algorithm>

#include "amanda/support/diagnostics.h"

namespace amanda::torch_frontend {

namespace {

constexpr uint32_t kMax32 = 0xFFFFFFFFu;

void le16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>(v >> 8));
}
void le32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void le64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint32_t crc_of(const void* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = static_cast<const Bytef*>(data);
  while (size > 0) {
    size_t n = std::min<size_t>(size, 1u << 30);
    crc = crc32(crc, p, static_cast<uInt>(n));
    p += n;
    size -= n;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

void ZipWriter::put(std::string_view bytes) {
  out_.write(bytes);
  pos_ += bytes.size();
}

void ZipWriter::add(const std::string& name, const Buffer* owner, const void* data, size_t size) {
  if (name.empty() || name.size() > 0xFFFF) throw Error("zip entry name of " + std::to_string(name.size()) + " bytes");
  Entry e{name, crc_of(data, size), size, pos_};
  bool big = size >= kMax32;
  std::string h;
  le32(h, 0x04034b50);
  le16(h, big ? 45 : 20);  // version needed
  le16(h, 0);              // flags
  le16(h, 0);              // stored
  le16(h, 0);              // time
  le16(h, 0x21);           // date 1980-01-01
  le32(h, e.crc);
  le32(h, big ? kMax32 : static_cast<uint32_t>(size));
  le32(h, big ? kMax32 : static_cast<uint32_t>(size));
  le16(h, static_cast<uint16_t>(name.size()));
  // Extra fields: Zip64 sizes when needed, then padding ("FB", as torch writes) so that the data
  // starts on a kAlign boundary.
  std::string extra;
  if (big) {
    le16(extra, 0x0001);
    le16(extra, 16);
    le64(extra, size);
    le64(extra, size);
  }
  uint64_t data_at = pos_ + 30 + name.size() + extra.size();
  uint64_t pad = (kAlign - data_at % kAlign) % kAlign;
  if (pad > 0 && pad < 4) pad += kAlign;  // an extra field needs 4 bytes of header
  if (pad > 0) {
    le16(extra, 0x4246);
    le16(extra, static_cast<uint16_t>(pad - 4));
    extra.append(pad - 4, 'Z');
  }
  le16(h, static_cast<uint16_t>(extra.size()));
  h += name;
  h += extra;
  put(h);
  if (size > 0) {
    out_.write_paged(owner, data, size);
    pos_ += size;
  }
  entries_.push_back(std::move(e));
}

void ZipWriter::finish() {
  uint64_t cd_start = pos_;
  std::string cd;
  for (const Entry& e : entries_) {
    bool big_size = e.size >= kMax32, big_off = e.offset >= kMax32;
    std::string extra;
    if (big_size || big_off) {
      le16(extra, 0x0001);
      le16(extra, static_cast<uint16_t>((big_size ? 16 : 0) + (big_off ? 8 : 0)));
      if (big_size) {
        le64(extra, e.size);
        le64(extra, e.size);
      }
      if (big_off) le64(extra, e.offset);
    }
    le32(cd, 0x02014b50);
    le16(cd, 0x031e);  // made by: unix, 3.0
    le16(cd, extra.empty() ? 20 : 45);
    le16(cd, 0);
    le16(cd, 0);
    le16(cd, 0);
    le16(cd, 0x21);
    le32(cd, e.crc);
    le32(cd, big_size ? kMax32 : static_cast<uint32_t>(e.size));
    le32(cd, big_size ? kMax32 : static_cast<uint32_t>(e.size));
    le16(cd, static_cast<uint16_t>(e.name.size()));
    le16(cd, static_cast<uint16_t>(extra.size()));
    le16(cd, 0);  // comment
    le16(cd, 0);  // disk
    le16(cd, 0);  // internal attributes
    le32(cd, 0100644u << 16);
    le32(cd, big_off ? kMax32 : static_cast<uint32_t>(e.offset));
    cd += e.name;
    cd += extra;
  }
  put(cd);
  uint64_t cd_size = cd.size(), cd_end = pos_;
  bool zip64 = entries_.size() >= 0xFFFF || cd_start >= kMax32 || cd_size >= kMax32;
  std::string end;
  if (zip64) {
    le32(end, 0x06064b50);
    le64(end, 44);
    le16(end, 45);
    le16(end, 45);
    le32(end, 0);
    le32(end, 0);
    le64(end, entries_.size());
    le64(end, entries_.size());
    le64(end, cd_size);
    le64(end, cd_start);
    le32(end, 0x07064b50);  // locator
    le32(end, 0);
    le64(end, cd_end);
    le32(end, 1);
  }
  uint16_t n16 = zip64 ? 0xFFFF : static_cast<uint16_t>(entries_.size());
  le32(end, 0x06054b50);
  le16(end, 0);
  le16(end, 0);
  le16(end, n16);
  le16(end, n16);
  le32(end, zip64 ? kMax32 : static_cast<uint32_t>(cd_size));
  le32(end, zip64 ? kMax32 : static_cast<uint32_t>(cd_start));
  le16(end, 0);
  put(end);
}

}  // namespace amanda::torch_frontend
