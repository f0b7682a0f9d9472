// ONNX type and shape inference over ir::Graph (see infer.h). The InferenceContext reads the graph
// directly: input types from the producers' ports, input data from initializer ports and Constant
// outputs, attributes converted one by one when a function asks for them.
#include "amanda/frameworks/onnx/infer.h"

#include <deque>
#include <memory>
#include <unordered_map>

#include <absl/container/flat_hash_map.h>
#include <absl/container/node_hash_map.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/tensor_proto_util.h>
#include <onnx/shape_inference/implementation.h>

#include "amanda/support/diagnostics.h"
#include "data_prop.h"
#include "proto_util.h"
#include "schema_index.h"

namespace amanda::onnx_frontend {

using ir::OpId;
using ir::PortId;
using ir::Value;
using namespace detail;

namespace {

class Inferrer;

class SubgraphInferencer : public onnx::GraphInferencer {
 public:
  SubgraphInferencer(Inferrer& inf, OpId graph) : inf_(inf), graph_(graph) {}
  std::vector<const onnx::TypeProto*> doInferencing(const std::vector<const onnx::TypeProto*>& input_types,
                                                    const std::vector<const onnx::TensorProto*>& input_data) override;

 private:
  Inferrer& inf_;
  OpId graph_;
};

class Context : public onnx::InferenceContext {
 public:
  Context(Inferrer& inf, OpId op) : inf_(inf), op_(op) {}
  const onnx::AttributeProto* getAttribute(const std::string& name) const override;
  size_t getNumInputs() const override { return srcs_.size(); }
  const onnx::TypeProto* getInputType(size_t i) const override;
  const onnx::TensorProto* getInputData(size_t i) const override;
  size_t getNumOutputs() const override { return outs_.size(); }
  onnx::TypeProto* getOutputType(size_t i) override {
    if (i >= outs_.size()) fail_type_inference("output ", i, " is out of bounds");
    return &outs_[i];
  }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& name) override;
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t i) const override;

  std::vector<PortId> srcs_;  // the producer of each data input (0: none)
  std::vector<onnx::TypeProto> outs_;

 private:
  Inferrer& inf_;
  OpId op_;
  mutable std::vector<std::pair<std::string, std::unique_ptr<onnx::AttributeProto>>> attrs_;
  std::vector<std::pair<std::string, std::unique_ptr<SubgraphInferencer>>> subs_;
};

// onnx's DataPropagationContextImpl over our graph: an op's inputs as the values propagated so
// far (or its initializer/Constant data when that is an integer scalar or vector); the outputs'
// values go to Inferrer::shape_data_.
class PropContext : public onnx::DataPropagationContext {
 public:
  PropContext(Inferrer& inf, Context& ctx, const std::vector<PortId>& outs) : inf_(inf), ctx_(ctx), outs_(outs) {}
  const onnx::AttributeProto* getAttribute(const std::string& name) const override { return ctx_.getAttribute(name); }
  size_t getNumInputs() const override { return ctx_.getNumInputs(); }
  const onnx::TypeProto* getInputType(size_t i) const override { return ctx_.getInputType(i); }
  size_t getNumOutputs() const override { return outs_.size(); }
  const onnx::TypeProto* getOutputType(size_t i) const override {
    // As in libonnx: the propagation context's output types are empty.
    if (i >= outs_.size()) fail_shape_inference("output ", i, " is out of bounds");
    static const onnx::TypeProto empty;
    return &empty;
  }
  const onnx::TensorShapeProto* getInputData(size_t i) override;
  void addOutputData(size_t i, onnx::TensorShapeProto&& tp) override;

 private:
  Inferrer& inf_;
  Context& ctx_;
  const std::vector<PortId>& outs_;
};

