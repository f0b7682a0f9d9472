// The libtorch-free TorchScript importer's shared state (see importer.h for what it reads and
// gives): one Importer runs one archive. Its parts, one file each:
//   archive_loader.cpp  the archive: <name>/data.pkl (the module objects: class, attributes,
//                       parameters as torch._utils._rebuild_tensor_v2 calls on storages
//                       <name>/data/<key>), <name>/constants.pkl (the CONSTANTS.cN tensors),
//                       <name>/code/**.py (each class's methods)
//   interpreter.cpp     the serialized Python run over values (runtime.h) that are known
//                       (numbers, lists, parameters, folded tensors) or symbolic (graph values
//                       with known shapes): statements, calls, expressions
//   builtins.cpp        TorchScript's builtins on lists, strings and None
//   control_flow.cpp    an `if` or loop on data: prim::If / prim::Loop ops with bodies
//   graph_emitter.cpp   op calls: torch.X(...) resolves to the schema of aten::X whose overload
//                       the arguments fit, then folds (all inputs known, a kernel exists) or
//                       becomes a typed graph op
//   importer.cpp        run() (inputs, forward(), outputs), sizes computed from symbolic
//                       dimensions, and the entry points of importer.h
#pragma once

#include "frameworks/torchscript/importer.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/types.h"
#include "amanda/support/budget.h"
#include "amanda/support/file.h"
#include "frameworks/torchscript/ast.h"
#include "frameworks/torchscript/pickle.h"
#include "frameworks/torchscript/creation_ops.h"
#include "frameworks/torchscript/decompose.h"
#include "frameworks/torchscript/promotion.h"
#include "frameworks/torchscript/shape_rules.h"
#include "frameworks/torchscript/zip.h"

namespace amanda::torchscript {

using ir::DType;
using ir::OpId;
using ir::PortId;
using ir::Value;

struct Obj {
  std::string cls;   // __torch__.torchvision.models.resnet.ResNet
  std::string path;  // attribute path from the root module ("layer1.0.conv1"), "" for the root
  std::vector<std::pair<std::string, VRef>> attrs;
  VRef find(std::string_view name) const {
    for (const auto& [k, v] : attrs)
      if (k == name) return v;
    return nullptr;
  }
};

constexpr int kMaxCallDepth = 200;
constexpr int kMaxConvertDepth = 1000;
constexpr int64_t kMaxLoopTrips = 100000;

struct Frame {
  std::unordered_map<std::string, VRef> vars;
  const SourceFile* file = nullptr;
};

enum class Flow { Normal, Return, Break, Continue };

class Importer {
 public:
  Importer(const ZipArchive& zip, const schema::NamespaceSchema& ns, const torch_frontend::ImportOptions& o,
           text::Document& doc)
      : zip_(zip), ns_(ns), o_(o), g_(doc.graph) {}
  Importer(const Importer&) = delete;
  Importer& operator=(const Importer&) = delete;
  ~Importer() {
    // A pickle can make objects that refer to each other (a module holding itself): break every
    // link between converted values so that they are freed.
    for (auto& [p, v] : converted_) {
      v->items.clear();
      if (v->obj) v->obj->attrs.clear();
    }
    for (PyRef& p : pickles_) dismantle(std::move(p));
  }
  void run();

