#include "frameworks/torchscript/zip.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <limits>

#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"

namespace amanda::torchscript {

namespace {

// Record signatures and fixed sizes (APPNOTE.TXT, sections 4.3.7 - 4.3.16).
constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kLocalSize = 30;
constexpr uint64_t kCentralSize = 46;
constexpr uint64_t kEndSize = 22;
constexpr uint64_t kZip64EndSize = 56;
constexpr uint64_t kZip64LocatorSize = 20;
constexpr uint64_t kMaxComment = 0xffff;
// Deflate cannot expand data by more than this factor (a 258-byte match costs at least 2 bits),
// so a larger claimed size is corrupt, and refusing it keeps a forged size from allocating.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t le32(const uint8_t* p) { return uint32_t(le16(p)) | uint32_t(le16(p + 2)) << 16; }
uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

// True when [offset, offset + length) lies inside a buffer of n bytes (no overflow).
bool fits(uint64_t offset, uint64_t length, uint64_t n) { return offset <= n && length <= n - offset; }

class Reader {
 public:
  Reader(const Buffer& b, const std::string& path) : p_(b.data()), n_(b.size()), path_(path) {}

  [[noreturn]] void fail(uint64_t offset, const std::string& message) const {
    throw Error(path_ + ": zip: byte " + std::to_string(offset) + ": " + message);
  }

  // Where the end of central directory record starts: the last signature within the final
  // 64 KiB + 22 bytes whose comment length reaches no further than the end of the file.
  uint64_t find_end() const {
    if (n_ < kEndSize) fail(0, "the file is too short to be a zip archive (" + std::to_string(n_) + " bytes)");
    uint64_t lowest = n_ - kEndSize > kMaxComment ? n_ - kEndSize - kMaxComment : 0;
    for (uint64_t at = n_ - kEndSize + 1; at-- > lowest;) {
      if (le32(p_ + at) == kEndSig && le16(p_ + at + 20) <= n_ - kEndSize - at) return at;
    }
    fail(n_, "no end of central directory record: not a zip archive");
  }

  struct Directory {
    uint64_t count = 0, offset = 0, size = 0;
    uint64_t end = 0;  // where the end records start: the directory must lie before them
  };

  Directory directory() const {
    uint64_t at = find_end();
    const uint8_t* e = p_ + at;
    Directory d;
    d.end = at;
    uint16_t disk = le16(e + 4), cd_disk = le16(e + 6);
    uint16_t on_disk = le16(e + 8);
    d.count = le16(e + 10);
    d.size = le32(e + 12);
    d.offset = le32(e + 16);
    bool saturated = d.count == 0xffff || d.size == 0xffffffff || d.offset == 0xffffffff;
    // A Zip64 locator right before the record points at the Zip64 end record, whose 64-bit
    // fields replace the classic ones (torch.jit.save always writes both).
    if (at >= kZip64LocatorSize && le32(e - kZip64LocatorSize) == kZip64LocatorSig) {
      uint64_t loc = at - kZip64LocatorSize;
      uint64_t rec = le64(p_ + loc + 8);
      if (le32(p_ + loc + 4) != 0 || le32(p_ + loc + 16) > 1) fail(loc, "multi-disk zip archives are not supported");
      if (!fits(rec, kZip64EndSize, loc)) fail(loc, "the Zip64 locator points past its own position");
      const uint8_t* z = p_ + rec;
      if (le32(z) != kZip64EndSig) fail(rec, "no Zip64 end of central directory record where the locator points");
      if (le32(z + 16) != 0 || le32(z + 20) != 0) fail(rec, "multi-disk zip archives are not supported");
      if (le64(z + 24) != le64(z + 32)) fail(rec, "multi-disk zip archives are not supported");
      d.count = le64(z + 32);
      d.size = le64(z + 40);
      d.offset = le64(z + 48);
      d.end = rec;
    } else if (saturated) {
      fail(at, "the end record asks for Zip64 values but there is no Zip64 locator");
    } else if (disk != 0 || cd_disk != 0 || on_disk != d.count) {
      fail(at, "multi-disk zip archives are not supported");
    }
    if (!fits(d.offset, d.size, d.end))
      fail(at, "the central directory (" + std::to_string(d.size) + " bytes at " + std::to_string(d.offset) +
                   ") does not lie before the end records");
    if (d.count > d.size / kCentralSize)
      fail(at, std::to_string(d.count) + " entries cannot fit in a central directory of " + std::to_string(d.size) +
                   " bytes");
    return d;
  }

