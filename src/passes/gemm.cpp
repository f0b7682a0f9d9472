// Gemm fusions: MatMul of 2-D operands followed by an Add of a bias that broadcasts to [M, N]
// becomes Gemm (onnxoptimizer's fuse_matmul_add_bias_into_gemm, onnxruntime's MatMulAddFusion), and
// a 2-D Transpose feeding a Gemm operand becomes its transA/transB (fuse_transpose_into_gemm).
#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

bool gemm_type(ir::DType t) {
  using D = ir::DType;
  return t == D::Float32 || t == D::Float64 || t == D::Float16 || t == D::BFloat16 || t == D::Int32 || t == D::Int64 ||
         t == D::UInt32 || t == D::UInt64;
}

std::optional<std::vector<int64_t>> dims(const ir::Graph& g, ir::PortId p) {
  if (const ir::Tensor* t = const_tensor(g, p)) return t->shape;
  return static_shape(g, p);
}

bool matmul_add(const Match& m, ir::Rewriter& rw, const Pat& mm_p) {
  ir::Graph& g = rw.graph();
  ir::OpId add = m.root, mm = m.op(g, mm_p);
  ir::PortId a = input_value(g, mm, 0), b = input_value(g, mm, 1), y = data_outputs(g, mm)[0];
  ir::PortId c = input_value(g, add, 0) == y ? input_value(g, add, 1) : input_value(g, add, 0);
  if (!a || !b || !c) return false;
  if (rank_of(g, a) != 2 || rank_of(g, b) != 2 || !gemm_type(elem_type(g, y))) return false;
  // the bias must broadcast (one way) to [M, N] and the Add's output must be [M, N]
  auto cs = dims(g, c);
  auto as = dims(g, a), bs = dims(g, b);
  if (!cs || !bs || cs->size() > 2) return false;
  int64_t n = (*bs)[1];
  std::vector<int64_t> c2(2 - cs->size(), 1);
  c2.insert(c2.end(), cs->begin(), cs->end());
  if (c2[1] != n && c2[1] != 1) return false;
  if (c2[0] != 1) {
    if (!as || (*as)[0] != c2[0]) return false;
  }
  rw.set_insertion_point_before(add);
  ir::OpId gemm = rw.create_op(g.sym("Gemm"), g.sym(std::string(g.name_str(mm)) + "/gemm"));
  ir::PortId ia = rw.add_input(gemm, "A"), ib = rw.add_input(gemm, "B"), ic = rw.add_input(gemm, "C");
  ir::PortId out = rw.add_output(gemm, "Y");
  name_value(rw, out, g.name_str(gemm));
  if (g.port_type(data_outputs(g, add)[0])) rw.set_port_type(out, g.port_type(data_outputs(g, add)[0]));
  rw.connect(a, ia);
  rw.connect(b, ib);
  rw.connect(c, ic);
  if (!replace_value(rw, data_outputs(g, add)[0], out)) return false;
  rw.erase_op(add);
  rw.erase_op(mm);
  return true;
}

bool transpose_gemm(const Match& m, ir::Rewriter& rw) {
  ir::Graph& g = rw.graph();
  ir::OpId gemm = m.root;
  bool changed = false;
  for (size_t i = 0; i < 2; ++i) {
    ir::PortId v = input_value(g, gemm, i);
    if (!v || g.port_dir(v) != ir::PortDir::Out || is_scope_value(g, v)) continue;
    ir::OpId t = g.port_op(v);
    if (g.type_str(t) != "Transpose" || !single_use(g, v) || feeds_scope_output(g, v)) continue;
    auto perm = attr_ints(g, t, "perm");
    ir::PortId x = input_value(g, t, 0);
    if (!x || (perm && *perm != std::vector<int64_t>{1, 0}) || (!perm && rank_of(g, x) != 2)) continue;
    const char* key = i == 0 ? "transA" : "transB";
    rw.set_attr(gemm, key, ir::Value(int64_t(1 - attr_int(g, gemm, key, 0))));
    set_input(rw, gemm, i, x, i == 0 ? "A" : "B");
    rw.erase_op(t);
    changed = true;
  }
  return changed;
}

PassResult fuse_matmul_add_bias_into_gemm(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  Pat mm = op("MatMul").in(any()).in(any()).uses(1).not_scope_output();
  for (int side = 0; side < 2; ++side) {
    Pat add = op("Add");
    if (side == 0) add.in(mm).in(any());
    else add.in(any()).in(mm);
    replace_everywhere(g, o, add, [&](const Match& m, ir::Rewriter& rw) { return matmul_add(m, rw, mm); }, r,
                       "fuse_matmul_add_bias_into_gemm");
  }
  return r;
}

PassResult fuse_transpose_into_gemm(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  Pat gemm = op("Gemm");
  replace_everywhere(g, o, gemm, transpose_gemm, r, "fuse_transpose_into_gemm");
  return r;
}

}  // namespace

void register_gemm(PassRegistry& r) {
  r.add({"fuse_matmul_add_bias_into_gemm", "MatMul of 2-D operands + Add of a bias that broadcasts to [M, N] -> Gemm",
         fuse_matmul_add_bias_into_gemm, true, true});
  r.add({"fuse_transpose_into_gemm", "a 2-D Transpose feeding Gemm's A or B -> transA / transB", fuse_transpose_into_gemm, true, true});
}

}  // namespace amanda::passes::detail
