// A SameDiff FlatGraph (.fb) as a graph of amanda/nd4j/1.0 (docs/nd4j.md, "The IR of a .fb file").
//
// Variables that are an op's output (ARRAY, id = (node id, output index)) are that op's output
// ports; the others (constants, trainable variables, placeholders) are the graph's input ports,
// with their array as the `initializer` tensor, as ONNX's initializers are. Edges come from
// inputPaired. Each op's ordered arguments become named attributes (nd4j.h). Whatever else the
// file says is kept under `@nd4j.` annotations, so that writing gives every field back.
#include <flatbuffers/flatbuffers.h>

#include <map>

#include "amanda/support/diagnostics.h"
#include "frameworks/nd4j/flat_align.h"
#include "frameworks/nd4j/flat_array.h"
#include "frameworks/nd4j/nd4j.h"
#include "frameworks/nd4j/records.h"

namespace amanda::nd4j {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;
namespace fb = sd::graph;

constexpr uint32_t kMaxOutputs = 4096;  // an output index from the file is trusted up to this

Value strings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  Value::List l;
  for (auto s : *v) l.emplace_back(std::string(s->string_view()));
  return Value(std::move(l));
}
template <class T>
Value ints(const flatbuffers::Vector<T>* v) {
  Value::List l;
  for (auto x : *v) l.emplace_back(static_cast<int64_t>(x));
  return Value(std::move(l));
}
Value dtypes(const flatbuffers::Vector<int8_t>* v) {
  Value::List l;
  for (auto x : *v) l.emplace_back(dtype_from_sd(x).value_or("nd4j." + std::to_string(x)));
  return Value(std::move(l));
}
Value pair(const fb::IntPair* p) {
  return Value(Value::List{Value(static_cast<int64_t>(p ? p->first() : 0)), Value(static_cast<int64_t>(p ? p->second() : 0))});
}

class Reader {
 public:
  Reader(text::Document& doc, std::shared_ptr<const Buffer> owner, std::string where)
      : g_(doc.graph), owner_(std::move(owner)), where_(std::move(where)), port_budget_(owner_->size() / 4 + 64) {}

  void run(const fb::FlatGraph* fg) {
    OpId root = g_.root();
    g_.set_graph_namespace(root, g_.sym(kNamespace));
    Value::Map gm;
    if (flatbuffers::IsFieldPresent(fg, fb::FlatGraph::VT_ID)) gm.push_back({"id", Value(fg->id())});
    if (fg->outputs()) {
      Value::List l;
      for (auto p : *fg->outputs()) l.push_back(pair(p));
      gm.push_back({"outputs", Value(std::move(l))});
    }
    if (const auto* c = fg->configuration()) gm.push_back({"configuration", configuration(c)});
    if (fg->placeholders()) gm.push_back({"placeholders", strings(fg->placeholders())});
    if (fg->lossVariables()) gm.push_back({"lossVariables", strings(fg->lossVariables())});
    if (fg->trainingConfig()) gm.push_back({"trainingConfig", Value(std::string(fg->trainingConfig()->string_view()))});
    if (fg->updaterState()) {
      Value::List l;
      for (auto u : *fg->updaterState()) {
        Value::Map m;
        if (u->paramName()) m.push_back({"paramName", Value(std::string(u->paramName()->string_view()))});
        if (u->updaterStateKeys()) m.push_back({"updaterStateKeys", strings(u->updaterStateKeys())});
        if (u->updaterStateValues()) {
          Value::List a;
          for (auto x : *u->updaterStateValues()) a.push_back(array_to_value(x, owner_, where_ + ": updaterState"));
          m.push_back({"updaterStateValues", Value(std::move(a))});
        }
        l.emplace_back(std::move(m));
      }
      gm.push_back({"updaterState", Value(std::move(l))});
    }
    gm.push_back({"variables", Value(fg->variables() != nullptr)});
    gm.push_back({"nodes", Value(fg->nodes() != nullptr)});
    g_.set_attr(root, g_.sym(kGraphRecord), Value(std::move(gm)));

    if (fg->nodes())
      for (flatbuffers::uoffset_t i = 0; i < fg->nodes()->size(); ++i) make_op(fg->nodes()->Get(i), i);
    if (fg->variables())
      for (flatbuffers::uoffset_t i = 0; i < fg->variables()->size(); ++i) variable(fg->variables()->Get(i), i);
    if (fg->nodes())
      for (flatbuffers::uoffset_t i = 0; i < fg->nodes()->size(); ++i) connect_inputs(fg->nodes()->Get(i), i);
    graph_outputs(fg);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(where_ + ": " + what); }
  std::string node_where(flatbuffers::uoffset_t i, const fb::FlatNode* n) const {
    return "node #" + std::to_string(i) + (n->name() ? " '" + std::string(n->name()->string_view()) + "'" : std::string());
  }

