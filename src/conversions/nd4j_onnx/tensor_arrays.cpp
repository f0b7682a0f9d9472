// SameDiff graphs imported from TF1 keep its TensorArrays as nd4j ops: `tensorarrayv3(size)` gives
// a handle (output 0) and a flow (output 1); `tensorarraywritev3(handle, index, value, flow)`,
// `tensorarraysplitv3(handle, value, lengths, flow)` and `tensorarrayscatterv3(handle, indices,
// value, flow)` fill it and give the next flow; `tensorarrayreadv3(handle, index, flow)` reads the
// element at `index` as of that flow. ONNX has sequences, but an array that no loop touches, filled
// at indices known when converting, needs none: each read is the element itself.
//
// Walking the flow from the array, in order, this keeps what each index holds:
//   write at a constant index i        element i = the value
//   split with constant lengths l      element i = value[sum(l[:i]) : sum(l[:i+1])] on axis 0 (Slice)
//   scatter at Range(0, n, 1)          element i = value[i] on axis 0 (Gather; n may be computed)
// and each read at a constant index (at any index after a scatter at Range(0, n, 1)) becomes that
// element. The ops made are ONNX's (`onnx::Slice`, `onnx::Gather`, `onnx::Identity`: the root
// imports `onnx`, the table keeps them, the extension's finish drops the prefix). An array whose
// flow goes anywhere else (an `enter`: a loop; a gather, a size, a dynamic index) is left as it is,
// and the table refuses its ops by name.
#include "conversions/nd4j_onnx/tensor_arrays.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "amanda/ir/conventions.h"

namespace amanda::conversions {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

class Arrays {
 public:
  explicit Arrays(ir::Graph& g) : g_(g), root_(g.root()) {}

  size_t run() {
    size_t n = 0;
    for (OpId ta : g_.ops_of_type("tensorarrayv3"))
      if (g_.valid(ta) && g_.parent(ta) == root_ && data_outputs(ta).size() == 2 && rewrite(ta)) ++n;
    if (n) sweep();
    return n;
  }

 private:
  ir::Graph& g_;
  OpId root_;
  std::set<uint32_t> touched_;  // producers of erased ops: erased too when nothing reads them any more

  std::string_view type(OpId op) const { return g_.type_str(op); }
  std::vector<PortId> data_outputs(OpId op) const {
    std::vector<PortId> r;
    for (PortId p : g_.outputs(op))
      if (!g_.is_control(p)) r.push_back(p);
    return r;
  }
  PortId in(OpId op, size_t k) const {
    std::vector<PortId> ins;
    for (PortId p : g_.inputs(op))
      if (!g_.is_control(p)) ins.push_back(p);
    return k < ins.size() ? g_.producer(ins[k]) : PortId();
  }
  size_t data_input_count(OpId op) const {
    size_t n = 0;
    for (PortId p : g_.inputs(op)) n += !g_.is_control(p);
    return n;
  }
  // The integers a constant holds (a graph input's initializer, through nd4j `cast`s).
  std::optional<std::vector<int64_t>> ints(PortId p) const {
    for (int depth = 0; p && depth < 8; ++depth) {
      OpId op = g_.port_op(p);
      if (!g_.is_graph(op) && type(op) == "cast" && data_input_count(op) == 1) {
        p = in(op, 0);
        continue;
      }
      const Value* v = ir::constant_tensor(g_, p);
      if (!v || !v->is_tensor()) return std::nullopt;
      const ir::Tensor& t = v->as_tensor();
      auto n = t.element_count();
      if (!n || *n > 4096) return std::nullopt;
      std::vector<int64_t> r;
      for (uint64_t i = 0; i < *n; ++i) {
        if (t.dtype == ir::DType::Int32 && t.size >= (i + 1) * 4) {
          int32_t x;
          std::memcpy(&x, t.data + i * 4, 4);
          r.push_back(x);
        } else if (t.dtype == ir::DType::Int64 && t.size >= (i + 1) * 8) {
          int64_t x;
          std::memcpy(&x, t.data + i * 8, 8);
          r.push_back(x);
        } else {
          return std::nullopt;
        }
      }
      return r;
    }
    return std::nullopt;
  }
  std::optional<int64_t> scalar(PortId p) const {
    auto v = ints(p);
    return v && v->size() == 1 ? std::optional<int64_t>((*v)[0]) : std::nullopt;
  }
  // range(0, n, 1)
  bool is_full_range(PortId p) const {
    OpId r = p ? g_.port_op(p) : OpId();
    return r && !g_.is_graph(r) && type(r) == "range" && data_input_count(r) == 3 && scalar(in(r, 0)) == 0 &&
           scalar(in(r, 2)) == 1;
  }

