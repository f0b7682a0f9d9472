// A graph of amanda/nd4j/1.0 as a SameDiff FlatGraph: the reader's mapping (flat_read.cpp) run
// backwards. A graph that came from a .fb file gets every field back from its @nd4j records; a
// graph made by a conversion gets what SameDiff writes: an ARRAY variable per op output, a
// CONSTANT per initializer, a PLACEHOLDER per other graph input, custom ops by their hash.
#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <map>

#include "amanda/support/diagnostics.h"
#include "frameworks/nd4j/flat_array.h"
#include "frameworks/nd4j/nd4j.h"
#include "frameworks/nd4j/records.h"

namespace amanda::nd4j {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;
namespace fb = sd::graph;
using flatbuffers::Offset;
using StrVec = flatbuffers::Vector<Offset<flatbuffers::String>>;

const Value* field(const Value* rec, std::string_view k) { return rec && rec->is_map() ? rec->find(k) : nullptr; }
int64_t int_or(const Value* v, int64_t d) { return v && v->is_int() ? v->as_int() : d; }

class Writer {
 public:
  explicit Writer(const ir::Graph& g) : g_(g) {}

  std::string run() {
    OpId root = g_.root();
    if (g_.str(g_.graph_namespace(root)) != kNamespace)
      throw Error("the graph is in namespace '" + std::string(g_.str(g_.graph_namespace(root))) + "'; a .fb file holds " +
                  std::string(kNamespace) + " (convert it with --to nd4j)");
    const Value* gr = attr(root, kGraphRecord);
    for (OpId op : g_.children(root)) (g_.type_str(op) == kConstantOp ? constants_ : ops_).push_back(op);
    assign_ids();

    std::vector<Offset<fb::FlatVariable>> vars;
    for (const auto& v : variable_order()) vars.push_back(variable(v.first, v.second));
    std::vector<Offset<fb::FlatNode>> nodes;
    for (OpId op : ops_) nodes.push_back(node(op));

    Offset<flatbuffers::Vector<Offset<fb::IntPair>>> outputs;
    if (const Value* o = field(gr, "outputs"); o || !gr) {
      std::vector<Offset<fb::IntPair>> l;
      for (PortId p : g_.outputs(root)) {
        if (attr(p, "@nd4j.derived")) continue;
        auto id = source_id(p, "graph output '" + std::string(g_.port_name_str(p)) + "'");
        l.push_back(fb::CreateIntPair(fbb_, id.first, id.second));
      }
      if (o || !l.empty()) outputs = fbb_.CreateVector(l);
    }
    Offset<fb::FlatConfiguration> config;
    if (const Value* c = field(gr, "configuration"); c && c->is_map()) {
      fb::FlatConfigurationBuilder b(fbb_);
      if (const Value* x = c->find("id")) b.add_id(x->as_int());
      if (const Value* x = c->find("executionMode")) b.add_executionMode(static_cast<fb::ExecutionMode>(x->as_int()));
      if (const Value* x = c->find("profilingMode")) b.add_profilingMode(static_cast<fb::ProfilingMode>(x->as_int()));
      if (const Value* x = c->find("outputMode")) b.add_outputMode(static_cast<fb::OutputMode>(x->as_int()));
      if (const Value* x = c->find("timestats")) b.add_timestats(x->as_bool());
      if (const Value* x = c->find("footprintForward")) b.add_footprintForward(x->as_int());
      if (const Value* x = c->find("footprintBackward")) b.add_footprintBackward(x->as_int());
      if (const Value* x = c->find("direction")) b.add_direction(static_cast<fb::Direction>(x->as_int()));
      config = b.Finish();
    }
    Offset<StrVec> placeholders;
    if (const Value* p = field(gr, "placeholders")) {
      placeholders = strings(*p);
    } else if (!gr) {
      std::vector<std::string> l;
      for (PortId p : g_.inputs(root))
        if (!attr(p, "initializer")) l.push_back(var_name(p));
      placeholders = fbb_.CreateVectorOfStrings(l);
    }
    Offset<StrVec> loss = field(gr, "lossVariables") ? strings(*field(gr, "lossVariables")) : Offset<StrVec>();
    Offset<flatbuffers::String> training;
    if (const Value* t = field(gr, "trainingConfig"); t && t->is_string()) training = fbb_.CreateString(t->as_string());
    Offset<flatbuffers::Vector<Offset<fb::UpdaterState>>> updater;
    if (const Value* u = field(gr, "updaterState"); u && u->is_list()) {
      std::vector<Offset<fb::UpdaterState>> l;
      for (const auto& e : u->as_list()) {
        Offset<flatbuffers::String> pn;
        if (const Value* x = e.find("paramName")) pn = fbb_.CreateString(x->as_string());
        Offset<StrVec> keys = e.find("updaterStateKeys") ? strings(*e.find("updaterStateKeys")) : Offset<StrVec>();
        Offset<flatbuffers::Vector<Offset<fb::FlatArray>>> vals;
        if (const Value* x = e.find("updaterStateValues")) {
          std::vector<Offset<fb::FlatArray>> a;
          for (const auto& y : x->as_list()) a.push_back(value_to_array(fbb_, y, "updaterState"));
          vals = fbb_.CreateVector(a);
        }
        l.push_back(fb::CreateUpdaterState(fbb_, pn, keys, vals));
      }
      updater = fbb_.CreateVector(l);
    }
    bool has_vars = !gr || !field(gr, "variables") || field(gr, "variables")->as_bool() || !vars.empty();
    bool has_nodes = !gr || !field(gr, "nodes") || field(gr, "nodes")->as_bool() || !nodes.empty();
    auto vv = has_vars ? fbb_.CreateVector(vars) : Offset<flatbuffers::Vector<Offset<fb::FlatVariable>>>();
    auto nv = has_nodes ? fbb_.CreateVector(nodes) : Offset<flatbuffers::Vector<Offset<fb::FlatNode>>>();
    fb::FlatGraphBuilder b(fbb_);
    if (const Value* id = field(gr, "id")) b.add_id(id->as_int());
    b.add_variables(vv);
    b.add_nodes(nv);
    b.add_outputs(outputs);
    b.add_configuration(config);
    b.add_placeholders(placeholders);
    b.add_lossVariables(loss);
    b.add_trainingConfig(training);
    b.add_updaterState(updater);
    fb::FinishFlatGraphBuffer(fbb_, b.Finish());
    return std::string(reinterpret_cast<const char*>(fbb_.GetBufferPointer()), fbb_.GetSize());
  }

