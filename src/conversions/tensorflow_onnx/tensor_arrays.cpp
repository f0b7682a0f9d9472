// TF1's TensorArrayV3 loops, rewritten into the TensorList forms the TF1 loop lowering converts
// (src/frameworks/tensorflow/tf1_loops.cpp; docs/tensorflow.md, "TF1 while loops"), before the
// boundary runs. tf.while_loop over a TensorArray writes, per array:
//
//   input:  ta = TensorArrayV3(n); sc = TensorArrayScatterV3(ta:0, Range(0, .., 1), x, ta:1);
//           in the loop TensorArrayReadV3(Enter(ta:0), i, Enter(sc))      -> GatherV2(x, i, 0)
//   output: ta = TensorArrayV3(n) whose flow ta:1 is a loop variable;
//           in the loop TensorArrayWriteV3(Enter(ta:0), i, v, flow)       -> TensorListSetItem(flow, i, v)
//           after it TensorArrayGatherV3(ta:0, Range(0, TensorArraySizeV3(ta:0, exit), 1), exit)
//                                                                          -> TensorListStack(exit)
//           and ta:1 itself                                               -> TensorListReserve(shape, n)
//
// the flow variable's Enter/Merge/Switch/Identity/NextIteration/Exit becoming `variant`. Anything
// else (a read of a written array, a gather of other indices, a dynamic size, ...) is left as it
// is, and the tables refuse the TensorArray ops by name.
#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "amanda/ir/graph.h"
#include "tensor_arrays.h"

namespace amanda::conversions {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

class Rewrite {
 public:
  explicit Rewrite(ir::Graph& g) : g_(g), root_(g.root()) {}

  size_t run() {
    size_t n = 0;
    for (OpId ta : g_.ops_of_type("TensorArrayV3")) {
      if (!g_.valid(ta) || g_.parent(ta) != root_ || data_outputs(ta).size() != 2) continue;
      if (input_array(ta) || output_array(ta)) ++n;
    }
    if (n) sweep();
    return n;
  }

 private:
  ir::Graph& g_;
  OpId root_;