 private:
  const ZipArchive& zip_;
  const schema::NamespaceSchema& ns_;
  const torch_frontend::ImportOptions& o_;
  ir::Graph& g_;
  std::string prefix_;
  std::unordered_map<std::string, std::shared_ptr<Storage>> storages_;
  std::unordered_map<const PyObject*, VRef> converted_;
  std::vector<PyRef> pickles_;  // dismantled at the end (they may be cyclic)
  std::vector<VRef> constants_;
  std::map<std::string, std::unique_ptr<SourceFile>> files_;
  const SourceFile* cls_file_ = nullptr;  // the file of the class find_class found last
  std::unordered_map<std::string, std::vector<const schema::OpSchema*>> overloads_;
  std::unordered_map<std::string, int> taken_;
 public:
  std::set<std::string> gaps_;  // op types that had no shape rule
 private:
  std::string hint_;   // the name the statement being run assigns to
  std::string where_;  // file:line of the statement being run
  int depth_ = 0;
  // Symbolic dimensions: dimension k of --input-shape's names runs as the number
  // kSymbolBase + kSymbolStep * k; every size at or above kSymbolFloor is taken to be computed from
  // one (N, 197*N, N-1, ...): it is written as a dim_param and never folded into a constant.
  static constexpr int64_t kSymbolBase = 1000003, kSymbolStep = 4099, kSymbolFloor = 500000;
  bool symbolic_ = false;
  bool in_symbolic_ = false;
  bool is_sym(int64_t d) const { return symbolic_ && d >= kSymbolFloor && d < (int64_t(1) << 50); }  // not INT64_MAX (slice to the end)
  Value dim_value(int64_t d) const;
  bool has_dyn(const Val& v) const;
  std::string sym_name_of(int64_t d) const;
  VRef int_tensor(const Val& v);
  std::optional<VRef> symbolic_call(const std::string& base, const std::vector<VRef>& args);
  // ------------------------------------------------------------ the archive
  void find_prefix();
  std::shared_ptr<Storage> storage(const PyObject& pid, const std::string& folder);
  VRef rebuild_tensor(const PyObject& args, const std::string& folder, const std::string& path);
  VRef convert(const PyRef& p, const std::string& folder, const std::string& path, int depth);
  // ------------------------------------------------------------ code
  const SourceFile* file_of(const std::string& module);
  const ClassDef* find_class(const std::string& qualname);
  const FunctionDef* method(const ClassDef& c, std::string_view name, const std::string& qualname);

  std::string where_of(const FunctionDef& f) const {
    return (cls_file_ ? cls_file_->path : zip_.path()) + ":" + std::to_string(f.pos.line);
  }
  VRef call_function(const FunctionDef& f, const SourceFile* file, const std::vector<VRef>& args,
                     const std::vector<std::pair<std::string, VRef>>& kwargs, const std::string& what);

  std::string loc(const SourceFile* f, Pos p) const {
    return (f ? f->path : zip_.path()) + ":" + std::to_string(p.line) + ":" + std::to_string(p.column);
  }
  Flow exec(const std::vector<StmtPtr>& body, Frame& fr, VRef& ret);

  // ------------------------------------------------------------ control flow on data
  // An `if` whose condition, or a loop whose count or condition, the graph computes becomes a
  // prim::If / prim::Loop op with its bodies as graph attributes (block0, block1), as the
  // libtorch reader imports them: the branches run into their own graphs, the variables they
  // (re)assign become the op's outputs; a loop's carried values are the variables its body
  // assigns, its body takes (iteration number, condition, carried...) and gives (condition,
  // carried...). A body reads an outer value through a capture port of its op (`@capture.x`).

  struct Body {
    OpId graph;
    OpId owner;
    std::unordered_set<const Val*> outer_lists;  // lists made outside: appending to them is refused
    std::string prefix;  // its ops are named <owner>.<block>.<k>: ONNX names values once across bodies,
    int next = 0;        // and a rule names the constants it makes after the op (_1_B)
    bool loop = false;
    std::vector<std::pair<VRef, VRef>> scans;  // (list made empty before the loop, the tensor the body appends)
  };
  // Lists a loop on data appended to: after the loop, the Loop's scan output of the appended
  // tensors (stacked, its length a new symbolic dimension); only stack/cat read them.
  std::unordered_map<const Val*, VRef> scanned_;
  std::vector<VRef> scanned_lists_;  // keeps the keys of scanned_ alive (a freed list's address could be reused)
  std::vector<std::string> scan_dims_;
  // Sizes known only at run time (kRunTimeDim: the rows a mask selects, the boxes NMS keeps, k =
  // min(k, n) of such a size): each a new symbolic dimension `dyn<k>`. Once one exists, comparisons
  // of sizes computed from symbolic dimensions are graph ops (an `if` on one is an If on data), not
  // decided on the stand-in numbers.
  static constexpr size_t kMaxSymbols = 1024;
  int run_time_dims_ = 0;
  std::map<PortId, int64_t> mask_dims_;  // x[m], y[m] with one mask m: one size (nms(x[m], y[m]) checks it)
  int64_t new_run_time_dim();
  void resolve_run_time_dims(std::vector<OutInfo>& outs);
  OpId new_op(amanda::Symbol type);
  std::vector<Body> bodies_;
  std::map<std::pair<uint64_t, uint64_t>, PortId> caps_;  // (owner op, outer port) -> capture port: an If's two branches share them