 private:
  const Value* attr(OpId op, std::string_view k) const {
    Symbol s = g_.symbols().find(k);
    return s == SymbolTable::kNone ? nullptr : g_.attr(op, s);
  }
  const Value* attr(PortId p, std::string_view k) const {
    Symbol s = g_.symbols().find(k);
    return s == SymbolTable::kNone ? nullptr : g_.attr(p, s);
  }

  Offset<StrVec> strings(const Value& v) {
    std::vector<std::string> l;
    if (v.is_list())
      for (const auto& x : v.as_list()) l.push_back(x.is_string() ? x.as_string() : std::string());
    return fbb_.CreateVectorOfStrings(l);
  }
  template <class T>
  Offset<flatbuffers::Vector<T>> ints(const Value& v) {
    std::vector<T> l;
    if (v.is_list())
      for (const auto& x : v.as_list()) l.push_back(static_cast<T>(x.is_int() ? x.as_int() : 0));
    return fbb_.CreateVector(l);
  }
  Offset<flatbuffers::Vector<int8_t>> dtypes(const std::vector<Value>& l, const std::string& where) {
    std::vector<int8_t> out;
    for (const auto& x : l) out.push_back(static_cast<int8_t>(dtype_code(x, where)));
    return fbb_.CreateVector(out);
  }
  static int dtype_code(const Value& x, const std::string& where) {
    if (x.is_string()) {
      if (auto c = dtype_to_sd(x.as_string())) return *c;
      // A code the reader kept as nd4j.<number> (no name in sd.graph.DType)
      std::string_view d = std::string_view(x.as_string());
      if (d.starts_with("nd4j.") && d.size() > 5 && d.size() <= 8 &&
          std::all_of(d.begin() + 5, d.end(), [](char c) { return c >= '0' && c <= '9'; }))
        if (int v = std::stoi(std::string(d.substr(5))); v <= 127) return v;
    }
    throw Error(where + ": SameDiff has no data type '" + (x.is_string() ? x.as_string() : std::string("?")) + "'");
  }