  static Value configuration(const fb::FlatConfiguration* c) {
    Value::Map m;
    using C = fb::FlatConfiguration;
    if (flatbuffers::IsFieldPresent(c, C::VT_ID)) m.push_back({"id", Value(c->id())});
    if (flatbuffers::IsFieldPresent(c, C::VT_EXECUTIONMODE)) m.push_back({"executionMode", Value(static_cast<int64_t>(c->executionMode()))});
    if (flatbuffers::IsFieldPresent(c, C::VT_PROFILINGMODE)) m.push_back({"profilingMode", Value(static_cast<int64_t>(c->profilingMode()))});
    if (flatbuffers::IsFieldPresent(c, C::VT_OUTPUTMODE)) m.push_back({"outputMode", Value(static_cast<int64_t>(c->outputMode()))});
    if (flatbuffers::IsFieldPresent(c, C::VT_TIMESTATS)) m.push_back({"timestats", Value(c->timestats())});
    if (flatbuffers::IsFieldPresent(c, C::VT_FOOTPRINTFORWARD)) m.push_back({"footprintForward", Value(c->footprintForward())});
    if (flatbuffers::IsFieldPresent(c, C::VT_FOOTPRINTBACKWARD)) m.push_back({"footprintBackward", Value(c->footprintBackward())});
    if (flatbuffers::IsFieldPresent(c, C::VT_DIRECTION)) m.push_back({"direction", Value(static_cast<int64_t>(c->direction()))});
    return Value(std::move(m));
  }

  PortId output(OpId op, uint32_t k, const std::string& where) {
    if (k >= kMaxOutputs) fail(where + ": output index " + std::to_string(k) + " is beyond the limit of " + std::to_string(kMaxOutputs));
    const OpDesc* d = Descriptors::shipped().find(g_.type_str(op));
    while (g_.outputs(op).size() <= k) {
      // Each port an index from the file makes is charged: a few bytes of file cannot ask for
      // millions of ports (every legitimate port is named by at least one 8-byte reference).
      if (port_budget_ == 0) fail(where + ": output index " + std::to_string(k) + " asks for more ports than the file can describe");
      --port_budget_;
      size_t i = g_.outputs(op).size();
      g_.add_output(op, g_.sym(port_name(d ? d->outputs : std::vector<std::string>{}, i)));
    }
    return g_.output(op, k);
  }

