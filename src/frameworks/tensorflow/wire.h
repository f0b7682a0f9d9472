// The protobuf wire format, read and written by hand for the GraphDef fast paths (import.cpp
// reads NodeDefs and AttrValues straight from the bytes, export.cpp writes them straight from the
// IR; docs/tensorflow.md, "How the bytes are read and written"). The reader is strict: anything it
// does not expect makes it return false, and the caller hands those bytes to protobuf instead, so
// what protobuf accepts and refuses stays the rule.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace amanda::tf_frontend::detail::wire {

enum : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

struct Reader {
  const uint8_t* p;
  const uint8_t* e;
  explicit Reader(std::string_view s) : p(reinterpret_cast<const uint8_t*>(s.data())), e(p + s.size()) {}
  bool done() const { return p == e; }
  bool varint(uint64_t& v) {
    if (p != e && *p < 0x80) {
      v = *p++;
      return true;
    }
    uint64_t r = 0;
    for (int i = 0; i < 10; ++i) {
      if (p == e) return false;
      uint8_t b = *p++;
      if (i == 9 && b > 1) return false;
      r |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (b < 0x80) {
        v = r;
        return true;
      }
    }
    return false;
  }
  bool tag(uint32_t& field, uint32_t& type) {
    uint64_t t;
    if (!varint(t) || t > UINT32_MAX) return false;
    field = static_cast<uint32_t>(t >> 3);
    type = static_cast<uint32_t>(t & 7);
    return field != 0;
  }
  bool bytes(std::string_view& out) {
    uint64_t n;
    if (!varint(n) || n > static_cast<uint64_t>(e - p) || n > INT32_MAX) return false;
    out = std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
    p += n;
    return true;
  }
  bool fixed32(uint32_t& v) {
    if (e - p < 4) return false;
    std::memcpy(&v, p, 4);
    p += 4;
    return true;
  }
  // Past a field of `type` (groups: false).
  bool skip(uint32_t type) {
    uint64_t v;
    std::string_view s;
    switch (type) {
      case kVarint: return varint(v);
      case kFixed64:
        if (e - p < 8) return false;
        p += 8;
        return true;
      case kLen: return bytes(s);
      case kFixed32:
        if (e - p < 4) return false;
        p += 4;
        return true;
      default: return false;
    }
  }
};

// Whether every byte is ASCII (then a proto3 `string` is valid UTF-8 without asking protobuf).
inline bool ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void put_varint(std::string& out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}

inline void put_tag(std::string& out, uint32_t field, uint32_t type) { put_varint(out, (field << 3) | type); }

inline void put_len(std::string& out, uint32_t field, std::string_view s) {
  put_tag(out, field, kLen);
  put_varint(out, s.size());
  out.append(s);
}

inline size_t len_size(uint32_t field, uint64_t n) { return varint_size(field << 3) + varint_size(n) + n; }

}  // namespace amanda::tf_frontend::detail::wire