class Inferrer {
 public:
  Inferrer(ir::Graph& g, const InferOptions& o) : g_(g), opt_(o) {
    ty_.assign(g.port_id_bound(), nullptr);
    loaded_.assign(g.port_id_bound(), 0);
    changed_.assign(g.port_id_bound(), 0);
    s_initializer_ = find("initializer");
    s_at_initializer_ = find("@initializer");
    s_graph_input_ = find("graph_input");
    s_op_type_ = find("@op_type");
    s_domain_ = find("@domain");
    s_value_ = find("@value");
    s_value_attr_ = find("value");
    OpId root = g.root();
    if (const Value* v = attr(root, "ir_version"); v && v->is_int()) ir_version_ = static_cast<int>(v->as_int());
    if (const Value* v = attr(root, "opset_import"); v && v->is_list()) {
      for (const auto& e : v->as_list()) {
        const Value* d = e.find("domain");
        const Value* ver = e.find("version");
        std::string dom = d && d->is_string() ? d->as_string() : "";
        if (ver && ver->is_int() && !opsets_.count(dom)) opsets_[dom] = static_cast<int>(ver->as_int());
      }
    } else {
      // A graph made in the namespace, not read from a file: amanda/onnx/V.
      std::string_view ns = g.str(g.graph_namespace(root));
      if (ns.starts_with("amanda/onnx/")) {
        try {
          opsets_[""] = std::stoi(std::string(ns.substr(12)));
        } catch (const std::exception&) {
        }
      }
    }
    if (const Value* v = attr(root, "functions"); v && v->is_list())
      for (const auto& e : v->as_list()) {
        auto f = std::make_unique<onnx::FunctionProto>();
        try {
          export_function(g, e, *f);
        } catch (const std::exception&) {
          continue;
        }
        std::string id = f->domain() + ":" + f->name();
        local_map_[id] = f.get();
        local_.push_back(std::move(f));
      }
  }

  InferResult run() {
    infer_scope(g_.root());
    write_back();
    return std::move(res_);
  }

  // ---- what Context and SubgraphInferencer use

  ir::Graph& g_;
  const InferOptions& opt_;

  const Value* attr(OpId op, std::string_view k) const {
    Symbol s = g_.symbols().find(k);
    return s == SymbolTable::kNone ? nullptr : g_.attr(op, s);
  }
  const Value* attr(PortId p, Symbol s) const { return s == SymbolTable::kNone ? nullptr : g_.attr(p, s); }
  Symbol find(std::string_view k) const { return g_.symbols().find(k); }

  // The port whose value an input reads: its producer, through capture ports to the outer value.
  PortId source(PortId in) const {
    PortId p = g_.producer(in);
    while (p && g_.port_dir(p) == ir::PortDir::In && !g_.is_graph(g_.port_op(p))) p = g_.producer(p);
    return p;
  }

  onnx::TypeProto* type_of(PortId p) {
    if (!loaded_[p.value]) {
      loaded_[p.value] = 1;
      if (ir::TypeId t = g_.port_type(p)) {
        onnx::TypeProto& tp = pool_.emplace_back();
        type_to_proto(g_, t, tp);
        ty_[p.value] = &tp;
      }
    }
    return ty_[p.value];
  }
  onnx::TypeProto* new_type(PortId p) {
    loaded_[p.value] = 1;
    ty_[p.value] = &pool_.emplace_back();
    return ty_[p.value];
  }

  const onnx::TensorProto* data_of(PortId p) {
    if (!p) return nullptr;
    if (auto it = data_.find(p.value); it != data_.end()) return it->second.get();
    std::unique_ptr<onnx::TensorProto> t;
    OpId op = g_.port_op(p);
    if (g_.port_dir(p) == ir::PortDir::In && g_.is_graph(op)) {
      if (const Value* v = attr(p, s_initializer_)) {
        const Value* m = attr(p, s_at_initializer_);
        t = std::make_unique<onnx::TensorProto>();
        try {
          tensor_to_proto(*v, m && m->is_map() ? &m->as_map() : nullptr, *t);
        } catch (const std::exception&) {
          t.reset();
        }
      }
    } else if (g_.port_dir(p) == ir::PortDir::Out && is_constant(op) && g_.outputs(op).size() == 1) {
      const Value* v = s_value_attr_ == SymbolTable::kNone ? nullptr : g_.attr(op, s_value_attr_);
      if (v && big_constant_value(op, "value", v, attr(op, "@attr.value"))) {
        data_.emplace(p.value, nullptr);
        return nullptr;
      }
      Context c(*this, op);
      if (const onnx::AttributeProto* a = c.getAttribute("value"); a && a->type() == onnx::AttributeProto::TENSOR && a->has_t())
        t = std::make_unique<onnx::TensorProto>(a->t());
    }
    const onnx::TensorProto* r = t.get();
    data_.emplace(p.value, std::move(t));
    return r;
  }