  std::string_view type(OpId op) const { return g_.type_str(op); }
  std::vector<PortId> data_outputs(OpId op) const {
    std::vector<PortId> r;
    for (PortId p : g_.outputs(op))
      if (!g_.is_control(p)) r.push_back(p);
    return r;
  }
  std::vector<PortId> data_inputs(OpId op) const {
    std::vector<PortId> r;
    for (PortId p : g_.inputs(op))
      if (!g_.is_control(p)) r.push_back(p);
    return r;
  }
  PortId in(OpId op, size_t k) const {
    auto ins = data_inputs(op);
    return k < ins.size() ? g_.producer(ins[k]) : PortId();
  }
  OpId op_of(PortId p) const { return p ? g_.port_op(p) : OpId(); }
  // The consumers of `out`, through constant Enters (and only those).
  std::vector<PortId> uses(PortId out) const {
    std::vector<PortId> r;
    for (PortId c : g_.consumers(out)) {
      OpId o = g_.port_op(c);
      if (type(o) == "Enter" && attr_bool(o, "is_constant")) {
        for (PortId c2 : uses(data_outputs(o)[0])) r.push_back(c2);
      } else {
        r.push_back(c);
      }
    }
    return r;
  }
  bool attr_bool(OpId op, const char* k) const {
    const Value* v = g_.attr(op, g_.sym(k));
    return v && v->is_bool() && v->as_bool();
  }
  std::string attr_str(OpId op, const char* k) const {
    const Value* v = g_.attr(op, g_.sym(k));
    return v && v->is_string() ? v->as_string() : std::string();
  }
  bool const_int(PortId p, int64_t want) const {
    OpId c = op_of(p);
    if (!c || type(c) != "Const") return false;
    const Value* v = g_.attr(c, g_.sym("value"));
    if (!v || !v->is_tensor() || v->as_tensor().element_count().value_or(0) != 1) return false;
    const ir::Tensor& t = v->as_tensor();
    if (t.dtype == ir::DType::Int32) {
      int32_t x;
      std::memcpy(&x, t.data, 4);
      return x == want;
    }
    if (t.dtype == ir::DType::Int64) {
      int64_t x;
      std::memcpy(&x, t.data, 8);
      return x == want;
    }
    return false;
  }
  // Range(0, limit, 1); `limit_ok` checks the limit.
  template <class F>
  bool is_full_range(PortId p, F limit_ok) const {
    OpId r = op_of(p);
    return r && type(r) == "Range" && data_inputs(r).size() == 3 && const_int(in(r, 0), 0) && const_int(in(r, 2), 1) &&
           limit_ok(in(r, 1));
  }
  OpId make(std::string_view t, const std::string& name, std::initializer_list<std::pair<const char*, PortId>> ins,
            std::initializer_list<const char*> outs) {
    OpId op = g_.create_op(root_, g_.sym(t), g_.sym(name));
    for (auto [n, src] : ins) g_.connect(src, g_.add_input(op, g_.sym(n)));
    for (const char* n : outs) g_.add_output(op, g_.sym(n));
    return op;
  }
  PortId int_const(const std::string& name, std::vector<int32_t> values, bool scalar) {
    OpId c = g_.create_op(root_, g_.sym("Const"), g_.sym(name));
    std::string bytes(values.size() * 4, '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    std::vector<int64_t> shape;
    if (!scalar) shape.push_back(static_cast<int64_t>(values.size()));
    g_.set_attr(c, g_.sym("dtype"), Value(std::string("int32")));
    g_.set_attr(c, g_.sym("value"), Value(ir::Tensor::from_bytes(ir::DType::Int32, shape, std::move(bytes))));
    return g_.add_output(c, g_.sym("output"));
  }
  // The element shape as a Const (-1 for unknown dims; a scalar -1 for an unknown rank).
  PortId element_shape(OpId ta) {
    std::vector<int32_t> dims;
    const Value* s = g_.attr(ta, g_.sym("element_shape"));
    bool known = s && s->is_list();
    if (known)
      for (const Value& d : s->as_list()) dims.push_back(d.is_int() && d.as_int() >= 0 ? static_cast<int32_t>(d.as_int()) : -1);
    return known ? int_const(std::string(g_.name_str(ta)) + "/element_shape", dims, false)
                 : int_const(std::string(g_.name_str(ta)) + "/element_shape", {-1}, true);
  }

  bool input_array(OpId ta) {
    auto outs = data_outputs(ta);
    auto flow_uses = g_.consumers(outs[1]);
    if (flow_uses.size() != 1) return false;
    OpId sc = g_.port_op(flow_uses[0]);
    if (type(sc) != "TensorArrayScatterV3" || data_inputs(sc).size() != 4 || in(sc, 0) != outs[0]) return false;
    PortId x = in(sc, 2);
    if (!x || !is_full_range(in(sc, 1), [](PortId) { return true; })) return false;
    std::vector<OpId> reads;
    for (PortId c : uses(data_outputs(sc)[0])) {
      OpId r = g_.port_op(c);
      if (type(r) != "TensorArrayReadV3" || data_inputs(r).size() != 3 || g_.port_index(c) != 2) return false;
      reads.push_back(r);
    }
    for (PortId c : uses(outs[0])) {
      OpId o = g_.port_op(c);
      if (o != sc && std::find(reads.begin(), reads.end(), o) == reads.end()) return false;
    }
    for (OpId r : reads) {
      std::string name(g_.name_str(r));
      PortId axis = int_const(name + "/axis", {0}, true);
      OpId gather = make("GatherV2", name + "/gather", {{"params", x}, {"indices", in(r, 1)}, {"axis", axis}}, {"output"});
      g_.set_attr(gather, g_.sym("Tparams"), Value(attr_str(r, "dtype")));
      g_.set_attr(gather, g_.sym("Tindices"), Value(std::string("int32")));
      g_.set_attr(gather, g_.sym("Taxis"), Value(std::string("int32")));
      g_.set_attr(gather, g_.sym("batch_dims"), Value(int64_t(0)));
      g_.replace_all_uses(data_outputs(r)[0], data_outputs(gather)[0]);
      erase(r);
    }
    return true;
  }

  bool output_array(OpId ta) {
    auto outs = data_outputs(ta);
    auto flow_uses = g_.consumers(outs[1]);
    if (flow_uses.size() != 1) return false;
    OpId enter = g_.port_op(flow_uses[0]);
    if (type(enter) != "Enter" || attr_bool(enter, "is_constant")) return false;
    // The loop variable's ops: Enter -> Merge -> Switch -> (Identity ->) writes -> NextIteration; Exit.
    auto m_uses = g_.consumers(data_outputs(enter)[0]);
    if (m_uses.size() != 1 || type(g_.port_op(m_uses[0])) != "Merge") return false;
    OpId merge = g_.port_op(m_uses[0]);
    OpId sw, exit, next;
    for (PortId c : g_.consumers(data_outputs(merge)[0]))
      if (type(g_.port_op(c)) == "Switch") sw = g_.port_op(c);
    if (!sw) return false;
    std::vector<OpId> ids, writes;
    for (PortId p : data_outputs(sw))
      for (PortId c : g_.consumers(p)) {
        OpId o = g_.port_op(c);
        if (type(o) == "Exit") exit = o;
        else if (type(o) == "Identity") ids.push_back(o);
        else return false;
      }
    if (!exit || ids.size() != 1) return false;
    for (PortId c : g_.consumers(data_outputs(ids[0])[0])) {
      OpId w = g_.port_op(c);
      if (type(w) != "TensorArrayWriteV3" || g_.port_index(c) != 3) return false;
      writes.push_back(w);
    }
    if (writes.size() != 1) return false;
    OpId w = writes[0];
    for (PortId c : g_.consumers(data_outputs(w)[0]))
      if (type(g_.port_op(c)) == "NextIteration") next = g_.port_op(c);
    if (!next || g_.consumers(data_outputs(w)[0]).size() != 1) return false;
    // After the loop: one gather of every element.
    PortId size_in = in(ta, 0);
    std::vector<OpId> gathers;
    for (PortId c : g_.consumers(data_outputs(exit)[0])) {
      OpId o = g_.port_op(c);
      if (type(o) == "TensorArraySizeV3") continue;
      if (type(o) != "TensorArrayGatherV3" || in(o, 0) != outs[0]) return false;
      PortId ex = data_outputs(exit)[0];
      if (!is_full_range(in(o, 1), [&](PortId lim) {
            OpId s = op_of(lim);
            return lim == size_in || (s && type(s) == "TensorArraySizeV3" && in(s, 0) == outs[0] && in(s, 1) == ex);
          }))
        return false;
      gathers.push_back(o);
    }
    for (PortId c : uses(outs[0])) {
      OpId o = g_.port_op(c);
      if (o != w && std::find(gathers.begin(), gathers.end(), o) == gathers.end() && type(o) != "TensorArraySizeV3") return false;
    }
    std::string dtype = attr_str(ta, "dtype");
    std::string name(g_.name_str(ta));
    OpId reserve = make("TensorListReserve", name + "/reserve", {{"element_shape", element_shape(ta)}, {"num_elements", size_in}}, {"handle"});
    g_.set_attr(reserve, g_.sym("element_dtype"), Value(dtype));
    g_.set_attr(reserve, g_.sym("shape_type"), Value(std::string("int32")));
    g_.replace_all_uses(outs[1], data_outputs(reserve)[0]);
    for (OpId o : {enter, merge, sw, ids[0], next, exit}) g_.set_attr(o, g_.sym("T"), Value(std::string("variant")));
    std::string wn(g_.name_str(w));
    OpId set = make("TensorListSetItem", wn + "/set_item", {{"input_handle", in(w, 3)}, {"index", in(w, 1)}, {"item", in(w, 2)}},
                    {"output_handle"});
    g_.set_attr(set, g_.sym("element_dtype"), Value(dtype));
    g_.replace_all_uses(data_outputs(w)[0], data_outputs(set)[0]);
    erase(w);
    for (OpId gth : gathers) {
      std::string gn(g_.name_str(gth));
      OpId stack = make("TensorListStack", gn + "/stack", {{"input_handle", data_outputs(exit)[0]}, {"element_shape", element_shape(ta)}},
                        {"tensor"});
      g_.set_attr(stack, g_.sym("element_dtype"), Value(dtype));
      g_.set_attr(stack, g_.sym("num_elements"), Value(int64_t(-1)));
      g_.replace_all_uses(data_outputs(gth)[0], data_outputs(stack)[0]);
      erase(gth);
    }
    return true;
  }

  void erase(OpId op) {
    for (PortId in : data_inputs(op))
      if (PortId s = g_.producer(in)) touched_.insert(g_.port_op(s).value);
    g_.erase_op(op);
  }
  // Ops nothing reads any more (the arrays, their scatters and sizes, the handles' Enters, the
  // Ranges of the gathers).
  void sweep() {
    static const std::set<std::string_view> kDead = {"TensorArrayV3", "TensorArrayScatterV3", "TensorArraySizeV3", "Enter", "Range", "Const"};
    for (bool again = true; again;) {
      again = false;
      for (OpId op = g_.first_child(root_), next; op; op = next) {
        next = g_.next_sibling(op);
        if (!kDead.contains(type(op))) continue;
        bool read = false;
        for (PortId p : g_.outputs(op))
          if (!g_.consumers(p).empty()) read = true;
        if (read || (type(op) == "Enter" && !attr_bool(op, "is_constant"))) continue;
        if (type(op) == "Const" || type(op) == "Range") {
          // only what the rewrite left behind: a Const or Range that fed an array op
          if (!touched_.contains(op.value)) continue;
        }
        erase(op);
        again = true;
      }
    }
  }
  std::set<uint32_t> touched_;
};

}  // namespace

size_t rewrite_tensor_arrays(ir::Graph& g) { return Rewrite(g).run(); }

}  // namespace amanda::conversions
