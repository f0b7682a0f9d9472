// The tensor-bundle checkpoint (bundle.h): LevelDB's table format (table/format.cc, block.cc of
// LevelDB's documentation "table_format.md"), and TensorFlow's BundleWriter layout on top of it.
#include "bundle.h"

#include <array>
#include <cstring>
#include <filesystem>

#include "amanda/support/diagnostics.h"
#include "amanda_tf_saved_model.pb.h"
#include "values.h"

namespace amanda::tf_frontend::detail {

namespace tf = tensorflow;

// ------------------------------------------------------------------ crc32c

namespace {

struct Crc32cTables {
  std::array<std::array<uint32_t, 256>, 4> t{};
  Crc32cTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 4; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};

const Crc32cTables& tables() {
  static const Crc32cTables t;
  return t;
}

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n) {
  const auto& t = tables().t;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  // Four bytes at a time (slicing-by-4), then the tail.
  while (n >= 4) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    c ^= w;
    c = t[3][c & 0xff] ^ t[2][(c >> 8) & 0xff] ^ t[1][(c >> 16) & 0xff] ^ t[0][c >> 24];
    p += 4;
    n -= 4;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return ~c;
}

// ------------------------------------------------------------------ varints, fixed ints

namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_fixed32(std::string& out, uint32_t v) {
  char b[4] = {char(v), char(v >> 8), char(v >> 16), char(v >> 24)};
  out.append(b, 4);
}

uint32_t get_fixed32(const char* p) {
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  return uint32_t(u[0]) | (uint32_t(u[1]) << 8) | (uint32_t(u[2]) << 16) | (uint32_t(u[3]) << 24);
}

// Reads a varint at s[pos], advancing pos; false when it runs past the end or past 64 bits.
bool get_varint(std::string_view s, size_t& pos, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift <= 63; shift += 7) {
    if (pos >= s.size()) return false;
    uint8_t b = static_cast<uint8_t>(s[pos++]);
    out |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;  // two block handles padded to 40 bytes, the magic
constexpr size_t kTrailerSize = 5;  // block type (0: none, 1: snappy) and its masked crc32c
constexpr size_t kBlockSize = 262144;  // TensorFlow's table::Options default
constexpr int kRestartInterval = 16;

class BlockBuilder {
 public:
  void add(std::string_view key, std::string_view value) {
    size_t shared = 0;
    if (count_ % kRestartInterval == 0) {
      restarts_.push_back(static_cast<uint32_t>(buf_.size()));
    } else {
      size_t n = std::min(last_.size(), key.size());
      while (shared < n && last_[shared] == key[shared]) ++shared;
    }
    put_varint(buf_, shared);
    put_varint(buf_, key.size() - shared);
    put_varint(buf_, value.size());
    buf_.append(key.substr(shared));
    buf_.append(value);
    last_.assign(key);
    ++count_;
  }
  size_t size_estimate() const { return buf_.size() + 4 * restarts_.size() + 4; }
  bool empty() const { return count_ == 0; }
  const std::string& last_key() const { return last_; }
  std::string finish() {
    if (restarts_.empty()) restarts_.push_back(0);
    std::string out = std::move(buf_);
    for (uint32_t r : restarts_) put_fixed32(out, r);
    put_fixed32(out, static_cast<uint32_t>(restarts_.size()));
    buf_.clear();
    restarts_.clear();
    last_.clear();
    count_ = 0;
    return out;
  }

 private:
  std::string buf_, last_;
  std::vector<uint32_t> restarts_;
  int count_ = 0;
};

// Appends a block and its trailer; returns its handle (offset, size without the trailer).
std::string append_block(std::string& file, const std::string& contents) {
  std::string handle;
  put_varint(handle, file.size());
  put_varint(handle, contents.size());
  file += contents;
  char type = 0;
  file += type;
  uint32_t crc = crc32c_extend(crc32c(contents.data(), contents.size()), &type, 1);
  put_fixed32(file, crc32c_mask(crc));
  return handle;
}

}  // namespace

std::string write_table(const KeyValues& sorted) {
  std::string file;
  BlockBuilder data, index;
  for (const auto& [k, v] : sorted) {
    data.add(k, v);
    if (data.size_estimate() >= kBlockSize) {
      std::string last = data.last_key();
      index.add(last, append_block(file, data.finish()));  // (the block's last key separates it from the next)
    }
  }
  if (!data.empty()) {
    std::string last = data.last_key();
    index.add(last, append_block(file, data.finish()));
  }
  BlockBuilder meta;
  std::string meta_handle = append_block(file, meta.finish());
  std::string index_handle = append_block(file, index.finish());
  std::string footer = meta_handle + index_handle;
  footer.resize(kFooterSize - 8, '\0');
  put_fixed32(footer, static_cast<uint32_t>(kTableMagic));
  put_fixed32(footer, static_cast<uint32_t>(kTableMagic >> 32));
  return file + footer;
}

namespace {

class TableReader {
 public:
  TableReader(std::string_view bytes, const std::string& file) : f_(bytes), file_(file) {}