  // The propagated value of p (data propagation), or its integer scalar/vector data converted
  // (and kept) the way libonnx's DataPropagationContextImpl::getInputData does.
  const onnx::TensorShapeProto* shape_data(PortId p) {
    if (!p) return nullptr;
    if (auto it = shape_data_.find(p.value); it != shape_data_.end()) return &it->second;
    const onnx::TensorProto* t = data_of(p);
    if (!t || t->dims_size() > 1) return nullptr;
    onnx::TensorShapeProto tsp;
    if (t->data_type() == onnx::TensorProto::INT64) {
      for (int64_t v : onnx::ParseData<int64_t>(t)) tsp.add_dim()->set_dim_value(v);
    } else if (t->data_type() == onnx::TensorProto::INT32) {
      for (int32_t v : onnx::ParseData<int32_t>(t)) tsp.add_dim()->set_dim_value(v);
    } else {
      return nullptr;
    }
    return &shape_data_.emplace(p.value, std::move(tsp)).first->second;
  }
  // What an inference function sees as getSymbolicInput: propagated values only (an input with
  // initializer or Constant data is read through getInputData instead, as in libonnx).
  const onnx::TensorShapeProto* symbolic_input(PortId p) {
    if (!opt_.data_propagation || !p || data_of(p)) return nullptr;
    auto it = shape_data_.find(p.value);
    return it == shape_data_.end() ? nullptr : &it->second;
  }
  // port -> propagated value; a node map, because a function holds the pointer to one input's
  // value while asking for the next (which may insert).
  absl::node_hash_map<uint32_t, onnx::TensorShapeProto> shape_data_;

  // A Constant's `value` tensor too big to be data any inference function reads (shapes, pads,
  // repeats, axes are a few elements): typed from its dims, never copied into a proto. A tensor
  // whose proto is kept whole (an unusual encoding) is not.
  static constexpr size_t kBigConstantBytes = 4096;
  bool big_constant_value(OpId op, std::string_view name, const Value* v, const Value* meta) const {
    if (name != "value" || !v || !v->is_tensor() || g_.type_str(op) != "Constant") return false;
    const ir::Tensor& t = v->as_tensor();
    if (t.dtype == ir::DType::String || t.size <= kBigConstantBytes) return false;
    if (meta && meta->is_map())
      if (const Value* tm = map_find(&meta->as_map(), "tensor"); tm && tm->is_map() && map_find(&tm->as_map(), "proto"))
        return false;
    return true;
  }

  bool is_constant(OpId op) const {
    for (PortId p : g_.outputs(op))
      if (g_.port_role(p) == ir::PortRole::Constant) return true;
    return g_.type_str(op) == "Constant";  // a graph read from text, where roles are not stored
  }

  void op_identity(OpId op, std::string& domain, std::string& type) const {
    std::string_view t = g_.type_str(op);
    size_t sep = t.rfind("::");
    const Value* raw = g_.attr(op, s_op_type_);
    if (s_op_type_ != SymbolTable::kNone && raw && raw->is_string()) {
      type = raw->as_string();
      domain = t.size() > type.size() + 2 && t.ends_with("::" + type) ? std::string(t.substr(0, t.size() - type.size() - 2)) : "";
    } else if (sep != std::string_view::npos) {
      domain = std::string(t.substr(0, sep));
      type = std::string(t.substr(sep + 2));
    } else {
      domain.clear();
      type = std::string(t);
    }
    if (s_domain_ != SymbolTable::kNone)
      if (const Value* d = g_.attr(op, s_domain_); d && d->is_string()) domain = d->as_string();
  }