  // Reads the central directory entry at `at` (inside the directory [.., cd_end)) into `z` and
  // returns where the next one starts.
  uint64_t central_entry(uint64_t at, uint64_t cd_end, size_t index, ZipEntry& z, uint64_t& local) const {
    auto where = "central directory entry " + std::to_string(index);
    if (!fits(at, kCentralSize, cd_end)) fail(at, where + " runs past the end of the central directory");
    const uint8_t* c = p_ + at;
    if (le32(c) != kCentralSig) fail(at, where + " has no central directory signature");
    uint16_t flags = le16(c + 8);
    z.method = le16(c + 10);
    z.crc32 = le32(c + 16);
    z.compressed_size = le32(c + 20);
    z.size = le32(c + 24);
    uint64_t name_len = le16(c + 28), extra_len = le16(c + 30), comment_len = le16(c + 32);
    uint32_t disk = le16(c + 34);
    local = le32(c + 42);
    uint64_t next = at + kCentralSize + name_len + extra_len + comment_len;  // < 2^64: each part < 2^16
    if (next > cd_end) fail(at, where + " runs past the end of the central directory");
    z.name.assign(reinterpret_cast<const char*>(c + kCentralSize), name_len);
    if (z.name.empty()) fail(at, where + " has an empty name");
    if (z.name.find('\0') != std::string::npos) fail(at, where + " has a name with a NUL byte");
    where = "entry " + z.name;
    if (flags & 1) fail(at, where + " is encrypted");

    // Zip64 extended information (header 0x0001): 64-bit values for the saturated fields, in
    // the order size, compressed size, local header offset, disk.
    bool need_size = z.size == 0xffffffff, need_csize = z.compressed_size == 0xffffffff;
    bool need_local = local == 0xffffffff, need_disk = disk == 0xffff;
    uint64_t x = at + kCentralSize + name_len, x_end = x + extra_len;
    while (x_end - x >= 4) {
      uint16_t id = le16(p_ + x), len = le16(p_ + x + 2);
      if (len > x_end - x - 4) fail(x, where + ": an extra field runs past the end of the extra data");
      if (id == 0x0001) {
        uint64_t f = x + 4, f_end = f + len;
        auto take64 = [&](bool need, uint64_t& v) {
          if (!need) return;
          if (f_end - f < 8) fail(f, where + ": the Zip64 extra field is too short");
          v = le64(p_ + f);
          f += 8;
        };
        take64(need_size, z.size);
        take64(need_csize, z.compressed_size);
        take64(need_local, local);
        if (need_disk) {
          if (f_end - f < 4) fail(f, where + ": the Zip64 extra field is too short");
          disk = le32(p_ + f);
        }
        need_size = need_csize = need_local = need_disk = false;
      }
      x += 4 + uint64_t(len);
    }
    if (need_size || need_csize || need_local || need_disk) fail(at, where + " has no Zip64 extra field for its 64-bit values");
    if (disk != 0) fail(at, where + " lies on another disk (multi-disk archives are not supported)");
    if (z.method == 0 && z.compressed_size != z.size)
      fail(at, where + " is stored but its compressed size " + std::to_string(z.compressed_size) +
                   " differs from its size " + std::to_string(z.size));
    return next;
  }

  // Finds where the entry's bytes start from its local header at `local` (the local header's own
  // name and extra lengths: torch pads entries to 64 bytes with a local extra field).
  void locate(uint64_t local, size_t index, ZipEntry& z) const {
    auto where = "entry " + z.name;
    if (!fits(local, kLocalSize, n_))
      fail(local, "central directory entry " + std::to_string(index) + " points past the end of the file");
    const uint8_t* l = p_ + local;
    if (le32(l) != kLocalSig) fail(local, where + ": no local header signature where the central directory points");
    uint64_t name_len = le16(l + 26), extra_len = le16(l + 28);
    if (!fits(local + kLocalSize, name_len, n_) ||
        std::memcmp(l + kLocalSize, z.name.data(), std::min<uint64_t>(name_len, z.name.size())) != 0 ||
        name_len != z.name.size())
      fail(local, where + ": the local header names another entry");
    z.data_offset = local + kLocalSize + name_len + extra_len;
    if (!fits(z.data_offset, z.compressed_size, n_))
      fail(local, where + ": its " + std::to_string(z.compressed_size) + " bytes at " + std::to_string(z.data_offset) +
                      " run past the end of the file");
  }

 private:
  const uint8_t* p_;
  uint64_t n_;
  const std::string& path_;
};

}  // namespace

ZipArchive::ZipArchive(std::shared_ptr<const Buffer> bytes, std::string path)
    : bytes_(std::move(bytes)), path_(std::move(path)) {
  Reader r(*bytes_, path_);
  auto d = r.directory();
  entries_.resize(d.count);  // bounded by the directory's size, checked above
  uint64_t at = d.offset, cd_end = d.offset + d.size;
  for (size_t i = 0; i < entries_.size(); ++i) {
    uint64_t local = 0;
    at = r.central_entry(at, cd_end, i, entries_[i], local);
    r.locate(local, i, entries_[i]);
  }
  sorted_.resize(entries_.size());
  for (size_t i = 0; i < sorted_.size(); ++i) sorted_[i] = i;
  std::sort(sorted_.begin(), sorted_.end(), [&](size_t a, size_t b) { return entries_[a].name < entries_[b].name; });
  // Two entries with one name would make find() ambiguous (and readers disagree on which wins).
  for (size_t i = 1; i < sorted_.size(); ++i) {
    if (entries_[sorted_[i]].name == entries_[sorted_[i - 1]].name)
      r.fail(d.offset, "two entries are named " + entries_[sorted_[i]].name);
  }
  inflated_.resize(entries_.size());
  // What the deflated entries declare, against the budget, before any is inflated: an archive of
  // a few MB may declare gigabytes (each entry's ratio alone is plausible).
  uint64_t declared = 0;
  // (An entry whose size no deflate stream of its length can hold is refused when it is read, with
  // that reason.)
  for (const ZipEntry& e : entries_)
    if (e.method == 8 && e.size / kMaxDeflateRatio <= e.compressed_size) declared = checked_add(declared, e.size, path_ + ": zip");
  Budget::run().check(BudgetKind::Decompressed, declared, path_ + ": zip: the deflated entries together");
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), name,
                             [&](size_t i, std::string_view n) { return entries_[i].name < n; });
  if (it == sorted_.end() || entries_[*it].name != name) return nullptr;
  return &entries_[*it];
}

