// The archive: data.pkl (the module object, protocol 2 as torch writes it), the class source,
// one stored entry per tensor under data/, an empty constants.pkl and the format version.
#include "frameworks/torch/script_writer.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "amanda/support/diagnostics.h"
#include "frameworks/torch/zip_writer.h"

namespace amanda::torch_frontend {

namespace {

// torch's storage class for an element type (torch/storage.py's legacy names, which the
// unpickler of torch.jit.load maps back to a dtype).
const char* storage_class(ir::DType d) {
  using D = ir::DType;
  switch (d) {
    case D::Float32: return "FloatStorage";
    case D::Float64: return "DoubleStorage";
    case D::Float16: return "HalfStorage";
    case D::BFloat16: return "BFloat16Storage";
    case D::Int64: return "LongStorage";
    case D::Int32: return "IntStorage";
    case D::Int16: return "ShortStorage";
    case D::Int8: return "CharStorage";
    case D::UInt8: return "ByteStorage";
    case D::Bool: return "BoolStorage";
    case D::Complex64: return "ComplexFloatStorage";
    case D::Complex128: return "ComplexDoubleStorage";
    default: return nullptr;
  }
}

// The opcodes of pickle protocol 2 that torch's own pickler emits for a module.
class Pickler {
 public:
  Pickler() { s_ += "\x80\x02"; }
  void global(std::string_view module, std::string_view name) {
    s_ += 'c';
    s_ += module;
    s_ += '\n';
    s_ += name;
    s_ += '\n';
  }
  void str(std::string_view v) {
    s_ += 'X';
    u32(static_cast<uint32_t>(v.size()));
    s_ += v;
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      s_ += 'K';
      s_ += static_cast<char>(v);
    } else if (v >= 0 && v < 65536) {
      s_ += 'M';
      s_ += static_cast<char>(v & 0xFF);
      s_ += static_cast<char>(v >> 8);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      s_ += 'J';
      u32(static_cast<uint32_t>(static_cast<int32_t>(v)));
    } else {  // LONG1: little-endian two's complement
      s_ += '\x8a';
      s_ += static_cast<char>(8);
      for (int i = 0; i < 8; ++i) s_ += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xFF);
    }
  }
  void boolean(bool b) { s_ += b ? '\x88' : '\x89'; }
  void none() { s_ += 'N'; }
  void mark() { s_ += '('; }
  void tuple() { s_ += 't'; }  // from the mark
  void empty_tuple() { s_ += ')'; }
  void empty_dict() { s_ += '}'; }
  void op(char c) { s_ += c; }
  void int_tuple(const std::vector<int64_t>& v) {
    if (v.empty()) return empty_tuple();
    mark();
    for (int64_t x : v) integer(x);
    tuple();
  }
  std::string done() {
    s_ += '.';
    return std::move(s_);
  }

 private:
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) s_ += static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  std::string s_;
};

}  // namespace

bool torch_has_dtype(ir::DType d) { return storage_class(d) != nullptr; }

namespace {

void check_tensor(const ModuleAttr& a) {
  const ir::Tensor& t = *a.tensor;
  if (!storage_class(t.dtype))
    throw Error("tensor '" + a.name + "' of element type " + std::string(ir::dtype_name(t.dtype)) +
                " (torch has no storage for it)");
  auto need = t.expected_bytes();
  if (!need || *need != t.size)
    throw Error("tensor '" + a.name + "': " + std::to_string(t.size) + " bytes for its shape and element type");
}

}  // namespace

std::string module_pickle(const ModuleSource& m) {
  Pickler p;
  auto dot = m.qualified_name.rfind('.');
  p.global(std::string_view(m.qualified_name).substr(0, dot), std::string_view(m.qualified_name).substr(dot + 1));
  p.empty_tuple();
  p.op('\x81');  // NEWOBJ
  p.empty_dict();
  p.mark();
  for (size_t i = 0; i < m.attrs.size(); ++i) {
    const ModuleAttr& a = m.attrs[i];
    const ir::Tensor& t = *a.tensor;
    p.str(a.name);
    p.global("torch._utils", "_rebuild_tensor_v2");
    p.mark();
    p.mark();
    p.str("storage");
    p.global("torch", storage_class(t.dtype));
    p.str(std::to_string(i));
    p.str("cpu");
    p.integer(static_cast<int64_t>(t.element_count().value_or(0)));
    p.tuple();
    p.op('Q');  // BINPERSID
    p.integer(0);
    p.int_tuple(t.shape);
    std::vector<int64_t> strides(t.shape.size());
    int64_t s = 1;
    for (size_t k = t.shape.size(); k-- > 0;) {
      strides[k] = s;
      s *= std::max<int64_t>(t.shape[k], 1);
    }
    p.int_tuple(strides);
    p.boolean(a.parameter);  // requires_grad: parameters train, as torch saves them
    p.global("collections", "OrderedDict");
    p.empty_tuple();
    p.op('R');
    p.tuple();
    p.op('R');
  }
  p.str("training");
  p.boolean(false);
  p.op('u');  // SETITEMS
  p.op('b');  // BUILD
  return p.done();
}

// The archive's `version` record says which operator semantics the code has: torch's loader rewrites
// a call to an op whose meaning changed after the file's version with an upgrader (a file of version
// 3 that calls torch.div gets `div_Tensor_0_3`, the old integer-flooring division written as
// prim::If on is_floating_point). torch.jit.save writes 3 raised to the version of each such op the
// code calls; these are torch 1.13's (torch/csrc/jit/operator_upgraders/version_map.cpp, checked by
// saving a scripted module calling each).
static int format_version(const ir::Graph& g) {
  static const std::pair<const char*, int> kChanged[] = {
      {"div", 4}, {"div_", 4}, {"full", 5}, {"linspace", 8}, {"logspace", 9}, {"gelu", 10}};
  int version = 3;
  g.for_each_op([&](ir::OpId op) {  // bodies of control flow too
    std::string_view type = g.type_str(op);
    if (!type.starts_with("aten::")) return;
    type.remove_prefix(6);
    type = type.substr(0, type.find('.'));
    for (const auto& [name, v] : kChanged)
      if (type == name) version = std::max(version, v);
  });
  return version;
}

void write_torchscript(const ir::Graph& g, WriteGate& files) {
  ModuleSource m = emit_module(g);
  for (const auto& a : m.attrs) check_tensor(a);
  ZipWriter zip(files.main());
  zip.add("archive/data.pkl", module_pickle(m));
  zip.add("archive/code/__torch__/amanda_export.py", m.code);
  for (size_t i = 0; i < m.attrs.size(); ++i) {
    const ir::Tensor& t = *m.attrs[i].tensor;
    zip.add("archive/data/" + std::to_string(i), t.owner.get(), t.data, t.size);
  }
  Pickler empty;
  empty.empty_tuple();
  zip.add("archive/constants.pkl", empty.done());
  zip.add("archive/version", std::to_string(format_version(g)) + "\n");
  zip.finish();
}

}  // namespace amanda::torch_frontend