  void assign_ids() {
    int next = 1;
    for (OpId op : ops_)
      if (const Value* id = field(attr(op, kNodeRecord), "id")) next = std::max<int64_t>(next, id->as_int() + 1);
    for (PortId p : g_.inputs(g_.root()))
      if (const Value* id = field(attr(p, kVarRecord), "id"); id && id->is_list() && id->as_list().size() == 2)
        next = std::max<int64_t>(next, id->as_list()[0].as_int() + 1);
    for (OpId op : ops_) {
      const Value* id = field(attr(op, kNodeRecord), "id");
      node_id_[op.value] = id ? static_cast<int>(id->as_int()) : next++;
    }
    for (OpId op : constants_) node_id_[op.value] = next++;
    for (PortId p : g_.inputs(g_.root())) {
      const Value* id = field(attr(p, kVarRecord), "id");
      input_id_[p.value] = id && id->is_list() && id->as_list().size() == 2
                               ? std::make_pair(static_cast<int>(id->as_list()[0].as_int()), static_cast<int>(id->as_list()[1].as_int()))
                               : std::make_pair(next++, 0);
    }
  }

  std::pair<int, int> port_id(PortId p) const {
    OpId op = g_.port_op(p);
    if (op == g_.root()) return input_id_.at(p.value);
    return {node_id_.at(op.value), static_cast<int>(g_.port_index(p))};
  }
  std::pair<int, int> source_id(PortId in, const std::string& where) const {
    PortId src = g_.producer(in);
    if (!src) throw Error(where + ": nothing feeds it (a SameDiff input names a variable)");
    return port_id(src);
  }

  std::string var_name(PortId p) const {
    if (const Value* v = attr(p, "@value"); v && v->is_string()) return v->as_string();
    OpId op = g_.port_op(p);
    if (op == g_.root()) return std::string(g_.port_name_str(p));
    std::string n(g_.name_str(op));
    return g_.port_index(p) ? n + ":" + std::to_string(g_.port_index(p)) : n;  // SameDiff's own spelling
  }

  // (port, is a graph input) in FlatGraph.variables order: recorded positions first.
  std::vector<std::pair<PortId, bool>> variable_order() const {
    std::vector<std::tuple<int64_t, size_t, PortId, bool>> v;
    size_t seq = 0;
    auto add = [&](PortId p, bool in) {
      const Value* idx = field(attr(p, kVarRecord), "index");
      v.emplace_back(idx ? idx->as_int() : INT64_MAX, seq++, p, in);
    };
    for (PortId p : g_.inputs(g_.root())) add(p, true);
    for (OpId op : constants_) add(g_.output(op, 0), true);
    for (OpId op : ops_) {
      bool fresh = !attr(op, kNodeRecord);
      for (PortId p : g_.outputs(op))
        if (fresh || attr(p, kVarRecord)) add(p, false);
    }
    std::sort(v.begin(), v.end());
    std::vector<std::pair<PortId, bool>> out;
    for (auto& [i, s, p, in] : v) out.emplace_back(p, in);
    return out;
  }