  KeyValues run() {
    if (f_.size() < kFooterSize) fail("shorter than a table's 48-byte footer (a truncated file?)");
    std::string_view footer = f_.substr(f_.size() - kFooterSize);
    uint64_t magic = uint64_t(get_fixed32(footer.data() + 40)) | (uint64_t(get_fixed32(footer.data() + 44)) << 32);
    if (magic != kTableMagic) fail("the footer has no table magic number (not a tensor-bundle index, or truncated)");
    size_t pos = 0;
    uint64_t mo, ms, io, is;
    std::string_view handles = footer.substr(0, 40);
    if (!get_varint(handles, pos, mo) || !get_varint(handles, pos, ms) || !get_varint(handles, pos, io) ||
        !get_varint(handles, pos, is))
      fail("the footer's block handles are corrupt");
    for (size_t i = pos; i < 40; ++i)
      if (handles[i] != 0) fail("the footer's padding is not zero (a corrupt file)");
    block(mo, ms, "the metaindex block");  // (filters, which a bundle does not have: checked, not used)
    KeyValues index = block(io, is, "the index block");
    KeyValues out;
    for (size_t i = 0; i < index.size(); ++i) {
      size_t p = 0;
      uint64_t o, s;
      if (!get_varint(index[i].second, p, o) || !get_varint(index[i].second, p, s))
        fail("index entry " + std::to_string(i) + ": a corrupt block handle");
      KeyValues b = block(o, s, "data block " + std::to_string(i));
      for (auto& kv : b) {
        if (!out.empty() && !(out.back().first < kv.first)) fail("key '" + kv.first + "' is out of order or repeated");
        out.push_back(std::move(kv));
      }
    }
    return out;
  }

 private:
  std::string_view f_;
  const std::string& file_;

  [[noreturn]] void fail(const std::string& msg) const { throw Error(file_ + ": error: " + msg); }

