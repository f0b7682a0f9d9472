// The values the libtorch-free TorchScript importer computes with, and the per-op knowledge it
// needs: shape and element-type rules for ops that become graph ops, and small kernels for ops
// whose inputs are all known (shape arithmetic, masks made from shapes, parameters reshaped or
// indexed before use) so that they fold into constants, as torch.onnx.export folds them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/ir/tensor.h"
#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"

namespace amanda::torchscript {

// The archive uses something this importer does not handle (an op without a shape rule, control
// flow on a computed tensor, ...). The caller may fall back to libtorch.
class Unsupported : public Error {
 public:
  using Error::Error;
};

// Elements of a known tensor: the raw bytes of an archive entry (borrowed, read-only) until a
// kernel needs numbers, then doubles (exact for every integer a shape or mask can hold).
struct Storage {
  ir::DType dtype = ir::DType::Float32;
  std::shared_ptr<const Buffer> owner;  // raw: the archive's bytes
  const uint8_t* raw = nullptr;
  size_t count = 0;  // elements
  std::vector<double> vals;
  bool has_vals = false;
  MemoryCharge charge;  // vals, against the run's Memory budget
  // An in-place write through a view replaced every element with graph values (batch_images'
  // `padded[0][:c, :h, :w].copy_(img)`): the tensor it wrote is a graph value now; any other
  // known view of the storage would read stale numbers, so reading it is refused.
  bool overwritten = false;
  std::string overwritten_by;  // the in-place op that wrote it (for the refusal's message)
  const std::vector<double>& values();
  std::vector<double>& mutable_values() {
    values();
    raw = nullptr;  // written: the raw bytes no longer describe it
    return vals;
  }
};

struct Known {
  std::shared_ptr<Storage> st;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

struct Obj;
struct Val;

// Tensors that share memory (a tensor and its views) share one Alias: an in-place write to any of
// them bumps its version, and a tensor whose version is behind it was overwritten under it.
struct Alias {
  int64_t version = 0;
  std::string writer;  // the last in-place op that wrote it (for the refusal's message)
  int64_t piece_writes = 0;  // in-place writes through one of its disjoint pieces (below)
};
using VRef = std::shared_ptr<Val>;

struct Val {
  enum class K : uint8_t { None, Bool, Int, Float, Str, Device, List, Tuple, Object, Tensor, Path };
  K k = K::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;  // Str, Device ("cpu"), Path ("torch", "ops.prim", ...)
  std::vector<VRef> items;  // List, Tuple
  std::vector<std::string> keys;  // a dict with string keys ({"out": x}, segmentation models' outputs): a Tuple of its values, keys[k] naming items[k]
  std::shared_ptr<Obj> obj;
  // Tensor: element type and shape always known; `known` when its elements are, `port` once it
  // is a value of the graph (an op's output, a graph input, or a known tensor made an initializer).
  ir::DType dtype = ir::DType::Float32;
  std::vector<int64_t> shape;
  bool defined = true;  // false: an undefined tensor (an unused output)
  bool shape_known = true;  // false: made by an op without a shape rule (dtype and shape unknown)
  std::shared_ptr<Known> known;
  ir::PortId port;
  std::shared_ptr<Alias> alias;  // symbolic tensors: the memory it shares with its views
  int64_t version = 0;
  // A disjoint piece of its alias (chunk / split / unbind): a write to one piece leaves the other
  // pieces valid (an LSTM cell's gates written in place one by one), but not the whole.
  std::shared_ptr<Alias> piece;
  int64_t piece_version = 0;
  int64_t seen_piece_writes = 0;  // not a piece: the alias's piece_writes when this was last valid
  bool folded_view = false;  // a known tensor a view op (select, slice, view, ...) folded: it shares memory with another known tensor
  std::weak_ptr<Val> view_root;  // a folded view: the known tensor the chain of views started from
  std::string name;  // a name for the graph value (an attribute path for parameters)
  // Symbolic dimensions (--input-shape N,...): shapes carry a stand-in number for the dimension
  // (Importer::kSymbolBase + k) so that shape rules run unchanged. An Int computed from one
  // (x.size(0), then arithmetic) keeps its run-time value in `dyn`, a 0-d int64 graph tensor;
  // such a 0-d tensor (prim::NumToTensor of it) keeps the stand-in number in `hint`.
  VRef dyn;
  // A Bool or Int computed from a tensor's values (bool(t), int(t), a loop's iteration number, a
  // number an if/loop on data gives): its run-time value is this 0-d bool / int64 graph tensor;
  // `b` and `i` mean nothing. A List with `data` is range() of such a count.
  VRef data;
  bool has_hint = false;
  int64_t hint = 0;

  bool is_tensor() const { return k == K::Tensor; }
  bool is_known_tensor() const { return k == K::Tensor && known; }
};

VRef make_none();
VRef make_bool(bool b);
VRef make_int(int64_t i);
VRef make_float(double f);
VRef make_str(std::string s, Val::K k = Val::K::Str);
VRef make_list(std::vector<VRef> items, Val::K k = Val::K::List);
// A known tensor over fresh contiguous doubles.
VRef make_known(ir::DType t, std::vector<int64_t> shape, std::vector<double> values);
VRef make_symbolic(ir::DType t, std::vector<int64_t> shape);

std::string kind_name(const Val& v);
std::string describe(const Val& v);

int64_t numel(const std::vector<int64_t>& shape);
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
// Every element of a known tensor in row-major order.
std::vector<double> elements(const Val& t);
// The known tensor as an Amanda tensor: borrowed from the archive when its bytes are the
// parameter's own, else converted.
ir::Tensor to_ir_tensor(const Val& t);
bool is_float_type(ir::DType t);
// A double as an int64; amanda::Error when it is NaN or out of range.
int64_t to_int64(double x, const std::string& where);
ir::DType dtype_from_scalar_type(int64_t code, const std::string& where);

// ---- per-op rules. Arguments come in the order of the op schema's inputs (defaults filled in,
// None where absent).
using Args = std::vector<VRef>;
// In an OutInfo's shape: a size known only at run time, from the input's values (the rows a mask
// selects, the boxes NMS keeps). The importer makes it a new symbolic dimension (dim_param `dyn<k>`).
constexpr int64_t kRunTimeDim = -(int64_t(1) << 40);
struct OutInfo {
  ir::DType dtype = ir::DType::Float32;
  std::vector<int64_t> shape;
  bool defined = true;
  bool shape_known = true;
};
// Shape and element type of the outputs of an op that becomes a graph op; nullopt when no rule.
std::optional<std::vector<OutInfo>> infer(const std::string& op_type, const Args& a, const std::string& where);
// aten ops on Python numbers (add, sub, mul, div, floordiv, remainder, pow, comparisons, neg,
// ...; `base` without overload: "aten::add"); nullopt when the arguments are not all numbers.
std::optional<VRef> scalar_op(const std::string& base, const Args& a, const std::string& where);
// Runs an op on known inputs (or returns a scalar from shapes: aten::size). nullopt when there is
// no kernel; the result's tensors are known.
std::optional<std::vector<VRef>> evaluate(const std::string& op_type, const Args& a, const std::string& where);

}  // namespace amanda::torchscript
