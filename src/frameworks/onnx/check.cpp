// The ONNX checker's full check (onnx.checker.check_model(m, full_check=True): the structural
// check, then shape inference with type checking in strict mode) of a model about to be written
// (model.h: ExportOptions::check). A failure is an error and nothing is written: a model
// onnxruntime would refuse as invalid is not an output. Initializers whose bytes are spliced in
// at serialization (the big ones, straight from the IR) are not in the proto yet: the checked
// copy declares them as graph inputs of the same element type and shape instead, which is all
// the check reads of them.
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/support/diagnostics.h"

namespace amanda::onnx_frontend {

// A copy the checker can read: the deferred initializers declared as graph inputs (also used by
// legal_types.cpp).
onnx::ModelProto checkable_copy(const onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred) {
  onnx::ModelProto c = m;
  if (c.has_graph()) {
    auto* g = c.mutable_graph();
    google::protobuf::RepeatedPtrField<onnx::TensorProto> keep;
    for (int i = 0; i < g->initializer_size(); ++i) {
      const onnx::TensorProto& t = g->initializer(i);
      if (static_cast<size_t>(i) < deferred.size() && deferred[static_cast<size_t>(i)]) {
        onnx::ValueInfoProto* in = g->add_input();
        in->set_name(t.name());
        auto* tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(t.data_type());
        auto* shape = tt->mutable_shape();
        for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
      } else {
        *keep.Add() = t;
      }
    }
    g->mutable_initializer()->Swap(&keep);
  }
  return c;
}

// Graph outputs the reader could not type (an RNN's outputs after a packed sequence): their type
// from ONNX's shape inference, since ONNX requires one; value_info entries without a type are
// dropped (they say nothing).
void fill_missing_types(onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred) {
  if (!m.has_graph()) return;
  auto* g = m.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> vis;
  for (const auto& v : g->value_info())
    if (v.has_type()) *vis.Add() = v;
  g->mutable_value_info()->Swap(&vis);
  bool missing = false;
  for (const auto& o : g->output()) missing |= !o.has_type();
  if (!missing) return;
  onnx::ModelProto c = checkable_copy(m, deferred);
  try {
    onnx::shape_inference::InferShapes(c, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 0, false));
  } catch (const std::exception&) {
    return;  // the check says what is wrong
  }
  std::unordered_map<std::string, const onnx::TypeProto*> inferred;
  for (const auto& v : c.graph().value_info())
    if (v.has_type()) inferred[v.name()] = &v.type();
  for (const auto& v : c.graph().output())
    if (v.has_type()) inferred[v.name()] = &v.type();
  for (auto& o : *g->mutable_output())
    if (!o.has_type())
      if (auto it = inferred.find(o.name()); it != inferred.end()) *o.mutable_type() = *it->second;
}

void check_model_full(const onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred, const std::string& where) {
  // ONNX requires a shape (a rank, its dimensions may be symbolic) for every graph input and
  // output; the checker's own words ("Field 'shape' of 'type' is required") do not say which one
  // nor what to do: a source without shapes (a TorchScript module) needs them from the user.
  if (m.has_graph())
    for (const auto* list : {&m.graph().input(), &m.graph().output()})
      for (const auto& v : *list)
        if (v.type().has_tensor_type() && !v.type().tensor_type().has_shape())
          throw Error(where + "error: the converted model's graph " + (list == &m.graph().input() ? "input '" : "output '") + v.name() +
                      "' has no known rank, which ONNX requires of graph inputs and outputs, so it is not written (give the "
                      "inputs' shapes, e.g. --input-shape 1,3,224,224; a dimension may be a name such as N)");
  onnx::ModelProto c = checkable_copy(m, deferred);
  try {
    onnx::checker::check_model(c);
    onnx::shape_inference::InferShapes(c, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    throw Error(where + "error: the converted model fails the ONNX checker (full check), so it is not written: " + what);
  }
}

}  // namespace amanda::onnx_frontend