  // Declared and initializer types of a scope's inputs; then every op in body order.
  void infer_scope(OpId scope) {
    for (PortId p : g_.inputs(scope)) {
      if (g_.is_control(p)) continue;
      if (type_of(p)) continue;
      // An initializer that is not also a graph input (IR version 4 on) has its tensor's type.
      const Value* init = attr(p, s_initializer_);
      const Value* gi = attr(p, s_graph_input_);
      bool input_too = !gi || !gi->is_bool() || gi->as_bool();
      if (init && init->is_tensor() && !input_too && ir_version_ >= 4) {
        const ir::Tensor& t = init->as_tensor();
        onnx::TypeProto* tp = new_type(p);
        tp->mutable_tensor_type()->set_elem_type(elem_of(t.dtype));
        auto* s = tp->mutable_tensor_type()->mutable_shape();
        for (int64_t d : t.shape) s->add_dim()->set_dim_value(d);
        changed_[p.value] = 2;  // typed, but nothing to write: ONNX keeps no value_info for it
      }
    }
    for (OpId op = g_.first_child(scope); op; op = g_.next_sibling(op)) infer_op(scope, op);
    // Outputs that no declaration typed take the type of what feeds them.
    for (PortId q : g_.outputs(scope)) {
      if (g_.is_control(q) || type_of(q)) continue;
      PortId src = source(q);
      if (src && type_of(src)) {
        *new_type(q) = *type_of(src);
        changed_[q.value] = 1;
      }
    }
  }

  // What an op type resolves to; looked up once per distinct type (and per @op_type/@domain
  // override, which are rare and not cached).
  struct Resolved {
    std::string domain, type;
    const onnx::OpSchema* schema = nullptr;
    const onnx::FunctionProto* local = nullptr;
  };
  Resolved resolve(OpId op) {
    Resolved r;
    op_identity(op, r.domain, r.type);
    auto dit = opsets_.find(r.domain);
    if (dit == opsets_.end()) return r;
    r.schema = detail::schema(r.type, dit->second, r.domain);
    if (!r.schema)
      if (auto it = local_map_.find(r.domain + ":" + r.type); it != local_map_.end()) r.local = it->second;
    return r;
  }
  const Resolved& resolved(OpId op) {
    bool plain = (s_op_type_ == SymbolTable::kNone || !g_.attr(op, s_op_type_)) && (s_domain_ == SymbolTable::kNone || !g_.attr(op, s_domain_));
    if (!plain) return scratch_ = resolve(op);
    auto [it, fresh] = resolved_.try_emplace(g_.type(op));
    if (fresh) it->second = resolve(op);
    return it->second;
  }

  void infer_op(OpId scope, OpId op) {
    ++res_.ops;
    const Resolved* rsp = &resolved(op);
    Resolved own;  // scratch_ is reused by the ops of a subgraph this op's inference visits
    if (rsp == &scratch_) {
      own = scratch_;
      rsp = &own;
    }
    const Resolved& rs = *rsp;
    const onnx::OpSchema* schema = rs.schema;
    const onnx::FunctionProto* local = rs.local;
    const std::string& domain = rs.domain;
    const std::string& type = rs.type;
    if (!schema && !local) {
      ++res_.no_schema;
      return;
    }
    Context ctx(*this, op);
    for (PortId p : g_.inputs(op)) {
      if (g_.is_control(p) || g_.port_name_str(p).starts_with(kCapturePrefix)) continue;
      ctx.srcs_.push_back(source(p));
    }
    std::vector<PortId> outs;
    for (PortId p : g_.outputs(op))
      if (!g_.is_control(p)) outs.push_back(p);
    ctx.outs_.resize(outs.size());
    try {
      if (local) {
        std::unordered_map<std::string, int> fops;
        for (const auto& o : local->opset_import()) fops[o.domain()] = static_cast<int>(o.version());
        onnx::shape_inference::InferShapeForFunctionNode(*local, fops, onnx::OpSchemaRegistry::Instance(), ctx, {}, local_map_);
      } else if (schema->has_type_and_shape_inference_function()) {
        schema->GetTypeAndShapeInferenceFunction()(ctx);
      } else if (schema->HasFunction()) {
        onnx::shape_inference::InferShapeForFunctionNode(*schema->GetFunction(), onnx::OpSchemaRegistry::Instance(), ctx, {}, local_map_);
      } else {
        return;
      }
      if (opt_.data_propagation && schema && (domain.empty() || domain == "ai.onnx") && !ctx.outs_.empty() &&
          !(ctx.outs_[0].has_tensor_type() && ctx.outs_[0].tensor_type().has_shape()))
        if (const detail::ShapeFromDataFn* f = detail::shape_from_data(type)) (*f)(ctx, ctx.outs_[0]);
      for (size_t i = 0; i < outs.size(); ++i) merge_output(scope, outs[i], ctx.outs_[i]);
      if (opt_.data_propagation && schema) propagate(schema, domain, type, ctx, outs);
      ++res_.inferred;
    } catch (const std::exception& e) {
      res_.errors.push_back(g_.path(op) + " (" + (domain.empty() ? type : domain + "::" + type) + "): " + e.what());
    }
  }