  // What an index of the array holds.
  struct Element {
    enum Kind { Value_, Slice, Gather } kind = Value_;
    PortId value;
    int64_t start = 0, end = 0;  // Slice
  };

  bool rewrite(OpId ta) {
    PortId handle = data_outputs(ta)[0], flow = data_outputs(ta)[1];
    std::map<int64_t, Element> elems;
    PortId gathered;  // a scatter at range(0, n, 1): every index reads value[i]
    std::vector<std::pair<OpId, Element>> reads;
    std::set<uint32_t> ops_of_array{ta.value};
    // Every user of the handle must be an op of the flow chain.
    for (PortId c : g_.consumers(handle)) ops_of_array.insert(g_.port_op(c).value);
    std::vector<OpId> chain;
    for (size_t steps = 0; flow; ++steps) {
      if (steps > g_.op_count()) return false;
      PortId next;
      for (PortId c : g_.consumers(flow)) {
        OpId op = g_.port_op(c);
        if (g_.is_graph(op) || in(op, 0) != handle) return false;
        std::string_view t = type(op);
        if (t == "tensorarrayreadv3" && data_input_count(op) == 3 && g_.port_index(c) == 2 && !data_outputs(op).empty()) {
          auto i = scalar(in(op, 1));
          if (i && elems.contains(*i)) {
            reads.push_back({op, elems[*i]});
          } else if (gathered) {
            Element e;
            e.kind = Element::Gather;
            e.value = gathered;
            reads.push_back({op, e});
          } else {
            return false;
          }
          chain.push_back(op);
          continue;
        }
        if (next) return false;  // two writers of one flow
        if (t == "tensorarraywritev3" && data_input_count(op) == 4 && g_.port_index(c) == 3) {
          auto i = scalar(in(op, 1));
          if (!i) return false;
          elems[*i] = Element{Element::Value_, in(op, 2)};
        } else if (t == "tensorarraysplitv3" && data_input_count(op) == 4 && g_.port_index(c) == 3) {
          auto l = ints(in(op, 2));
          if (!l) return false;
          int64_t at = 0;
          for (size_t i = 0; i < l->size(); ++i) {
            if ((*l)[i] < 0 || (*l)[i] > (int64_t(1) << 40) || at > (int64_t(1) << 40)) return false;
            elems[int64_t(i)] = Element{Element::Slice, in(op, 1), at, at + (*l)[i]};
            at += (*l)[i];
          }
          gathered = PortId();
        } else if (t == "tensorarrayscatterv3" && data_input_count(op) == 4 && g_.port_index(c) == 3) {
          if (!is_full_range(in(op, 1))) return false;
          elems.clear();
          gathered = in(op, 2);
        } else {
          return false;
        }
        chain.push_back(op);
        auto outs = data_outputs(op);
        if (outs.empty()) return false;
        next = outs[0];
      }
      flow = next;
    }
    for (OpId op : chain)
      if (!ops_of_array.contains(op.value)) return false;
    if (ops_of_array.size() != chain.size() + 1) return false;  // the handle goes elsewhere too
    for (auto& [read, e] : reads) replace_read(read, e);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      if (g_.valid(*it)) erase(*it);
    erase(ta);
    return true;
  }