  void make_op(const fb::FlatNode* n, flatbuffers::uoffset_t i) {
    std::string where = node_where(i, n);
    if (!n->opName() || n->opName()->size() == 0) fail(where + ": no opName (the op cannot be named without libnd4j's legacy op tables)");
    std::string type(n->opName()->string_view());
    std::string name = n->name() ? std::string(n->name()->string_view()) : std::string();
    OpId op = g_.create_op(g_.root(), g_.sym(type), name.empty() ? Symbol(0) : g_.sym(name));
    if (!node_by_id_.emplace(n->id(), op).second) fail(where + ": node id " + std::to_string(n->id()) + " is used twice");
    const OpDesc* d = Descriptors::shipped().find(type);
    OrderedArgs args;
    if (n->extraInteger()) for (auto x : *n->extraInteger()) args.lists[int(ArgList::Int)].emplace_back(static_cast<int64_t>(x));
    if (n->extraParams()) for (auto x : *n->extraParams()) args.lists[int(ArgList::Float)].emplace_back(x);
    if (n->extraBools()) for (auto x : *n->extraBools()) args.lists[int(ArgList::Bool)].emplace_back(static_cast<bool>(x));
    if (n->extraTypes()) args.lists[int(ArgList::DType)] = dtypes(n->extraTypes()).as_list();
    if (n->extraStrings()) args.lists[int(ArgList::String)] = strings(n->extraStrings()).as_list();
    set_ordered_args(g_, op, d, args);

    Value::Map m;
    m.push_back({"id", Value(static_cast<int64_t>(n->id()))});
    if (!n->name()) m.push_back({"no_name", Value(true)});
    int64_t derived_type = 0, derived_num = 0;
    derived_op_number(type, derived_type, derived_num);
    if (n->opType() != derived_type) m.push_back({"opType", Value(static_cast<int64_t>(n->opType()))});
    if (n->opNum() != derived_num) m.push_back({"opNum", Value(n->opNum())});
    using N = fb::FlatNode;
    Value::List present;
    auto note = [&](bool has, const char* field) {
      if (has) present.emplace_back(field);
    };
    note(n->inputPaired(), "inputPaired");
    note(n->extraParams(), "extraParams");
    note(n->extraInteger(), "extraInteger");
    note(n->extraBools(), "extraBools");
    note(n->extraTypes(), "extraTypes");
    note(n->extraStrings(), "extraStrings");
    note(n->outputNames(), "outputNames");
    m.push_back({"present", Value(std::move(present))});
    if (n->properties()) {
      Value::List l;
      for (auto p : *n->properties()) l.push_back(property(p, where));
      m.push_back({"properties", Value(std::move(l))});
    }
    if (n->input()) m.push_back({"input", ints(n->input())});
    if (n->output()) m.push_back({"output", ints(n->output())});
    if (flatbuffers::IsFieldPresent(n, N::VT_DEVICE)) m.push_back({"device", Value(static_cast<int64_t>(n->device()))});
    if (flatbuffers::IsFieldPresent(n, N::VT_SCOPE_ID)) m.push_back({"scope_id", Value(static_cast<int64_t>(n->scope_id()))});
    if (n->scope_name()) m.push_back({"scope_name", Value(std::string(n->scope_name()->string_view()))});
    if (n->outputTypes()) m.push_back({"outputTypes", dtypes(n->outputTypes())});
    if (n->scalar()) m.push_back({"scalar", array_to_value(n->scalar(), owner_, where + ": scalar")});
    if (n->controlDeps()) m.push_back({"controlDeps", strings(n->controlDeps())});
    if (n->varControlDeps()) m.push_back({"varControlDeps", strings(n->varControlDeps())});
    if (n->controlDepFor()) m.push_back({"controlDepFor", strings(n->controlDepFor())});
    g_.set_attr(op, g_.sym(kNodeRecord), Value(std::move(m)));
    // The legacy ops' axis list, apart from the record so that rules can read it.
    if (n->dimensions()) g_.set_attr(op, g_.sym(kDimensions), ints(n->dimensions()));
    if (n->outputNames())
      for (flatbuffers::uoffset_t k = 0; k < n->outputNames()->size(); ++k)
        g_.set_attr(output(op, k, where), g_.sym("@value"), Value(std::string(n->outputNames()->Get(k)->string_view())));
  }

  Value property(const fb::FlatProperties* p, const std::string& where) {
    Value::Map m;
    if (p->name()) m.push_back({"name", Value(std::string(p->name()->string_view()))});
    if (p->i()) m.push_back({"i", ints(p->i())});
    if (p->l()) m.push_back({"l", ints(p->l())});
    if (p->d()) {
      Value::List l;
      for (double x : *p->d()) l.emplace_back(x);
      m.push_back({"d", Value(std::move(l))});
    }
    if (p->a()) {
      Value::List l;
      for (auto a : *p->a()) l.push_back(array_to_value(a, owner_, where + ": property"));
      m.push_back({"a", Value(std::move(l))});
    }
    if (p->b()) {
      Value::List l;
      for (auto x : *p->b()) l.emplace_back(static_cast<bool>(x));
      m.push_back({"b", Value(std::move(l))});
    }
    if (p->s()) m.push_back({"s", strings(p->s())});
    if (p->shape()) m.push_back({"shape", ints(p->shape())});
    return Value(std::move(m));
  }