  Offset<fb::FlatVariable> variable(PortId p, bool input) {
    const Value* rec = attr(p, kVarRecord);
    std::string where = "variable '" + var_name(p) + "'";
    auto id = port_id(p);
    Offset<fb::IntPair> idp = field(rec, "no_id") ? Offset<fb::IntPair>() : fb::CreateIntPair(fbb_, id.first, id.second);
    Offset<flatbuffers::String> name = field(rec, "no_name") ? Offset<flatbuffers::String>() : fbb_.CreateString(var_name(p));
    Offset<flatbuffers::Vector<int64_t>> shape;
    if (const Value* s = field(rec, "shape")) {
      shape = ints<int64_t>(*s);
    } else if (!rec && g_.port_type(p) && g_.port_type_data(p).kind == ir::TypeKind::Tensor && g_.port_type_data(p).ranked) {
      std::vector<int64_t> dims;  // SameDiff's shape: -1 for a dimension not known
      for (ir::Dim d : g_.port_type_data(p).dims) dims.push_back(d.is_known() ? d.value() : -1);
      shape = fbb_.CreateVector(dims);
    }
    Offset<fb::FlatArray> nd;
    bool constant_op = g_.port_op(p) != g_.root() && g_.type_str(g_.port_op(p)) == kConstantOp;
    const Value* init = constant_op ? attr(g_.port_op(p), "value") : input ? attr(p, "initializer") : nullptr;
    if (constant_op && !(init && init->is_tensor())) throw Error(g_.path(g_.port_op(p)) + ": a constant without a tensor `value`");
    if (init && init->is_tensor()) {
      Value::Map m;
      m.push_back({"tensor", *init});
      if (const Value* meta = field(rec, "ndarray"); meta && meta->is_map())
        for (const auto& e : meta->as_map()) m.push_back(e);
      nd = value_to_array(fbb_, Value(std::move(m)), where);
    } else if (const Value* a = field(rec, "ndarray")) {
      nd = value_to_array(fbb_, *a, where);
    }
    Offset<StrVec> c1 = field(rec, "controlDeps") ? strings(*field(rec, "controlDeps")) : Offset<StrVec>();
    Offset<StrVec> c2 = field(rec, "controlDepForOp") ? strings(*field(rec, "controlDepForOp")) : Offset<StrVec>();
    Offset<StrVec> c3 = field(rec, "controlDepsForVar") ? strings(*field(rec, "controlDepsForVar")) : Offset<StrVec>();
    fb::FlatVariableBuilder b(fbb_);
    b.add_id(idp);
    b.add_name(name);
    if (const Value* d = field(rec, "dtype")) b.add_dtype(static_cast<fb::DType>(dtype_code(*d, where)));
    else if (!rec && init && init->is_tensor()) {
      if (auto c = dtype_to_sd(ir::dtype_name(init->as_tensor().dtype))) b.add_dtype(static_cast<fb::DType>(*c));
    } else if (!rec) {
      const ir::TypeData& t = g_.port_type_data(p);
      if (g_.port_type(p) && t.elem != ir::DType::Undefined)
        if (auto c = dtype_to_sd(ir::dtype_name(t.elem))) b.add_dtype(static_cast<fb::DType>(*c));
    }
    b.add_shape(shape);
    b.add_ndarray(nd);
    if (const Value* d = field(rec, "device")) b.add_device(static_cast<int32_t>(d->as_int()));
    if (const Value* t = field(rec, "variabletype")) b.add_variabletype(static_cast<fb::VarType>(t->as_int()));
    else if (!rec) b.add_variabletype(!input ? fb::VarType_ARRAY : init ? fb::VarType_CONSTANT : fb::VarType_PLACEHOLDER);
    b.add_controlDeps(c1);
    b.add_controlDepForOp(c2);
    b.add_controlDepsForVar(c3);
    return b.Finish();
  }

