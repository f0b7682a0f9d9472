#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/conventions.h"
#include "lowering.h"

namespace amanda::onnx_frontend::lowering {

// NonMaxSuppression (new in 10) below 10: onnxruntime's greedy selection as one Loop over every
// (batch, class, k) in order, k the k-th box by score (higher first, the lower index among equal
// scores: its rank is the count of boxes before it, the order the inverse of the ranks). Whether a
// box suppresses another is computed beforehand for every pair of boxes of a batch, as onnxruntime's
// SuppressByIOU does (the intersection and both areas positive, IoU > iou_threshold). The loop
// carries the boxes selected in the current (batch, class) as a 0/1 vector, their count and the
// output rows: a box is kept when its score is above score_threshold (when given), fewer than
// max_output_boxes_per_class are kept, and no kept box suppresses it; an If appends its row.
std::string lower_nms(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                      const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  if (ins.size() < 2) return "boxes and scores";
  for (int k = 0; k < 2; ++k)
    if (!types[k].has_tensor_type() || types[k].tensor_type().elem_type() != onnx::TensorProto::FLOAT)
      return "float boxes and scores";
  const ir::Value* cv = ir::get_attr(g, op, "center_point_box");
  bool center = cv && cv->is_int() && cv->as_int() != 0;
  auto present = [&](size_t k) { return k < ins.size() && g.producer(ins[k]); };
  BodyBuilder b{body, kExpansionNames};
  auto last = [&](onnx::GraphProto& gp) -> onnx::NodeProto& { return *gp.mutable_node(gp.node_size() - 1); };
  auto fconst = [](BodyBuilder& e, float v) { return e.constant(e.fresh("f"), onnx::TensorProto::FLOAT, {}, {v}); };
  std::string boxes = kIn + "0", scores = kIn + "1";
  // Corners of every box: [B, N] each.
  std::vector<std::string> comp;
  for (int64_t k = 0; k < 4; ++k) comp.push_back(b.gather(boxes, b.constant_i64({k}, false), 2));
  std::string xmin, xmax, ymin, ymax;
  if (!center) {
    xmin = b.op("Min", {comp[1], comp[3]});
    xmax = b.op("Max", {comp[1], comp[3]});
    ymin = b.op("Min", {comp[0], comp[2]});
    ymax = b.op("Max", {comp[0], comp[2]});
  } else {
    std::string two = fconst(b, 2.0f);
    std::string wh = b.op("Div", {comp[2], two}), hh = b.op("Div", {comp[3], two});
    xmin = b.op("Sub", {comp[0], wh});
    xmax = b.op("Add", {comp[0], wh});
    ymin = b.op("Sub", {comp[1], hh});
    ymax = b.op("Add", {comp[1], hh});
  }
  auto pair = [&](const std::string& v, bool first) { return b.unsqueeze(v, first ? 2 : 1); };  // [B, N, 1] / [B, 1, N]
  std::string ixmin = b.op("Max", {pair(xmin, true), pair(xmin, false)});
  std::string ixmax = b.op("Min", {pair(xmax, true), pair(xmax, false)});
  std::string iymin = b.op("Max", {pair(ymin, true), pair(ymin, false)});
  std::string iymax = b.op("Min", {pair(ymax, true), pair(ymax, false)});
  std::string zero = fconst(b, 0.0f);
  std::string okx = b.op("Greater", {ixmax, ixmin}), oky = b.op("Greater", {iymax, iymin});
  std::string inter = b.op("Mul", {b.op("Sub", {ixmax, ixmin}), b.op("Sub", {iymax, iymin})});
  std::string area = b.op("Mul", {b.op("Sub", {xmax, xmin}), b.op("Sub", {ymax, ymin})});  // [B, N]
  std::string a1 = pair(area, true), a2 = pair(area, false);
  std::string uni = b.op("Sub", {b.op("Add", {a1, a2}), inter});
  std::string valid = b.op("And", {okx, oky});
  valid = b.op("And", {valid, b.op("Greater", {inter, zero})});
  valid = b.op("And", {valid, b.op("Greater", {a1, zero})});
  valid = b.op("And", {valid, b.op("Greater", {a2, zero})});
  valid = b.op("And", {valid, b.op("Greater", {uni, zero})});
  std::string iou = b.op("Div", {inter, uni});
  std::string thr = present(3) ? b.reshape(kIn + "3", {}) : zero;
  std::string sup = b.op("And", {valid, b.op("Greater", {iou, thr})});
  std::string supf = b.cast(sup, onnx::TensorProto::FLOAT);  // [B, N, N]
  std::string shp = b.op("Shape", {scores});  // [B, C, N]
  std::string nlen = b.op("Slice", {shp, b.constant_i64({2}), b.constant_i64({3})});
  std::string clen = b.op("Slice", {shp, b.constant_i64({1}), b.constant_i64({2})});
  std::string rows_shape = b.op("Concat", {b.constant_i64({-1}), nlen});
  BodyBuilder::one_int(last(body), "axis", 0);
  std::string sup_rows = b.op("Reshape", {supf, rows_shape});  // [B * N, N]
  // Ranks: box j before box i when s_j > s_i, or equal and j < i.
  std::string ones = b.op("ConstantOfShape", {nlen});
  {
    auto* a = last(body).add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(1);
  }
  std::string iota = b.reshape(b.op("NonZero", {ones}), {-1});  // [N] int64
  std::string iotaf = b.cast(iota, onnx::TensorProto::FLOAT);
  std::string si = b.unsqueeze(scores, 3), sj = b.unsqueeze(scores, 2);  // [B, C, N, 1] (i), [B, C, 1, N] (j)
  std::string higher = b.op("Greater", {sj, si});
  std::string tie = b.op("And", {b.op("Not", {b.op("Greater", {si, sj})}), b.op("Not", {higher})});
  std::string lower_idx = b.op("Less", {b.unsqueeze(iotaf, 0), b.unsqueeze(iotaf, 1)});  // [i, j]: j < i
  std::string before = b.op("Or", {higher, b.op("And", {tie, lower_idx})});
  std::string rank = b.op("ReduceSum", {b.cast(before, onnx::TensorProto::FLOAT)});  // [B, C, N]
  BodyBuilder::ints(last(body), "axes", {3});
  BodyBuilder::one_int(last(body), "keepdims", 0);
  std::string at = b.op("Equal", {b.cast(b.unsqueeze(rank, 2), onnx::TensorProto::INT64), b.unsqueeze(iota, 1)});  // [B, C, q, i]
  std::string order = b.op("ArgMax", {b.cast(at, onnx::TensorProto::FLOAT)});  // [B, C, q]
  BodyBuilder::one_int(last(body), "axis", 3);
  BodyBuilder::one_int(last(body), "keepdims", 0);
  std::string order_flat = b.reshape(order, {-1});
  std::string scores_flat = b.reshape(scores, {-1});
  std::string nscal = b.reshape(nlen, {}), cscal = b.reshape(clen, {});
  std::string total = b.op("Size", {scores});
  // (compared as floats: Less takes floats only before 9)
  std::string maxo = b.cast(present(2) ? b.reshape(kIn + "2", {}) : b.constant_i64({0}, false), onnx::TensorProto::FLOAT);
  std::string sthr = present(4) ? b.reshape(kIn + "4", {}) : "";
  std::string yes = b.constant(b.fresh("true"), onnx::TensorProto::BOOL, {}, {1});
  std::string empty = b.constant(b.fresh("empty"), onnx::TensorProto::INT64, {0, 3}, {});
  std::string sel0 = b.op("Mul", {iotaf, zero});  // [N] zeros
  std::string cnt0 = b.constant_i64({0}, false);
  auto* loop = body.add_node();
  loop->set_op_type("Loop");
  loop->add_input(total);
  loop->add_input(yes);
  loop->add_input(sel0);
  loop->add_input(cnt0);
  loop->add_input(empty);
  loop->add_output(b.fresh("sel_final"));
  loop->add_output(b.fresh("cnt_final"));
  loop->add_output(kOut + "0");
  auto* la = loop->add_attribute();
  la->set_name("body");
  la->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& lb = *la->mutable_g();
  lb.set_name(b.fresh("nms_loop"));
  BodyBuilder e{lb, kExpansionNames, 5000};
  auto vinfo = [](onnx::ValueInfoProto* vi, const std::string& name, int type, int rank) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* sh = tt->mutable_shape();
    for (int k = 0; k < rank; ++k) sh->add_dim();
  };
  std::string t = e.fresh("t"), cin = e.fresh("cond"), sel = e.fresh("sel"), cnt = e.fresh("cnt"), rows = e.fresh("rows");
  vinfo(lb.add_input(), t, onnx::TensorProto::INT64, 0);
  vinfo(lb.add_input(), cin, onnx::TensorProto::BOOL, 0);
  vinfo(lb.add_input(), sel, onnx::TensorProto::FLOAT, 1);
  vinfo(lb.add_input(), cnt, onnx::TensorProto::INT64, 0);
  vinfo(lb.add_input(), rows, onnx::TensorProto::INT64, 2);
  std::string cout = e.op("Identity", {cin});
  std::string bc = e.op("Div", {t, nscal});   // b * C + c
  std::string kq = e.op("Sub", {t, e.op("Mul", {bc, nscal})});
  std::string bb = e.op("Div", {bc, cscal});
  std::string cc = e.op("Sub", {bc, e.op("Mul", {bb, cscal})});
  std::string i = e.gather(order_flat, t, 0);
  std::string score = e.gather(scores_flat, e.op("Add", {e.op("Sub", {t, kq}), i}), 0);
  std::string fresh_set = e.op("Equal", {kq, e.constant_i64({0}, false)});
  std::string keepf = e.cast(e.op("Not", {fresh_set}), onnx::TensorProto::FLOAT);
  std::string keepi = e.cast(e.op("Not", {fresh_set}), onnx::TensorProto::INT64);
  std::string sel_now = e.op("Mul", {sel, keepf});
  std::string cnt_now = e.op("Mul", {cnt, keepi});
  std::string srow = e.gather(sup_rows, e.op("Add", {e.op("Mul", {bb, nscal}), i}), 0);  // [N]
  std::string hit = e.op("ReduceMax", {e.op("Mul", {sel_now, srow})});
  BodyBuilder::one_int(last(lb), "keepdims", 0);
  std::string half = fconst(e, 0.5f);
  std::string ok = e.op("Not", {e.op("Greater", {hit, half})});
  ok = e.op("And", {ok, e.op("Less", {e.cast(cnt_now, onnx::TensorProto::FLOAT), maxo})});
  if (!sthr.empty()) ok = e.op("And", {ok, e.op("Greater", {score, sthr})});
  std::string okf = e.cast(ok, onnx::TensorProto::FLOAT);
  std::string onehot = e.cast(e.op("Equal", {iota, i}), onnx::TensorProto::FLOAT);
  std::string sel_out = e.op("Add", {sel_now, e.op("Mul", {onehot, okf})});
  std::string cnt_out = e.op("Add", {cnt_now, e.cast(ok, onnx::TensorProto::INT64)});
  std::string rows_out = e.fresh("rows_out");
  auto* iff = lb.add_node();
  iff->set_op_type("If");
  iff->add_input(ok);
  iff->add_output(rows_out);
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* ba = iff->add_attribute();
    ba->set_name(branch);
    ba->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& bg = *ba->mutable_g();
    bg.set_name(e.fresh(branch));
    BodyBuilder f{bg, kExpansionNames, branch[0] == 't' ? 6000 : 6500};
    std::string o = f.fresh("o");
    vinfo(bg.add_output(), o, onnx::TensorProto::INT64, 2);
    if (branch[0] == 't') {
      std::string row = f.op("Concat", {f.reshape(bb, {1}), f.reshape(cc, {1}), f.reshape(i, {1})});
      BodyBuilder::one_int(last(bg), "axis", 0);
      f.op("Concat", {rows, f.reshape(row, {1, 3})}, o);
      BodyBuilder::one_int(last(bg), "axis", 0);
    } else {
      f.op("Identity", {rows}, o);
    }
  }
  vinfo(lb.add_output(), cout, onnx::TensorProto::BOOL, 0);
  vinfo(lb.add_output(), sel_out, onnx::TensorProto::FLOAT, 1);
  vinfo(lb.add_output(), cnt_out, onnx::TensorProto::INT64, 0);
  vinfo(lb.add_output(), rows_out, onnx::TensorProto::INT64, 2);
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