  // libonnx's data propagation function of the op, else ours (data_prop.h) for an ai.onnx op.
  void propagate(const onnx::OpSchema* schema, const std::string& domain, const std::string& type, Context& ctx,
                 const std::vector<PortId>& outs) {
    PropContext pc(*this, ctx, outs);
    if (schema->has_data_propagation_function()) {
      schema->GetDataPropagationFunction()(pc);
    } else if (domain.empty() || domain == "ai.onnx") {
      if (const detail::DataPropFn* f = detail::extra_data_propagation(type)) (*f)(pc);
    }
  }

  // onnx's rule: the declared type of the value (a graph output's, else its value_info) is merged
  // with the inferred one and then stands for the value.
  void merge_output(OpId scope, PortId p, const onnx::TypeProto& inferred) {
    if (inferred.value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
    PortId graph_out;
    for (ir::EdgeId e = g_.first_out_edge(p); e; e = g_.next_out_edge(e)) {
      PortId d = g_.edge_dst(e);
      if (g_.port_op(d) == scope && g_.port_dir(d) == ir::PortDir::Out) {
        graph_out = d;
        break;
      }
    }
    if (graph_out && type_of(graph_out)) {
      onnx::shape_inference::mergeShapesAndTypes(inferred, type_of(graph_out));
      changed_[graph_out.value] = 1;
      ty_[p.value] = ty_[graph_out.value];  // consumers read the merged type; no value_info of its own
      loaded_[p.value] = 1;
      changed_[p.value] = 2;
      return;
    }
    onnx::TypeProto* existing = type_of(p);
    if (!existing) existing = new_type(p);
    onnx::shape_inference::mergeShapesAndTypes(inferred, existing);
    changed_[p.value] = 1;
    if (graph_out) {  // an untyped graph output takes the type too
      *new_type(graph_out) = *existing;
      changed_[graph_out.value] = 1;
    }
  }

  std::vector<const onnx::TypeProto*> infer_subgraph(OpId gn, const std::vector<const onnx::TypeProto*>& input_types) {
    std::vector<PortId> ins;
    for (PortId p : g_.inputs(gn)) {
      if (g_.is_control(p)) continue;
      const Value* gi = attr(p, s_graph_input_);
      if (gi && gi->is_bool() && !gi->as_bool()) continue;  // an initializer only
      ins.push_back(p);
    }
    if (ins.size() != input_types.size())
      fail_type_inference("graph has ", ins.size(), " inputs but ", input_types.size(), " were provided");
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!input_types[i]) continue;
      onnx::TypeProto* t = type_of(ins[i]);
      if (!t) t = new_type(ins[i]);
      onnx::shape_inference::mergeShapesAndTypes(*input_types[i], t);
      changed_[ins[i].value] = 1;
    }
    infer_scope(gn);
    std::vector<const onnx::TypeProto*> r;
    static const onnx::TypeProto empty;
    for (PortId q : g_.outputs(gn))
      if (!g_.is_control(q)) r.push_back(type_of(q) ? type_of(q) : &empty);
    return r;
  }

  void write_back() {
    Symbol keys[4] = {g_.sym("type"), g_.sym("shape"), g_.sym("@type"), g_.sym("@shape")};
    for (uint32_t i = 1; i < ty_.size(); ++i) {
      PortId p(i);
      if (!ty_[i] || !g_.valid(p)) continue;
      if (g_.port_dir(p) == ir::PortDir::Out) ++res_.typed_ports;
      if (!changed_[i]) continue;
      ir::TypeId tid = type_from_proto(g_, *ty_[i]);
      g_.set_port_type(p, tid);
      if (changed_[i] != 1 || !opt_.write_attrs) continue;
      if (ty_[i]->has_tensor_type()) {
        // The common case: the attributes of a tensor type, made once per distinct type.
        auto [it, fresh] = attr_cache_.try_emplace(tid.value);
        if (fresh) {
          auto ts = type_string(*ty_[i]);
          it->second.first = ts ? Value(*ts) : Value();
          if (ty_[i]->tensor_type().has_shape()) {
            Value::List dims;
            for (const auto& d : ty_[i]->tensor_type().shape().dim()) {
              if (d.has_dim_value()) dims.push_back(Value(static_cast<int64_t>(d.dim_value())));
              else if (d.has_dim_param()) dims.push_back(Value(d.dim_param()));
              else dims.push_back(Value());
            }
            it->second.second = Value(std::move(dims));
          }
        }
        if (it->second.first.is_null()) continue;
        bool gp = g_.is_graph(g_.port_op(p));
        g_.set_attr(p, keys[gp ? 0 : 2], it->second.first);
        if (it->second.second.is_null()) g_.erase_attr(p, keys[gp ? 1 : 3]);
        else g_.set_attr(p, keys[gp ? 1 : 3], it->second.second);
        continue;
      }
      bool gp = g_.is_graph(g_.port_op(p));
      Symbol tk = keys[gp ? 0 : 2], sk = keys[gp ? 1 : 3];
      auto ts = type_string(*ty_[i]);
      if (!ts) continue;
      if (!ty_[i]->has_tensor_type() && !ty_[i]->has_sparse_tensor_type()) {
        // A sequence, optional or map: the type string cannot hold the shapes inside, so the
        // whole value info goes along (the exporter prefers it to the readable attributes).
        onnx::ValueInfoProto vi;
        const Value* name = attr(p, s_value_);
        vi.set_name(name && name->is_string() ? name->as_string() : std::string(g_.port_name_str(p)));
        *vi.mutable_type() = *ty_[i];
        g_.set_attr(p, g_.sym("@value_info"), Value(base64_encode(vi.SerializeAsString())));
      }
      g_.set_attr(p, tk, Value(*ts));
      const onnx::TensorShapeProto* sp = nullptr;
      if (ty_[i]->has_tensor_type() && ty_[i]->tensor_type().has_shape()) sp = &ty_[i]->tensor_type().shape();
      if (ty_[i]->has_sparse_tensor_type() && ty_[i]->sparse_tensor_type().has_shape()) sp = &ty_[i]->sparse_tensor_type().shape();
      if (!sp) {
        g_.erase_attr(p, sk);
        continue;
      }
      Value::List dims;
      for (const auto& d : sp->dim()) {
        if (d.has_dim_value()) dims.push_back(Value(static_cast<int64_t>(d.dim_value())));
        else if (d.has_dim_param()) dims.push_back(Value(d.dim_param()));
        else dims.push_back(Value());
      }
      g_.set_attr(p, sk, Value(std::move(dims)));
    }
  }

 private:
  std::unordered_map<std::string, int> opsets_;
  int ir_version_ = 8;
  std::vector<std::unique_ptr<onnx::FunctionProto>> local_;
  onnx::shape_inference::ModelLocalFunctionsMap local_map_;
  std::deque<onnx::TypeProto> pool_;
  std::vector<onnx::TypeProto*> ty_;
  std::vector<uint8_t> loaded_, changed_;  // changed_: 1 inferred (write it), 2 typed only
  absl::flat_hash_map<uint32_t, std::unique_ptr<onnx::TensorProto>> data_;
  Symbol s_initializer_, s_at_initializer_, s_graph_input_, s_op_type_, s_domain_, s_value_, s_value_attr_;
  InferResult res_;
  // A node map: infer_op keeps a reference to its op's entry while subgraph inference inserts.
  absl::node_hash_map<Symbol, Resolved> resolved_;
  absl::flat_hash_map<uint32_t, std::pair<Value, Value>> attr_cache_;  // TypeId -> (@type, @shape)
  Resolved scratch_;
};