  Offset<fb::FlatNode> node(OpId op) {
    const Value* rec = attr(op, kNodeRecord);
    std::string where = g_.path(op);
    std::string type(g_.type_str(op));
    const OpDesc* desc = Descriptors::shipped().find(type);
    if (!desc) throw Error(where + ": op type '" + type + "' is not an nd4j op (amanda/nd4j/1.0 has no descriptor for it)");
    OrderedArgs args = ordered_args(g_, op, desc);
    auto present = [&](const char* f, bool nonempty) {
      if (!rec) return nonempty;
      if (const Value* p = field(rec, "present"); p && p->is_list())
        for (const auto& x : p->as_list())
          if (x.is_string() && x.as_string() == f) return true;
      return false;
    };
    Offset<flatbuffers::String> name = field(rec, "no_name") ? Offset<flatbuffers::String>() : fbb_.CreateString(std::string(g_.name_str(op)));
    Offset<flatbuffers::Vector<Offset<fb::FlatProperties>>> props;
    if (const Value* p = field(rec, "properties")) {
      std::vector<Offset<fb::FlatProperties>> l;
      for (const auto& x : p->as_list()) l.push_back(property(x, where));
      props = fbb_.CreateVector(l);
    }
    Offset<flatbuffers::Vector<int32_t>> input = field(rec, "input") ? ints<int32_t>(*field(rec, "input")) : Offset<flatbuffers::Vector<int32_t>>();
    Offset<flatbuffers::Vector<Offset<fb::IntPair>>> paired;
    std::vector<Offset<fb::IntPair>> pairs;
    bool from_input_field = field(rec, "input") && !present("inputPaired", false);
    if (!from_input_field) {
      for (PortId in : g_.inputs(op)) {
        auto id = source_id(in, g_.path(in));
        pairs.push_back(fb::CreateIntPair(fbb_, id.first, id.second));
      }
      if (present("inputPaired", true)) paired = fbb_.CreateVector(pairs);
    }
    Offset<flatbuffers::Vector<int32_t>> output = field(rec, "output") ? ints<int32_t>(*field(rec, "output")) : Offset<flatbuffers::Vector<int32_t>>();
    const auto& L = args.lists;
    Offset<flatbuffers::Vector<double>> params;
    if (present("extraParams", !L[int(ArgList::Float)].empty())) {
      std::vector<double> v;
      for (const auto& x : L[int(ArgList::Float)]) v.push_back(x.is_int() ? static_cast<double>(x.as_int()) : x.as_float());
      params = fbb_.CreateVector(v);
    }
    Offset<flatbuffers::Vector<int64_t>> integers;
    if (present("extraInteger", !L[int(ArgList::Int)].empty())) {
      std::vector<int64_t> v;
      for (const auto& x : L[int(ArgList::Int)]) v.push_back(x.as_int());
      integers = fbb_.CreateVector(v);
    }
    Offset<flatbuffers::Vector<uint8_t>> bools;
    if (present("extraBools", !L[int(ArgList::Bool)].empty())) {
      std::vector<uint8_t> v;
      for (const auto& x : L[int(ArgList::Bool)]) v.push_back(x.as_bool());
      bools = fbb_.CreateVector(v);
    }
    const Value* dv = attr(op, kDimensions);
    Offset<flatbuffers::Vector<int32_t>> dims = dv ? ints<int32_t>(*dv) : Offset<flatbuffers::Vector<int32_t>>();
    Offset<flatbuffers::String> scope = field(rec, "scope_name") ? fbb_.CreateString(field(rec, "scope_name")->as_string()) : Offset<flatbuffers::String>();
    Offset<StrVec> out_names;
    if (present("outputNames", true)) {
      std::vector<std::string> l;
      for (PortId p : g_.outputs(op)) l.push_back(var_name(p));
      out_names = fbb_.CreateVectorOfStrings(l);
    }
    auto op_name = fbb_.CreateString(type);
    Offset<flatbuffers::Vector<int8_t>> out_types;
    if (const Value* t = field(rec, "outputTypes")) out_types = dtypes(t->as_list(), where);
    Offset<fb::FlatArray> scalar = field(rec, "scalar") ? value_to_array(fbb_, *field(rec, "scalar"), where + ": scalar") : Offset<fb::FlatArray>();
    Offset<StrVec> c1 = field(rec, "controlDeps") ? strings(*field(rec, "controlDeps")) : Offset<StrVec>();
    Offset<StrVec> c2 = field(rec, "varControlDeps") ? strings(*field(rec, "varControlDeps")) : Offset<StrVec>();
    Offset<StrVec> c3 = field(rec, "controlDepFor") ? strings(*field(rec, "controlDepFor")) : Offset<StrVec>();
    Offset<flatbuffers::Vector<int8_t>> types;
    if (present("extraTypes", !L[int(ArgList::DType)].empty())) types = dtypes(L[int(ArgList::DType)], where);
    Offset<StrVec> strs;
    if (present("extraStrings", !L[int(ArgList::String)].empty())) strs = strings(Value(L[int(ArgList::String)]));
    int64_t op_type = 0, op_num = 0;
    derived_op_number(type, op_type, op_num);
    fb::FlatNodeBuilder b(fbb_);
    b.add_id(node_id_.at(op.value));
    b.add_name(name);
    b.add_opType(static_cast<fb::OpType>(int_or(field(rec, "opType"), op_type)));
    b.add_opNum(int_or(field(rec, "opNum"), op_num));
    b.add_properties(props);
    b.add_input(input);
    b.add_inputPaired(paired);
    b.add_output(output);
    b.add_extraParams(params);
    b.add_extraInteger(integers);
    b.add_extraBools(bools);
    b.add_dimensions(dims);
    if (const Value* d = field(rec, "device")) b.add_device(static_cast<int32_t>(d->as_int()));
    if (const Value* d = field(rec, "scope_id")) b.add_scope_id(static_cast<int32_t>(d->as_int()));
    b.add_scope_name(scope);
    b.add_outputNames(out_names);
    b.add_opName(op_name);
    b.add_outputTypes(out_types);
    b.add_scalar(scalar);
    b.add_controlDeps(c1);
    b.add_varControlDeps(c2);
    b.add_controlDepFor(c3);
    b.add_extraTypes(types);
    b.add_extraStrings(strs);
    return b.Finish();
  }