  PortId int64_const(const std::string& base, std::vector<int64_t> v) {
    std::string name = base;
    for (int k = 1; g_.find_input(root_, g_.sym(name)); ++k) name = fmt::format("{}_{}", base, k);
    std::string bytes(v.size() * 8, '\0');
    std::memcpy(bytes.data(), v.data(), bytes.size());
    ir::Tensor t = ir::Tensor::from_bytes(ir::DType::Int64, {int64_t(v.size())}, std::move(bytes));
    PortId p = g_.add_input(root_, g_.sym(name));
    g_.set_attr(p, g_.sym("initializer"), Value(t));
    g_.set_attr(p, g_.sym("@value"), Value(name));
    g_.set_port_role(p, ir::PortRole::Initializer);
    std::vector<ir::Dim> dims{ir::Dim::known(int64_t(v.size()))};
    g_.set_port_type(p, g_.types().tensor(ir::DType::Int64, dims));
    return p;
  }

  void replace_read(OpId read, const Element& e) {
    std::string name(g_.name_str(read));
    PortId out = data_outputs(read)[0];
    const Value* value_name = g_.attr(out, g_.sym("@value"));
    std::string made_name = name + "/element";
    for (int k = 1; g_.find_op(root_, made_name); ++k) made_name = fmt::format("{}/element_{}", name, k);
    OpId op;
    if (e.kind == Element::Value_) {
      op = g_.create_op(root_, g_.sym("onnx::Identity"), g_.sym(made_name));
      g_.connect(e.value, g_.add_input(op, g_.sym("input")));
    } else if (e.kind == Element::Slice) {
      op = g_.create_op(root_, g_.sym("onnx::Slice"), g_.sym(made_name));
      g_.connect(e.value, g_.add_input(op, g_.sym("data")));
      g_.connect(int64_const(name + "/starts", {e.start}), g_.add_input(op, g_.sym("starts")));
      g_.connect(int64_const(name + "/ends", {e.end}), g_.add_input(op, g_.sym("ends")));
      g_.connect(int64_const(name + "/axes", {0}), g_.add_input(op, g_.sym("axes")));
    } else {
      op = g_.create_op(root_, g_.sym("onnx::Gather"), g_.sym(made_name));
      g_.connect(e.value, g_.add_input(op, g_.sym("data")));
      g_.connect(in(read, 1), g_.add_input(op, g_.sym("indices")));
      g_.set_attr(op, g_.sym("axis"), Value(int64_t(0)));
    }
    PortId o = g_.add_output(op, g_.sym("output"));
    if (value_name) g_.set_attr(o, g_.sym("@value"), *value_name);
    if (g_.port_type(out)) g_.set_port_type(o, g_.port_type(out));
    g_.replace_all_uses(out, o);
    g_.move_before(op, read);
  }

  void erase(OpId op) {
    for (PortId p : g_.inputs(op))
      if (PortId s = g_.producer(p); s && !g_.is_graph(g_.port_op(s))) touched_.insert(g_.port_op(s).value);
    g_.erase_op(op);
  }
  // The ops only the arrays read (a scatter's range and what computed its bound, a split's cast).
  void sweep() {
    for (bool again = true; again;) {
      again = false;
      for (uint32_t id : std::set<uint32_t>(touched_)) {
        OpId op(id);
        if (!g_.valid(op)) continue;
        bool read = false;
        for (PortId p : g_.outputs(op)) read |= !g_.consumers(p).empty();
        if (read) continue;
        touched_.erase(id);
        erase(op);
        again = true;
      }
    }
  }
};

}  // namespace

size_t rewrite_static_tensor_arrays(ir::Graph& g) { return Arrays(g).run(); }

}  // namespace amanda::conversions