  KeyValues block(uint64_t offset, uint64_t size, const std::string& what) {
    uint64_t end = f_.size() - kFooterSize;
    if (offset > end || size > end - offset || kTrailerSize > end - offset - size)
      fail(what + " [" + std::to_string(offset) + ", +" + std::to_string(size) + ") lies outside the file");
    std::string_view b = f_.substr(offset, size);
    const char* trailer = f_.data() + offset + size;
    uint32_t stored = crc32c_unmask(get_fixed32(trailer + 1));
    uint32_t actual = crc32c_extend(crc32c(b.data(), b.size()), trailer, 1);
    if (stored != actual) fail(what + ": crc32c mismatch (a corrupt file)");
    if (trailer[0] != 0) fail(what + ": compressed (type " + std::to_string(int(uint8_t(trailer[0]))) + "); TensorFlow writes bundles uncompressed");
    if (b.size() < 4) fail(what + ": too short for its restart count");
    uint32_t restarts = get_fixed32(b.data() + b.size() - 4);
    if (restarts == 0 || restarts > (b.size() - 4) / 4) fail(what + ": a corrupt restart count");
    size_t limit = b.size() - 4 - 4 * size_t(restarts);
    KeyValues out;
    std::string key;
    size_t pos = 0;
    while (pos < limit) {
      uint64_t shared, non_shared, vlen;
      std::string_view body = b.substr(0, limit);
      if (!get_varint(body, pos, shared) || !get_varint(body, pos, non_shared) || !get_varint(body, pos, vlen))
        fail(what + ": a corrupt entry header at byte " + std::to_string(pos));
      if (shared > key.size() || non_shared > limit - pos || vlen > limit - pos - non_shared)
        fail(what + ": an entry runs past the block");
      key.resize(shared);
      key.append(body.substr(pos, non_shared));
      pos += non_shared;
      out.emplace_back(key, std::string(body.substr(pos, vlen)));
      pos += vlen;
    }
    return out;
  }
};

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

KeyValues read_table(std::string_view bytes, const std::string& file) { return TableReader(bytes, file).run(); }

std::string data_file_name(const std::string& prefix, int k, int n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, ".data-%05d-of-%05d", k, n);
  return prefix + buf;
}

// ------------------------------------------------------------------ bundles

std::vector<BundleTensor> read_bundle(std::string_view index, const std::string& index_name,
                                      const std::function<std::shared_ptr<const Buffer>(int, int, std::string&)>& shard) {
  KeyValues kv = read_table(index, index_name);
  auto fail = [&](const std::string& msg) -> void { throw Error(index_name + ": error: " + msg); };
  if (kv.empty() || !kv[0].first.empty()) fail("no header entry (the empty key)");
  tf::BundleHeaderProto header;
  if (!header.ParseFromString(kv[0].second)) fail("the header entry is not a BundleHeaderProto");
  if (header.endianness() != tf::BundleHeaderProto::LITTLE) fail("a big-endian bundle (not read)");
  if (header.num_shards() < 1 || header.num_shards() > 100000) fail("num_shards " + std::to_string(header.num_shards()));
  if (header.version().min_consumer() > 1)
    fail("the bundle needs a reader of version " + std::to_string(header.version().min_consumer()) + " (this one reads 1)");
  int n = header.num_shards();
  std::vector<std::shared_ptr<const Buffer>> shards(n);
  std::vector<std::string> names(n);
  std::vector<BundleTensor> out;
  out.reserve(kv.size() - 1);
  for (size_t i = 1; i < kv.size(); ++i) {
    const std::string& key = kv[i].first;
    std::string where = "entry '" + key + "'";
    tf::BundleEntryProto e;
    if (!e.ParseFromString(kv[i].second)) fail(where + ": not a BundleEntryProto");
    if (e.slices_size()) fail(where + ": a partitioned variable (slices), which Amanda does not read");
    ir::DType dt = ir_dtype(e.dtype());
    auto dname = dtype_name(e.dtype());
    if (dt == ir::DType::Undefined || dt == ir::DType::Resource || dt == ir::DType::Variant || tf_dtype(dt) != e.dtype())
      fail(where + ": dtype " + std::string(dname ? *dname : std::to_string(e.dtype())) + " is not read in variables");
    std::optional<ir::Value> sv = shape_value(e.shape());
    std::vector<int64_t> shape;
    bool known = sv && sv->is_list();
    if (known)
      for (const auto& d : sv->as_list()) {
        if (!d.is_int() || d.as_int() < 0) known = false;
        else shape.push_back(d.as_int());
      }
    if (!known) fail(where + ": a shape that is not fully known");
    ir::Tensor probe;
    probe.dtype = ir::DType::UInt8;
    probe.shape = shape;
    auto count = probe.element_count();
    if (!count || *count > (uint64_t(1) << 40)) fail(where + ": shape " + shape_text(shape) + " is too large");
    if (e.shard_id() < 0 || e.shard_id() >= n) fail(where + ": shard " + std::to_string(e.shard_id()) + " of " + std::to_string(n));
    int k = e.shard_id();
    if (!shards[k]) shards[k] = shard(k, n, names[k]);
    const Buffer& data = *shards[k];
    if (e.offset() < 0 || e.size() < 0 || uint64_t(e.offset()) > data.size() || uint64_t(e.size()) > data.size() - uint64_t(e.offset()))
      fail(where + ": bytes [" + std::to_string(e.offset()) + ", " + std::to_string(e.offset() + e.size()) + ") lie past the end of " +
           names[k] + " (" + std::to_string(data.size()) + " bytes)");
    const uint8_t* p = data.data() + e.offset();
    uint64_t size = uint64_t(e.size());
    auto bad_crc = [&] { fail(where + ": crc32c of its bytes in " + names[k] + " does not match (corrupt data)"); };
    if (dt != ir::DType::String && crc32c_mask(crc32c(p, size)) != e.crc32c()) bad_crc();
    BundleTensor t;
    t.key = key;
    if (dt == ir::DType::String) {
      // [varint64 len]... [masked crc32c of the lengths as uint32/uint64] [bytes]...
      std::string_view s(reinterpret_cast<const char*>(p), size);
      size_t pos = 0;
      std::vector<uint64_t> lens;
      uint32_t lcrc = 0;
      for (uint64_t i2 = 0; i2 < *count; ++i2) {
        uint64_t len;
        if (!get_varint(s, pos, len)) fail(where + ": string lengths run past its " + std::to_string(size) + " bytes");
        lens.push_back(len);
        if (len <= UINT32_MAX) {
          uint32_t l32 = static_cast<uint32_t>(len);
          lcrc = crc32c_extend(lcrc, &l32, 4);
        } else {
          lcrc = crc32c_extend(lcrc, &len, 8);
        }
      }
      if (pos + 4 > s.size()) fail(where + ": no checksum after the string lengths");
      if (get_fixed32(s.data() + pos) != crc32c_mask(lcrc)) fail(where + ": the string lengths' checksum does not match");
      // The entry's crc: the lengths (as integers, above), their checksum, the strings' bytes.
      uint32_t ecrc = crc32c_extend(lcrc, s.data() + pos, 4);
      ecrc = crc32c_extend(ecrc, s.data() + pos + 4, s.size() - pos - 4);
      if (crc32c_mask(ecrc) != e.crc32c()) bad_crc();
      pos += 4;
      t.value.dtype = ir::DType::String;
      t.value.shape = shape;
      for (uint64_t len : lens) {
        if (len > s.size() - pos) fail(where + ": a string runs past its bytes");
        t.value.strings.emplace_back(s.substr(pos, len));
        pos += len;
      }
      if (pos != s.size()) fail(where + ": " + std::to_string(s.size() - pos) + " bytes after its strings");
    } else {
      uint64_t need = *count * ir::dtype_size(dt);
      if (need != size)
        fail(where + ": shape " + shape_text(shape) + " of " + std::string(ir::dtype_name(dt)) + " needs " + std::to_string(need) +
             " bytes, the entry says " + std::to_string(size));
      t.value = ir::Tensor::borrow(dt, shape, shards[k], p, size);
    }
    out.push_back(std::move(t));
  }
  return out;
}

BundleFiles write_bundle(const std::vector<std::pair<std::string, const ir::Tensor*>>& tensors) {
  BundleFiles f;
  KeyValues kv;
  kv.reserve(tensors.size() + 1);
  tf::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(tf::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);
  kv.emplace_back("", serialize(header));
  size_t total = 0;
  for (const auto& [k, t] : tensors) total += t->size;
  f.data.reserve(total);
  for (const auto& [key, t] : tensors) {
    if (key.empty()) throw Error("a variable with an empty name (the bundle's header key)");
    if (!kv.empty() && !(kv.back().first < key)) throw Error("variable '" + key + "' is out of order or repeated");
    tf::BundleEntryProto e;
    tf::DataType dt = tf_dtype(t->dtype);
    if (dt == tf::DT_INVALID || t->dtype == ir::DType::Resource || t->dtype == ir::DType::Variant)
      throw Error("variable '" + key + "': a " + std::string(ir::dtype_name(t->dtype)) + " tensor cannot be stored in a bundle");
    e.set_dtype(dt);
    for (int64_t d : t->shape) e.mutable_shape()->add_dim()->set_size(d);
    e.set_offset(static_cast<int64_t>(f.data.size()));
    size_t start = f.data.size();
    uint32_t crc;
    if (t->dtype == ir::DType::String) {
      uint32_t lcrc = 0;
      for (const auto& s : t->strings) {
        put_varint(f.data, s.size());
        uint64_t len = s.size();
        if (len <= UINT32_MAX) {
          uint32_t l32 = static_cast<uint32_t>(len);
          lcrc = crc32c_extend(lcrc, &l32, 4);
        } else {
          lcrc = crc32c_extend(lcrc, &len, 8);
        }
      }
      uint32_t masked = crc32c_mask(lcrc);
      put_fixed32(f.data, masked);
      crc = crc32c_extend(lcrc, f.data.data() + f.data.size() - 4, 4);
      for (const auto& s : t->strings) {
        f.data += s;
        crc = crc32c_extend(crc, s.data(), s.size());
      }
    } else {
      f.data.append(reinterpret_cast<const char*>(t->data), t->size);
      crc = crc32c(t->data, t->size);
    }
    e.set_size(static_cast<int64_t>(f.data.size() - start));
    e.set_crc32c(crc32c_mask(crc));
    kv.emplace_back(key, serialize(e));
  }
  f.index = write_table(kv);
  return f;
}

}  // namespace amanda::tf_frontend::detail