const onnx::AttributeProto* Context::getAttribute(const std::string& name) const {
  for (const auto& [n, a] : attrs_)
    if (n == name) return a.get();
  ir::Graph& g = inf_.g_;
  Symbol s = g.symbols().find(name);
  const Value* v = s == SymbolTable::kNone || is_annotation(name) ? nullptr : g.attr(op_, s);
  std::unique_ptr<onnx::AttributeProto> a;
  if (v) {
    a = std::make_unique<onnx::AttributeProto>();
    const Value* meta = inf_.attr(op_, "@attr." + name);
    static const Value::Map none;
    if (inf_.big_constant_value(op_, name, v, meta)) {
      // A Constant's weights: its inference reads only the element type and dims, and data_of
      // gives no data for it (no inference function reads a tensor this big), so the bytes are
      // not copied into a proto (every round of `amanda optimize` types the graph again).
      const ir::Tensor& t = v->as_tensor();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::TENSOR);
      for (int64_t d : t.shape) a->mutable_t()->add_dims(d);
      a->mutable_t()->set_data_type(elem_of(t.dtype));
      const onnx::AttributeProto* r = a.get();
      attrs_.emplace_back(name, std::move(a));
      return r;
    }
    attr_to_proto(name, *v, meta && meta->is_map() ? meta->as_map() : none, *a,
                  [&g](OpId gn, onnx::GraphProto& gp) { export_graph_proto(g, gn, gp); });
  }
  const onnx::AttributeProto* r = a.get();
  attrs_.emplace_back(name, std::move(a));
  return r;
}