  OpId scope() const { return bodies_.empty() ? g_.root() : bodies_.back().graph; }
  OpId scope_of(PortId p) const;
  std::string value_name(PortId p) const;
  // The port through which the current body reads `src` (captures through every body between).
  PortId visible(PortId src) { return visible_at(src, bodies_.size()); }
  PortId visible_at(PortId src, size_t depth);
  VRef number_op(const std::string& type, const std::vector<VRef>& args);
  VRef data_number_op(const std::string& base, const std::vector<VRef>& args);
  PortId body_result(const VRef& v, const std::string& name);
  VRef like(const Val& v, PortId port);
  void type_port(PortId p, const Val& v, bool graph_port);
  static bool same_kind(const Val& a, const Val& b, bool sizes = false);
  static bool same_number(const Val& a, const Val& b);
  std::unordered_set<const Val*> lists_of(const Frame& fr) const;
  static void assigned_names(const std::vector<StmtPtr>& body, std::set<std::string>& out);
  static void written_in_place(const std::vector<StmtPtr>& body, std::set<std::string>& out);
  void data_if(const Stmt& s, Frame& fr, const VRef& cv);
  void data_loop(const Stmt& s, Frame& fr, const VRef& count, const VRef& cond0);
  void assign(const Expr& t, const VRef& v, Frame& fr);
  bool truth(const Val& v, const char* what);
  // ------------------------------------------------------------ expressions
  VRef eval(const Expr& e, Frame& fr);
  VRef attribute(const Val& o, const std::string& name);
  VRef arith(const std::string& op, const VRef& a, const VRef& b);
  VRef compare(const std::string& op, const VRef& a, const VRef& b);
  VRef call(const Expr& e, Frame& fr);
  static double number_of(const Val& v, const std::string& where);
  VRef call_path(const std::string& path, const std::vector<VRef>& args,
                 const std::vector<std::pair<std::string, VRef>>& kwargs);

  // ------------------------------------------------------------ ops

  struct Match {
    const schema::OpSchema* op = nullptr;
    int score = -1;
    Args args;
  };
  std::optional<VRef> builtin(const std::string& base, const std::vector<VRef>& args);
  VRef call_op(const std::string& base, const std::vector<VRef>& args,
               const std::vector<std::pair<std::string, VRef>>& kwargs);
  // zeros / topk / arange / linspace with a size read from an input's values (run_time_sizes.cpp)
  std::optional<VRef> run_time_size_call(const std::string& base, const std::vector<VRef>& args,
                                         const std::vector<std::pair<std::string, VRef>>& kwargs);
  // x[i0, .., i1] with several index tensors, x[mask] = v (advanced_indexing.cpp)
  std::optional<VRef> advanced_index_call(const std::string& base, const std::vector<VRef>& args,
                                          const std::vector<std::pair<std::string, VRef>>& kwargs);
  std::optional<VRef> run_time_scalars(const std::string& base, const std::vector<VRef>& args,
                                       const std::vector<std::pair<std::string, VRef>>& kwargs);

  static VRef pack(const std::vector<VRef>& r) { return r.size() == 1 ? r[0] : make_list(r, Val::K::Tuple); }
  Match match(const schema::OpSchema& s, const std::vector<VRef>& args,
              const std::vector<std::pair<std::string, VRef>>& kwargs);
  std::string unique(std::string name);
  void set_type(PortId p, const Val& v, bool /*graph_port: write_type_attrs asks the graph*/);
  PortId port_of(Val& v);
  void check_no_symbol(const Val& v, const std::string& op) const;
  PortId constant(const Val& v);
  VRef emit(const schema::OpSchema& s, const Args& args, const std::vector<OutInfo>& outs);
};

}  // namespace amanda::torchscript
