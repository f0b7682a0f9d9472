// SavedModel directories (savedmodel.h, docs/tensorflow.md "SavedModel"). The chosen meta graph's
// GraphDef goes through the GraphDef importer; everything else of saved_model.pb is kept in the
// root attribute `saved_model`, and the variables' bundle (bundle.h) becomes tensors there.
#include "amanda/frameworks/tensorflow/savedmodel.h"

#include <algorithm>
#include <filesystem>

#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/support/base64.h"
#include "amanda/support/diagnostics.h"
#include "amanda_tf_saved_model.pb.h"
#include "bundle.h"
#include "values.h"

namespace amanda::tf_frontend {

using namespace detail;
using ir::OpId;
using ir::Value;
namespace tf = tensorflow;
namespace fs = std::filesystem;

namespace {

constexpr const char* kAttr = "saved_model";
constexpr const char* kServingMethod = "tensorflow/serving/predict";

// ------------------------------------------------------------------ signatures <-> values

Value tensor_info(const tf::TensorInfo& t) {
  Value::Map m;
  if (t.encoding_case() == tf::TensorInfo::kName) m.push_back({"name", Value(t.name())});
  if (auto n = dtype_name(t.dtype())) m.push_back({"dtype", Value(std::string(*n))});
  else if (t.dtype() != 0) return Value();
  if (t.has_tensor_shape()) {
    auto s = shape_value(t.tensor_shape());
    if (!s) return Value();
    m.push_back({"shape", std::move(*s)});
  }
  return Value(std::move(m));
}

bool tensor_info_proto(const Value& v, tf::TensorInfo& t) {
  if (!v.is_map()) return false;
  if (const Value* n = v.find("name")) {
    if (!n->is_string()) return false;
    t.set_name(n->as_string());
  }
  if (const Value* d = v.find("dtype")) {
    auto dt = d->is_string() ? dtype_from_name(d->as_string()) : std::nullopt;
    if (!dt) return false;
    t.set_dtype(*dt);
  }
  if (const Value* s = v.find("shape"))
    if (!shape_proto(*s, *t.mutable_tensor_shape())) return false;
  return true;
}

template <class M>
std::vector<std::string> sorted_keys(const M& m) {
  std::vector<std::string> k;
  for (const auto& kv : m) k.push_back(kv.first);
  std::sort(k.begin(), k.end());
  return k;
}

// The signature map as {name: {inputs: {key: {name, dtype, shape}}, outputs: ..., method_name}};
// null when a part has no readable form (a sparse or composite tensor, a named dimension).
Value signatures(const google::protobuf::Map<std::string, tf::SignatureDef>& sigs) {
  Value::Map out;
  for (const auto& name : sorted_keys(sigs)) {
    const tf::SignatureDef& s = sigs.at(name);
    Value::Map m;
    for (auto [key, part] : {std::pair{"inputs", &s.inputs()}, std::pair{"outputs", &s.outputs()}}) {
      Value::Map io;
      for (const auto& k : sorted_keys(*part)) {
        Value t = tensor_info(part->at(k));
        if (t.is_null()) return Value();
        io.push_back({k, std::move(t)});
      }
      m.push_back({key, Value(std::move(io))});
    }
    m.push_back({"method_name", Value(s.method_name())});
    out.push_back({name, Value(std::move(m))});
  }
  return Value(std::move(out));
}

bool signatures_proto(const Value& v, google::protobuf::Map<std::string, tf::SignatureDef>& out) {
  if (!v.is_map()) return false;
  for (const auto& e : v.as_map()) {
    if (!e.value.is_map()) return false;
    tf::SignatureDef& s = out[e.key];
    for (auto [key, part] : {std::pair{"inputs", s.mutable_inputs()}, std::pair{"outputs", s.mutable_outputs()}}) {
      const Value* io = e.value.find(key);
      if (!io) continue;
      if (!io->is_map()) return false;
      for (const auto& t : io->as_map())
        if (!tensor_info_proto(t.value, (*part)[t.key])) return false;
    }
    if (const Value* m = e.value.find("method_name")) {
      if (!m->is_string()) return false;
      s.set_method_name(m->as_string());
    }
  }
  return true;
}

// A graph that has no signature yet (a frozen GraphDef): serving_default with the Placeholders
// as inputs and the outputs nobody reads (of ops other than NoOp) as outputs, as TensorFlow's
// simple_save would name them ("node:k").
void default_signature(const ir::Graph& g, tf::SignatureDef& s) {
  s.set_method_name(kServingMethod);
  auto attr = [&](OpId op, std::string_view key) -> const Value* {
    for (const auto& [k, v] : g.attrs(op))
      if (g.str(k) == key) return &v;
    return nullptr;
  };
  for (OpId op = g.first_child(g.root()); op; op = g.next_sibling(op)) {
    std::string name(g.name_str(op));
    if (g.type_str(op) == "Placeholder") {
      tf::TensorInfo& t = (*s.mutable_inputs())[name];
      t.set_name(name + ":0");
      if (const Value* d = attr(op, "dtype"); d && d->is_string())
        if (auto dt = dtype_from_name(d->as_string())) t.set_dtype(*dt);
      if (const Value* sh = attr(op, "shape")) shape_proto(*sh, *t.mutable_tensor_shape());
      continue;
    }
    if (g.type_str(op) == "NoOp") continue;
    auto outs = g.outputs(op);
    for (size_t k = 0; k < outs.size(); ++k) {
      if (g.is_control(outs[k]) || g.first_out_edge(outs[k])) continue;
      std::string key = outs.size() == 1 ? name : name + ":" + std::to_string(k);
      tf::TensorInfo& t = (*s.mutable_outputs())[key];
      t.set_name(name + ":" + std::to_string(k));
      // The dtype when the op says it in one attribute (T or dtype: Identity, Softmax, ...).
      for (const char* a : {"T", "dtype"})
        if (const Value* d = attr(op, a); d && d->is_string() && outs.size() == 1)
          if (auto dt = dtype_from_name(d->as_string())) {
            t.set_dtype(*dt);
            break;
          }
    }
  }
}

// ------------------------------------------------------------------ import

text::Document import(std::string_view pb, const std::string& dir, const SavedModelOptions& opt,
                      const std::function<std::optional<std::vector<BundleTensor>>()>& variables) {
  std::string file = (fs::path(dir) / "saved_model.pb").string();
  tf::SavedModel sm;
  if (pb.size() > static_cast<size_t>(INT32_MAX) || !sm.ParseFromArray(pb.data(), static_cast<int>(pb.size())))
    throw ParseError(SourceLoc{file, 0, 0}, "not a TensorFlow SavedModel (a truncated or corrupt protobuf)");
  if (sm.meta_graphs_size() == 0) throw Error(file + ": error: a SavedModel without a meta graph");
  int chosen = -1;
  std::string all_tags;
  for (int i = 0; i < sm.meta_graphs_size() && chosen < 0; ++i) {
    for (const auto& t : sm.meta_graphs(i).meta_info_def().tags()) {
      if (t == opt.tag) chosen = i;
      all_tags += (all_tags.empty() ? "" : ", ") + t;
    }
  }
  if (chosen < 0)
    throw Error(file + ": error: no meta graph is tagged '" + opt.tag + "' (tags: " + (all_tags.empty() ? "none" : all_tags) + ")");
  tf::MetaGraphDef* mg = sm.mutable_meta_graphs(chosen);
  ImportOptions io;
  io.file_name = file;
  text::Document doc = import_graph_bytes(mg->graph_def(), io);
  ir::Graph& g = doc.graph;
  Value::Map attr;
  if (sm.saved_model_schema_version()) attr.push_back({"schema_version", Value(static_cast<int64_t>(sm.saved_model_schema_version()))});
  Value::List tags;
  for (const auto& t : mg->meta_info_def().tags()) tags.push_back(Value(t));
  attr.push_back({"tags", Value(std::move(tags))});
  // Signatures readable when they convert back exactly; else whole.
  Value sig = signatures(mg->signature_def());
  bool exact = false;
  if (!sig.is_null()) {
    tf::MetaGraphDef a, b;
    *a.mutable_signature_def() = mg->signature_def();
    exact = signatures_proto(sig, *b.mutable_signature_def()) && serialize(a) == serialize(b);
  }
  if (exact) {
    attr.push_back({"signature_def", std::move(sig)});
  } else {
    tf::MetaGraphDef a;
    *a.mutable_signature_def() = mg->signature_def();
    attr.push_back({"@signature_def", Value(base64_encode(serialize(a)))});
  }
  // The rest of the meta graph (meta_info_def but its tags, saver_def, collection_def, assets, the
  // object graph), whole.
  mg->clear_graph_def();
  mg->clear_signature_def();
  mg->mutable_meta_info_def()->clear_tags();
  if (mg->meta_info_def().ByteSizeLong() == 0) mg->clear_meta_info_def();
  if (mg->ByteSizeLong()) attr.push_back({"meta_graph", Value(base64_encode(serialize(*mg)))});
  if (sm.meta_graphs_size() > 1) {
    Value::List others;
    for (int i = 0; i < sm.meta_graphs_size(); ++i)
      if (i != chosen) others.push_back(Value(base64_encode(serialize(sm.meta_graphs(i)))));
    attr.push_back({"meta_graph_index", Value(static_cast<int64_t>(chosen))});
    attr.push_back({"other_meta_graphs", Value(std::move(others))});
  }
  if (auto vars = variables()) {
    Value::Map m;
    m.reserve(vars->size());
    for (auto& t : *vars) m.push_back({std::move(t.key), Value(std::move(t.value))});
    attr.push_back({"variables", Value(std::move(m))});
  }
  g.set_attr(g.root(), g.sym(kAttr), Value(std::move(attr)));
  return doc;
}

std::string trim_slash(std::string_view p) {
  std::string s(p);
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// The SavedModel's directory for a path the reader or writer was given.
std::string model_dir(std::string_view path) {
  fs::path p(trim_slash(path));
  if (p.filename() == "saved_model.pb") return p.has_parent_path() ? p.parent_path().string() : ".";
  return p.string();
}

}  // namespace

text::Document import_saved_model(std::string_view saved_model_pb, std::string_view index, std::shared_ptr<const Buffer> data,
                                  const std::string& dir, const SavedModelOptions& options) {
  return import(saved_model_pb, dir, options, [&]() -> std::optional<std::vector<BundleTensor>> {
    if (index.empty()) return std::nullopt;
    std::string prefix = (fs::path(dir) / "variables" / "variables").string();
    return read_bundle(index, prefix + ".index", [&](int k, int n, std::string& name) {
      name = data_file_name(prefix, k, n);
      if (k != 0 || !data) throw Error(prefix + ".index: error: the bundle has " + std::to_string(n) + " shards; one was given");
      return data;
    });
  });
}

text::Document read_saved_model(ReadGate& files, const SavedModelOptions& options) {
  // The gate's root is the SavedModel's folder (the folder named, or the folder of a path named
  // saved_model.pb); every file is reached through it: no symbolic link in variables/, its index
  // or its data files, regular files only.
  std::string dir = files.root();
  auto pb = files.model_is_folder() ? files.map("saved_model.pb", dir + ": error: SavedModel file") : files.map_model();
  return import(pb->view(), dir, options, [&]() -> std::optional<std::vector<BundleTensor>> {
    // TensorFlow's loader: no variables/variables.index, no variables. Anything by those names
    // that the policy refuses (a link, a FIFO) is an error, not "no variables".
    auto top = files.list(".", 1000);
    if (!std::binary_search(top.begin(), top.end(), std::string("variables"))) return std::nullopt;
    auto vars = files.list("variables", 100000);
    if (!std::binary_search(vars.begin(), vars.end(), std::string("variables.index"))) return std::nullopt;
    std::string what = dir + ": error: SavedModel file";
    auto index = files.map("variables/variables.index", what);
    std::string prefix = (fs::path(dir) / "variables" / "variables").string();
    return read_bundle(index->view(), prefix + ".index", [&](int k, int n, std::string& name) {
      name = data_file_name(prefix, k, n);
      return files.map(data_file_name("variables/variables", k, n), what);
    });
  });
}

text::Document read_saved_model(const std::string& path, const SavedModelOptions& options) {
  std::string dir = saved_model_dir(path);
  ReadGate files(dir + "/");
  return read_saved_model(files, options);
}

// ------------------------------------------------------------------ export

SavedModelFiles export_saved_model(const text::Document& doc) {
  if (doc.kind != text::Document::Kind::Graph) throw Error("only a graph document can be written as a SavedModel");
  const ir::Graph& g = doc.graph;
  const Value* attr = nullptr;
  for (const auto& [k, v] : g.attrs(g.root()))
    if (g.str(k) == kAttr) attr = &v;
  if (attr && !attr->is_map()) throw Error("graph attribute 'saved_model' is not a map");
  auto field = [&](const char* key) -> const Value* { return attr ? attr->find(key) : nullptr; };
  auto decode = [&](const char* key, google::protobuf::MessageLite& m) {
    const Value* v = field(key);
    if (!v) return false;
    auto bytes = v->is_string() ? base64_decode(v->as_string()) : std::nullopt;
    if (!bytes || !m.ParseFromString(*bytes)) throw Error("saved_model." + std::string(key) + " is not base64 of its message");
    return true;
  };
  tf::SavedModel sm;
  tf::MetaGraphDef mg;
  decode("meta_graph", mg);
  if (const Value* t = field("tags")) {
    if (!t->is_list()) throw Error("saved_model.tags is not a list");
    for (const auto& x : t->as_list()) {
      if (!x.is_string()) throw Error("saved_model.tags holds a value that is not a string");
      mg.mutable_meta_info_def()->add_tags(x.as_string());
    }
  } else {
    mg.mutable_meta_info_def()->add_tags("serve");
  }
  if (const Value* s = field("signature_def")) {
    if (!signatures_proto(*s, *mg.mutable_signature_def()))
      throw Error("saved_model.signature_def is not a map of {inputs, outputs, method_name} with tensors {name, dtype, shape}");
  } else {
    tf::MetaGraphDef whole;
    if (decode("@signature_def", whole)) *mg.mutable_signature_def() = whole.signature_def();
    else if (!attr) default_signature(g, (*mg.mutable_signature_def())["serving_default"]);
  }
  mg.set_graph_def(export_graph_bytes(doc));
  if (const Value* v = field("schema_version")) {
    if (!v->is_int()) throw Error("saved_model.schema_version is not an integer");
    sm.set_saved_model_schema_version(v->as_int());
  } else if (!attr) {
    sm.set_saved_model_schema_version(1);
  }
  int64_t index = 0;
  if (const Value* v = field("meta_graph_index"); v && v->is_int()) index = v->as_int();
  if (const Value* others = field("other_meta_graphs")) {
    if (!others->is_list()) throw Error("saved_model.other_meta_graphs is not a list");
    for (const auto& o : others->as_list()) {
      auto bytes = o.is_string() ? base64_decode(o.as_string()) : std::nullopt;
      if (!bytes || !sm.add_meta_graphs()->ParseFromString(*bytes)) throw Error("saved_model.other_meta_graphs: not base64 of a MetaGraphDef");
    }
  }
  if (index < 0 || index > sm.meta_graphs_size()) throw Error("saved_model.meta_graph_index is out of range");
  *sm.add_meta_graphs() = std::move(mg);
  for (int i = sm.meta_graphs_size() - 1; i > index; --i) sm.mutable_meta_graphs()->SwapElements(i, i - 1);
  SavedModelFiles f;
  f.saved_model_pb = serialize(sm);
  if (const Value* vars = field("variables")) {
    if (!vars->is_map()) throw Error("saved_model.variables is not a map of tensors");
    std::vector<std::pair<std::string, const ir::Tensor*>> ts;
    for (const auto& e : vars->as_map()) {
      if (!e.value.is_tensor()) throw Error("saved_model.variables['" + e.key + "'] is not a tensor");
      ts.emplace_back(e.key, &e.value.as_tensor());
    }
    std::sort(ts.begin(), ts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    BundleFiles b = write_bundle(ts);
    f.has_variables = true;
    f.index = std::move(b.index);
    f.data = std::move(b.data);
  }
  return f;
}

void write_saved_model(const text::Document& doc, WriteGate& out) {
  SavedModelFiles f = export_saved_model(doc);  // everything built before the first file is staged
  out.make_folder_output();
  std::string index = "variables/variables.index", data = data_file_name("variables/variables", 0, 1);
  if (f.has_variables) {
    out.create(data).write(f.data);
    out.create(index).write(f.index);
  } else {
    // A bundle left from an earlier write would be read back as this model's.
    out.remove_on_commit(index);
    out.remove_on_commit(data);
  }
  out.create("saved_model.pb").write(f.saved_model_pb);
}

void write_saved_model(const text::Document& doc, const std::string& path) {
  WriteGate out(saved_model_dir(path));
  write_saved_model(doc, out);
  out.commit();
}

std::string saved_model_dir(std::string_view path) { return model_dir(path); }

bool is_saved_model_path(std::string_view path) {
  fs::path p(trim_slash(path));
  std::error_code ec;
  if (p.filename() == "saved_model.pb") return true;
  return fs::is_directory(p, ec) && fs::exists(p / "saved_model.pb", ec);
}

bool is_saved_model_output_path(std::string_view path) {
  if (!path.empty() && path.back() == '/') return true;
  fs::path p(path);
  std::error_code ec;
  return p.filename() == "saved_model.pb" || fs::is_directory(p, ec);
}

}  // namespace amanda::tf_frontend