  void variable(const fb::FlatVariable* v, flatbuffers::uoffset_t i) {
    std::string where = "variable #" + std::to_string(i) + (v->name() ? " '" + std::string(v->name()->string_view()) + "'" : std::string());
    int first = v->id() ? v->id()->first() : 0, second = v->id() ? v->id()->second() : 0;
    Value::Map m;
    m.push_back({"index", Value(static_cast<int64_t>(i))});
    using V = fb::FlatVariable;
    if (flatbuffers::IsFieldPresent(v, V::VT_DTYPE)) m.push_back({"dtype", Value(dtype_from_sd(v->dtype()).value_or("nd4j." + std::to_string(v->dtype())))});
    if (v->shape()) m.push_back({"shape", ints(v->shape())});
    if (flatbuffers::IsFieldPresent(v, V::VT_DEVICE)) m.push_back({"device", Value(static_cast<int64_t>(v->device()))});
    if (flatbuffers::IsFieldPresent(v, V::VT_VARIABLETYPE)) m.push_back({"variabletype", Value(static_cast<int64_t>(v->variabletype()))});
    if (v->controlDeps()) m.push_back({"controlDeps", strings(v->controlDeps())});
    if (v->controlDepForOp()) m.push_back({"controlDepForOp", strings(v->controlDepForOp())});
    if (v->controlDepsForVar()) m.push_back({"controlDepsForVar", strings(v->controlDepsForVar())});
    if (!v->id()) m.push_back({"no_id", Value(true)});
    if (!v->name()) m.push_back({"no_name", Value(true)});
    std::string name = v->name() ? std::string(v->name()->string_view()) : "variable_" + std::to_string(i);
    PortId p;
    auto it = node_by_id_.find(first);
    if (v->variabletype() == fb::VarType_ARRAY && v->id() && it != node_by_id_.end() && second >= 0) {
      p = output(it->second, static_cast<uint32_t>(second), where);
      if (g_.attr(p, g_.sym(kVarRecord))) fail(where + ": a second variable for output " + std::to_string(second) + " of node id " + std::to_string(first));
      set_type(p, v);
      if (v->ndarray()) m.push_back({"ndarray", array_to_value(v->ndarray(), owner_, where)});
    } else {
      p = g_.add_input(g_.root(), g_.sym(name));
      m.push_back({"id", pair(v->id())});
      if (v->ndarray()) {
        Value a = array_to_value(v->ndarray(), owner_, where);
        Value::Map meta;
        for (auto& e : a.as_map()) {
          if (e.key == "tensor") g_.set_attr(p, g_.sym("initializer"), e.value);
          else meta.push_back(e);
        }
        m.push_back({"ndarray", Value(std::move(meta))});
        g_.set_port_role(p, a.find("tensor") ? ir::PortRole::Initializer : ir::PortRole::GraphInput);
      } else {
        g_.set_port_role(p, ir::PortRole::GraphInput);
      }
      set_type(p, v);
    }
    if (v->name()) g_.set_attr(p, g_.sym("@value"), Value(name));
    g_.set_attr(p, g_.sym(kVarRecord), Value(std::move(m)));
    if (!by_id_.emplace(std::make_pair(first, second), p).second)
      fail(where + ": variable id (" + std::to_string(first) + ", " + std::to_string(second) + ") is used twice");
  }

  // A graph input's value type from the variable's dtype and shape (what an ONNX writer declares).
  void set_type(PortId p, const fb::FlatVariable* v) {
    auto name = dtype_from_sd(v->dtype());
    auto dt = name ? ir::dtype_from_name(*name) : std::nullopt;
    if (!dt || !flatbuffers::IsFieldPresent(v, fb::FlatVariable::VT_DTYPE)) return;
    if (!v->shape()) {
      if (const ir::Value* t = g_.attr(p, g_.sym("initializer")); t && t->is_tensor()) {
        std::vector<ir::Dim> dims;
        for (int64_t d : t->as_tensor().shape) dims.push_back(ir::Dim::known(d));
        g_.set_port_type(p, g_.types().tensor(*dt, dims));
      } else {
        g_.set_port_type(p, g_.types().unranked(*dt));
      }
      return;
    }
    std::vector<ir::Dim> dims;
    for (int64_t d : *v->shape()) dims.push_back(d >= 0 ? ir::Dim::known(d) : ir::Dim::unknown());
    g_.set_port_type(p, g_.types().tensor(*dt, dims));
  }