  Offset<fb::FlatProperties> property(const Value& p, const std::string& where) {
    Offset<flatbuffers::String> name;
    if (const Value* x = p.find("name")) name = fbb_.CreateString(x->as_string());
    auto i = p.find("i") ? ints<int32_t>(*p.find("i")) : Offset<flatbuffers::Vector<int32_t>>();
    auto l = p.find("l") ? ints<int64_t>(*p.find("l")) : Offset<flatbuffers::Vector<int64_t>>();
    Offset<flatbuffers::Vector<double>> d;
    if (const Value* x = p.find("d")) {
      std::vector<double> v;
      for (const auto& y : x->as_list()) v.push_back(y.is_int() ? static_cast<double>(y.as_int()) : y.as_float());
      d = fbb_.CreateVector(v);
    }
    Offset<flatbuffers::Vector<Offset<fb::FlatArray>>> a;
    if (const Value* x = p.find("a")) {
      std::vector<Offset<fb::FlatArray>> v;
      for (const auto& y : x->as_list()) v.push_back(value_to_array(fbb_, y, where + ": property"));
      a = fbb_.CreateVector(v);
    }
    Offset<flatbuffers::Vector<uint8_t>> b;
    if (const Value* x = p.find("b")) {
      std::vector<uint8_t> v;
      for (const auto& y : x->as_list()) v.push_back(y.is_bool() && y.as_bool());
      b = fbb_.CreateVector(v);
    }
    auto s = p.find("s") ? strings(*p.find("s")) : Offset<StrVec>();
    auto shape = p.find("shape") ? ints<int32_t>(*p.find("shape")) : Offset<flatbuffers::Vector<int32_t>>();
    return fb::CreateFlatProperties(fbb_, name, i, l, d, a, b, s, shape);
  }

  const ir::Graph& g_;
  flatbuffers::FlatBufferBuilder fbb_{4096};
  std::vector<OpId> ops_;
  std::vector<OpId> constants_;  // `constant` ops: written as CONSTANT variables
  std::map<uint32_t, int> node_id_;
  std::map<uint32_t, std::pair<int, int>> input_id_;
};

}  // namespace

std::string write_flatgraph(const text::Document& doc) {
  if (doc.kind != text::Document::Kind::Graph) throw Error("a .fb file holds a graph, not a lone op or edge");
  return Writer(doc.graph).run();
}

}  // namespace amanda::nd4j