const onnx::TypeProto* Context::getInputType(size_t i) const {
  if (i >= srcs_.size()) fail_type_inference("input ", i, " is out of bounds");
  return srcs_[i] ? inf_.type_of(srcs_[i]) : nullptr;
}

const onnx::TensorProto* Context::getInputData(size_t i) const {
  if (i >= srcs_.size()) fail_type_inference("input ", i, " is out of bounds");
  return inf_.data_of(srcs_[i]);
}

const onnx::TensorShapeProto* Context::getSymbolicInput(size_t i) const {
  if (i >= srcs_.size()) fail_type_inference("input ", i, " is out of bounds");
  return inf_.symbolic_input(srcs_[i]);
}

const onnx::TensorShapeProto* PropContext::getInputData(size_t i) {
  if (i >= ctx_.srcs_.size()) fail_shape_inference("input ", i, " is out of bounds");
  return inf_.shape_data(ctx_.srcs_[i]);
}

void PropContext::addOutputData(size_t i, onnx::TensorShapeProto&& tp) {
  if (i >= outs_.size()) fail_shape_inference("output ", i, " is out of bounds");
  if (!inf_.shape_data_.emplace(outs_[i].value, std::move(tp)).second)
    fail_shape_inference("data for output ", i, " already exists");
}

onnx::GraphInferencer* Context::getGraphAttributeInferencer(const std::string& name) {
  for (auto& [n, s] : subs_)
    if (n == name) return s.get();
  ir::Graph& g = inf_.g_;
  Symbol s = g.symbols().find(name);
  const Value* v = s == SymbolTable::kNone ? nullptr : g.attr(op_, s);
  if (!v || !v->is_graph()) fail_type_inference("attribute ", name, " does not contain a graph");
  subs_.emplace_back(name, std::make_unique<SubgraphInferencer>(inf_, v->as_graph()));
  return subs_.back().second.get();
}

std::vector<const onnx::TypeProto*> SubgraphInferencer::doInferencing(const std::vector<const onnx::TypeProto*>& input_types,
                                                                      const std::vector<const onnx::TensorProto*>&) {
  return inf_.infer_subgraph(graph_, input_types);
}

}  // namespace

InferResult infer_types(ir::Graph& g, const InferOptions& options) {
  Inferrer inf(g, options);
  return inf.run();
}

}  // namespace amanda::onnx_frontend
