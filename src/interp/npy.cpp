#include "amanda/interp/npy.h"

#include <cstring>

#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/gate.h"
#include "amanda/support/file.h"

namespace amanda::interp {

namespace {

struct Descr {
  const char* code;
  DType t;
};
constexpr Descr kDescr[] = {
    {"<f4", DType::Float32}, {"<f8", DType::Float64}, {"<f2", DType::Float16}, {"|i1", DType::Int8},
    {"<i2", DType::Int16},   {"<i4", DType::Int32},   {"<i8", DType::Int64},   {"|u1", DType::UInt8},
    {"<u2", DType::UInt16},  {"<u4", DType::UInt32},  {"<u8", DType::UInt64},  {"|b1", DType::Bool},
    {"<c8", DType::Complex64}, {"<c16", DType::Complex128},
};

// The value of `key` in the header dict, as its raw text up to the next top-level comma.
std::string header_value(const std::string& h, const std::string& key, const std::string& name) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) throw Error(name + ": .npy header has no '" + key + "'");
  size_t colon = h.find(':', k);
  size_t s = colon + 1;
  while (s < h.size() && h[s] == ' ') ++s;
  size_t e = s;
  if (h[s] == '(') e = h.find(')', s) + 1;
  else if (h[s] == '\'') e = h.find('\'', s + 1) + 1;
  else
    while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
  if (e == std::string::npos || e > h.size()) throw Error(name + ": malformed .npy header");
  return h.substr(s, e - s);
}

}  // namespace

Tensor parse_npy(std::string_view b, const std::string& name) {
  if (b.size() < 10 || b.substr(0, 6) != "\x93NUMPY") throw Error(name + ": not an .npy file");
  int major = static_cast<unsigned char>(b[6]);
  size_t hlen, off;
  if (major == 1) {
    hlen = static_cast<unsigned char>(b[8]) | (size_t(static_cast<unsigned char>(b[9])) << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) throw Error(name + ": truncated .npy header");
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= size_t(static_cast<unsigned char>(b[8 + i])) << (8 * i);
    off = 12;
  } else {
    throw Error(name + ": unsupported .npy version " + std::to_string(major));
  }
  if (off + hlen > b.size()) throw Error(name + ": truncated .npy header");
  std::string h(b.substr(off, hlen));
  std::string descr = header_value(h, "descr", name);
  std::string fortran = header_value(h, "fortran_order", name);
  std::string shape_s = header_value(h, "shape", name);
  if (descr.size() < 2) throw Error(name + ": bad descr");
  descr = descr.substr(1, descr.size() - 2);
  if (fortran != "False") throw Error(name + ": Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  Shape shape;
  for (size_t i = 1; i < shape_s.size();) {
    while (i < shape_s.size() && (shape_s[i] == ' ' || shape_s[i] == ',')) ++i;
    if (i >= shape_s.size() || shape_s[i] == ')') break;
    size_t j = i;
    while (j < shape_s.size() && isdigit(static_cast<unsigned char>(shape_s[j]))) ++j;
    if (j == i) throw Error(name + ": bad shape in .npy header: " + shape_s);
    if (j - i > 18) throw Error(name + ": a dimension of the .npy shape is too large: " + shape_s.substr(i, j - i));
    shape.push_back(std::stoll(shape_s.substr(i, j - i)));
    i = j;
  }
  std::string_view data = b.substr(off + hlen);
  if (descr.size() > 2 && descr[0] == '<' && descr[1] == 'U') {
    if (descr.size() > 12 || descr.find_first_not_of("0123456789", 2) != std::string::npos) throw Error(name + ": bad '<U' width in .npy header");
    size_t width = std::stoul(descr.substr(2));
    if (width > (size_t(1) << 32)) throw Error(name + ": '<U' width " + std::to_string(width) + " is too large");
    Tensor t = Tensor::uninit(DType::String, shape);  // (charged: its elements)
    if (data.size() / 4 / std::max<size_t>(width, 1) < static_cast<size_t>(t.numel())) throw Error(name + ": truncated .npy data");
    // The strings' bytes: at most 4 per code point of the file's, charged before they are made.
    MemoryCharge strings(checked_mul(checked_mul(uint64_t(t.numel()), uint64_t(width), name), 4, name), name + ": the .npy strings");
    for (int64_t i = 0; i < t.numel(); ++i) {
      std::string s;
      for (size_t k = 0; k < width; ++k) {
        uint32_t cp;
        std::memcpy(&cp, data.data() + (static_cast<size_t>(i) * width + k) * 4, 4);
        if (cp == 0) break;
        if (cp < 0x80) s += static_cast<char>(cp);
        else if (cp < 0x800) s += static_cast<char>(0xc0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3f));
        else if (cp < 0x10000)
          s += static_cast<char>(0xe0 | (cp >> 12)), s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f)),
              s += static_cast<char>(0x80 | (cp & 0x3f));
        else
          s += static_cast<char>(0xf0 | (cp >> 18)), s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f)),
              s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f)), s += static_cast<char>(0x80 | (cp & 0x3f));
      }
      t.strings()[i] = s;
    }
    return t;
  }
  if (descr == "<b1") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  DType dt = DType::Undefined;
  for (const auto& d : kDescr)
    if (descr == d.code) dt = d.t;
  if (dt == DType::Undefined) throw Error(name + ": element type '" + descr + "' is not supported (little-endian numbers, bool, '<U' strings)");
  if (dt == DType::Complex64 || dt == DType::Complex128) throw Error(name + ": complex arrays are not supported");
  Tensor t = Tensor::uninit(dt, shape);
  if (data.size() < t.nbytes()) throw Error(name + ": truncated .npy data (" + std::to_string(data.size()) + " bytes for shape " + shape_str(shape) + ")");
  if (t.nbytes()) std::memcpy(t.mutable_raw(), data.data(), t.nbytes());
  return t;
}

