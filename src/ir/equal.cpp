#include "amanda/ir/equal.h"

#include <algorithm>
#include <tuple>

namespace amanda::ir {

namespace {

class Comparer {
 public:
  Comparer(const Graph& a, const Graph& b) : a_(a), b_(b) {}

  std::string run() {
    if (a_.root_kind() != b_.root_kind()) return "<root>: one is a graph, the other an op";
    node(a_.root(), b_.root());
    return diff_;
  }

 private:
  bool fail(std::string msg) {
    if (diff_.empty()) diff_ = std::move(msg);
    return false;
  }

  bool node(OpId x, OpId y) {
    std::string p = a_.path(x);
    if (a_.name_str(x) != b_.name_str(y)) return fail(p + ": name '" + std::string(a_.name_str(x)) + "' vs '" + std::string(b_.name_str(y)) + "'");
    if (a_.type_str(x) != b_.type_str(y)) return fail(p + ": type/namespace '" + std::string(a_.type_str(x)) + "' vs '" + std::string(b_.type_str(y)) + "'");
    if (!attrs(a_.attrs(x), b_.attrs(y), p)) return false;
    for (PortDir d : {PortDir::In, PortDir::Out}) {
      auto px = a_.ports(x, d), py = b_.ports(y, d);
      if (px.size() != py.size()) return fail(p + ": " + std::to_string(px.size()) + " vs " + std::to_string(py.size()) + (d == PortDir::In ? " input" : " output") + " ports");
      for (size_t i = 0; i < px.size(); ++i) {
        if (a_.port_name_str(px[i]) != b_.port_name_str(py[i])) return fail(a_.path(px[i]) + ": port name differs ('" + std::string(b_.port_name_str(py[i])) + "')");
        if (!attrs(a_.attrs(px[i]), b_.attrs(py[i]), a_.path(px[i]))) return false;
      }
    }
    if (a_.has_body(x) != b_.has_body(y)) return fail(p + ": one has a body, the other not");
    auto cx = a_.children(x), cy = b_.children(y);
    if (cx.size() != cy.size()) return fail(p + ": " + std::to_string(cx.size()) + " vs " + std::to_string(cy.size()) + " ops in its body");
    auto gx = a_.attr_graphs(x), gy = b_.attr_graphs(y);
    if (gx.size() != gy.size()) return fail(p + ": different number of attribute graphs");
    for (size_t i = 0; i < cx.size(); ++i)
      if (!node(cx[i], cy[i])) return false;
    if (!edges(x, y, p)) return false;
    return true;
  }

  using EdgeKey = std::tuple<std::string, std::string, std::string, std::string>;
  std::vector<std::pair<EdgeKey, EdgeId>> edge_keys(const Graph& g, OpId scope) {
    // Edges whose destination lives in this body, named by (op, port) at both ends.
    std::vector<std::pair<EdgeKey, EdgeId>> keys;
    auto add = [&](PortId dst) {
      for (EdgeId e = g.first_in_edge(dst); e; e = g.next_in_edge(e)) {
        PortId s = g.edge_src(e);
        keys.emplace_back(EdgeKey(g.path(g.port_op(s)), std::string(g.port_name_str(s)) + (g.port_dir(s) == PortDir::In ? "<" : ">"),
                                  g.path(g.port_op(dst)), std::string(g.port_name_str(dst)) + (g.port_dir(dst) == PortDir::In ? "<" : ">")),
                          e);
      }
    };
    for (PortId p : g.outputs(scope)) add(p);
    if (PortId c = g.find_control(scope, PortDir::Out)) add(c);
    for (OpId c = g.first_child(scope); c; c = g.next_sibling(c)) {
      for (PortId p : g.inputs(c)) add(p);
      if (PortId cc = g.find_control(c, PortDir::In)) add(cc);
    }
    // Stable: parallel edges with one key keep their order at the destination.
    std::stable_sort(keys.begin(), keys.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
    return keys;
  }

  bool edges(OpId x, OpId y, const std::string& p) {
    auto kx = edge_keys(a_, x), ky = edge_keys(b_, y);
    for (size_t i = 0; i < std::max(kx.size(), ky.size()); ++i) {
      if (i >= kx.size() || i >= ky.size() || kx[i].first != ky[i].first) {
        const auto& k = i < kx.size() ? kx[i].first : ky[i].first;
        return fail(p + ": edges differ at " + std::get<0>(k) + ":" + std::get<1>(k) + " -> " + std::get<2>(k) + ":" + std::get<3>(k));
      }
    }
    // The same edges: now their attributes.
    for (size_t i = 0; i < kx.size(); ++i)
      if (!attrs(a_.attrs(kx[i].second), b_.attrs(ky[i].second), a_.path(kx[i].second))) return false;
    return true;
  }

  bool attrs(const AttrList& x, const AttrList& y, const std::string& p) {
    if (x.size() != y.size()) return fail(p + ": " + std::to_string(x.size()) + " vs " + std::to_string(y.size()) + " attributes");
    for (size_t i = 0; i < x.size(); ++i) {
      if (a_.str(x[i].first) != b_.str(y[i].first)) return fail(p + ": attribute '" + std::string(a_.str(x[i].first)) + "' vs '" + std::string(b_.str(y[i].first)) + "'");
      if (!value(x[i].second, y[i].second)) return fail(p + ": attribute '" + std::string(a_.str(x[i].first)) + "' differs");
    }
    return true;
  }

  bool value(const Value& x, const Value& y) {
    if (x.kind() != y.kind()) return false;
    switch (x.kind()) {
      case Value::Kind::List: {
        const auto &lx = x.as_list(), &ly = y.as_list();
        if (lx.size() != ly.size()) return false;
        for (size_t i = 0; i < lx.size(); ++i)
          if (!value(lx[i], ly[i])) return false;
        return true;
      }
      case Value::Kind::Map: {
        const auto &mx = x.as_map(), &my = y.as_map();
        if (mx.size() != my.size()) return false;
        for (size_t i = 0; i < mx.size(); ++i)
          if (mx[i].key != my[i].key || !value(mx[i].value, my[i].value)) return false;
        return true;
      }
      case Value::Kind::Graph: return node(x.as_graph(), y.as_graph());
      default: return x == y;
    }
  }

  const Graph& a_;
  const Graph& b_;
  std::string diff_;
};

}  // namespace

std::string first_difference(const Graph& a, const Graph& b) { return Comparer(a, b).run(); }

}  // namespace amanda::ir