std::string_view ZipArchive::read(std::string_view name) const {
  const ZipEntry* e = find(name);
  if (!e) throw Error(path_ + ": no entry " + std::string(name) + " in the archive");
  return data(*e);
}

std::string_view ZipArchive::data(const ZipEntry& e) const {
  auto fail = [&](const std::string& message) {
    throw Error(path_ + ": zip: byte " + std::to_string(e.data_offset) + ": entry " + e.name + ": " + message);
  };
  // An entry of this archive, or a copy of one (found again by name).
  const ZipEntry* own = &e;
  std::less<const ZipEntry*> before;
  if (before(own, entries_.data()) || !before(own, entries_.data() + entries_.size())) {
    own = find(e.name);
    if (!own || own->data_offset != e.data_offset || own->compressed_size != e.compressed_size ||
        own->method != e.method || own->size != e.size)
      fail("not an entry of this archive");
  }
  const char* base = reinterpret_cast<const char*>(bytes_->data());
  if (own->method == 0) return {base + own->data_offset, own->size};
  if (own->method != 8) fail("unsupported compression method " + std::to_string(own->method));

  auto& cached = inflated_[static_cast<size_t>(own - entries_.data())];
  if (cached) return *cached;
  if (own->size / kMaxDeflateRatio > own->compressed_size)
    fail("a size of " + std::to_string(own->size) + " bytes is more than " + std::to_string(own->compressed_size) +
                " deflated bytes can hold");
  if (own->size > std::numeric_limits<size_t>::max() - 1) fail("too large for this machine");
  // Charged before allocating: four deflated 1 GiB entries pass the ratio check one by one.
  Budget::run().charge(BudgetKind::Decompressed, own->size, path_ + ": zip: entry " + own->name);
  Budget::run().charge(BudgetKind::Memory, own->size, path_ + ": zip: entry " + own->name);
  // One spare byte: a stream that inflates to more than `size` bytes fills it and is caught.
  auto out = std::make_unique<std::string>(own->size + 1, '\0');
  z_stream s{};
  if (inflateInit2(&s, -MAX_WBITS) != Z_OK) fail("zlib cannot start inflating");
  const uint8_t* in = bytes_->data() + own->data_offset;
  uint64_t in_left = own->compressed_size, out_left = out->size();
  s.next_out = reinterpret_cast<Bytef*>(out->data());
  int rc = Z_OK;
  // zlib counts in 32-bit uInt: feed input and output space in pieces of at most UINT_MAX.
  while (rc == Z_OK) {
    if (s.avail_in == 0 && in_left) {
      s.next_in = const_cast<Bytef*>(in);
      s.avail_in = static_cast<uInt>(std::min<uint64_t>(in_left, UINT_MAX));
      in += s.avail_in;
      in_left -= s.avail_in;
    }
    if (s.avail_out == 0 && out_left) {
      s.avail_out = static_cast<uInt>(std::min<uint64_t>(out_left, UINT_MAX));
      out_left -= s.avail_out;
    }
    rc = inflate(&s, Z_NO_FLUSH);  // Z_BUF_ERROR: out of input or of output space
  }
  uint64_t produced = s.total_out;
  std::string msg = s.msg ? s.msg : "";
  inflateEnd(&s);
  if (rc != Z_STREAM_END) {
    if (rc == Z_BUF_ERROR && produced > own->size)
      fail("inflates to more than its size of " + std::to_string(own->size) + " bytes");
    if (rc == Z_BUF_ERROR) fail("the deflate stream is truncated");
    fail("corrupt deflate stream" + (msg.empty() ? msg : " (" + msg + ")"));
  }
  if (produced != own->size)
    fail("inflates to " + std::to_string(produced) + " bytes, not its size of " + std::to_string(own->size));
  out->resize(own->size);
  uint32_t crc = static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(out->data()), out->size()));
  if (crc != own->crc32) fail("CRC mismatch (the inflated bytes are corrupt)");
  cached = std::move(out);
  return *cached;
}

}  // namespace amanda::torchscript