Tensor read_npy(const std::string& path) {
  ReadGate file(path);  // a regular file, opened without blocking
  auto buf = file.map_model();
  return parse_npy(buf->view(), path);
}

std::string npy_bytes(const Tensor& t) {
  std::string descr;
  size_t width = 0;
  if (t.dtype() == DType::String) {
    for (const auto& s : t.strings()) width = std::max(width, s.size());
    width = std::max<size_t>(width, 1);
    descr = "<U" + std::to_string(width);
  } else if (t.dtype() == DType::BFloat16) {
    descr = "<u2";  // numpy has no bfloat16: its bits as uint16, as onnx.numpy_helper does
  } else {
    for (const auto& d : kDescr)
      if (d.t == t.dtype()) descr = d.code;
    if (descr.empty()) throw Error("cannot write element type " + std::string(ir::dtype_name(t.dtype())) + " to .npy");
  }
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : (i + 1 < t.shape().size() ? ", " : ""));
  shape += ")";
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  out += h;
  if (t.dtype() == DType::String) {
    for (const auto& s : t.strings()) {
      // UTF-8 -> UCS-4 (ASCII and multi-byte sequences)
      std::vector<uint32_t> cps;
      for (size_t i = 0; i < s.size();) {
        unsigned char ch = static_cast<unsigned char>(s[i]);
        uint32_t cp = ch;
        size_t n = 1;
        if (ch >= 0xf0) cp = ch & 0x07, n = 4;
        else if (ch >= 0xe0) cp = ch & 0x0f, n = 3;
        else if (ch >= 0xc0) cp = ch & 0x1f, n = 2;
        for (size_t k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
        cps.push_back(cp);
        i += n;
      }
      cps.resize(width, 0);
      out.append(reinterpret_cast<const char*>(cps.data()), width * 4);
    }
  } else {
    out.append(reinterpret_cast<const char*>(t.raw()), t.nbytes());
  }
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  WriteGate out(path);
  out.main().write(npy_bytes(t));
  out.commit();
}

}  // namespace amanda::interp