  PortId source(int first, int second, const std::string& where) {
    if (auto it = by_id_.find({first, second}); it != by_id_.end()) return it->second;
    if (auto it = node_by_id_.find(first); it != node_by_id_.end() && second >= 0)
      return output(it->second, static_cast<uint32_t>(second), where);
    fail(where + ": no variable or node has id (" + std::to_string(first) + ", " + std::to_string(second) + ")");
  }

  void connect_inputs(const fb::FlatNode* n, flatbuffers::uoffset_t i) {
    std::string where = node_where(i, n);
    OpId op = node_by_id_.at(n->id());
    const OpDesc* d = Descriptors::shipped().find(g_.type_str(op));
    std::vector<std::pair<int, int>> ins;
    if (n->inputPaired() && n->inputPaired()->size())
      for (auto p : *n->inputPaired()) ins.emplace_back(p->first(), p->second());
    else if (n->input())
      for (int x : *n->input()) ins.emplace_back(x, 0);
    for (size_t k = 0; k < ins.size(); ++k) {
      PortId src = source(ins[k].first, ins[k].second, where + " input " + std::to_string(k));
      PortId dst = g_.add_input(op, g_.sym(port_name(d ? d->inputs : std::vector<std::string>{}, k)));
      g_.connect(src, dst);
    }
  }

  // The graph's outputs: FlatGraph.outputs, or (a SameDiff file often lists none) every op output
  // nothing reads, marked derived so that writing leaves `outputs` as it was.
  void graph_outputs(const fb::FlatGraph* fg) {
    OpId root = g_.root();
    std::vector<PortId> outs;
    bool derived = !fg->outputs() || fg->outputs()->size() == 0;
    if (!derived) {
      for (auto p : *fg->outputs()) outs.push_back(source(p->first(), p->second(), "graph output"));
    } else {
      // (noop's output carries nothing: libnd4j's noop only orders execution.)
      for (OpId op : g_.children(root))
        if (g_.type_str(op) != "noop")
          for (PortId p : g_.outputs(op))
            if (g_.out_degree(p) == 0) outs.push_back(p);
    }
    std::map<std::string, int> taken;
    for (PortId src : outs) {
      const Value* v = g_.attr(src, g_.sym("@value"));
      std::string name = v && v->is_string() ? v->as_string() : std::string(g_.name_str(g_.port_op(src))) + ":" + std::string(g_.port_name_str(src));
      if (int k = taken[name]++; k) name += "_" + std::to_string(k);
      PortId out = g_.add_output(root, g_.sym(name));
      g_.connect(src, out);
      g_.set_attr(out, g_.sym("@value"), Value(name));
      if (derived) g_.set_attr(out, g_.sym("@nd4j.derived"), Value(true));
    }
  }

  ir::Graph& g_;
  std::shared_ptr<const Buffer> owner_;
  std::string where_;
  size_t port_budget_;
  std::map<int, OpId> node_by_id_;
  std::map<std::pair<int, int>, PortId> by_id_;
};

}  // namespace

std::string port_name(const std::vector<std::string>& names, size_t i) {
  return i < names.size() ? names[i] : "more." + std::to_string(i - names.size());
}

text::Document read_flatgraph(std::shared_ptr<const Buffer> input, const std::string& where) {
  // FlatBuffers reads scalars with plain loads: aligned bytes, and 8-byte vectors aligned in them
  // (flat_align.h), before any accessor runs.
  std::shared_ptr<const Buffer> bytes = aligned_flatbuffer(std::move(input));
  const auto* data = reinterpret_cast<const uint8_t*>(bytes->data());
  flatbuffers::Verifier v(data, bytes->size(), /*max_depth=*/64, /*max_tables=*/4000000);
  if (bytes->size() < 8 || !fb::VerifyFlatGraphBuffer(v))
    throw Error(where + ": not a SameDiff FlatGraph (the FlatBuffers verifier rejects it: a bad offset, size or nesting)");
  if (std::string m = misaligned_vector(fb::GetFlatGraph(data), data); !m.empty())
    throw Error(where + ": not a SameDiff FlatGraph written by FlatBuffers: " + m + " is not 8-byte aligned");
  text::Document doc;
  Reader(doc, bytes, where).run(fb::GetFlatGraph(data));
  return doc;
}

}  // namespace amanda::nd4j
