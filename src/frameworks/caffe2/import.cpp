// Caffe2 NetDef -> text::Document (docs/caffe2.md, "How a NetDef is read").
#include <array>
#include <forward_list>
#include <functional>
#include <type_traits>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "amanda/ir/types.h"
#include "amanda/schema/schema.h"
#include "amanda/support/base64.h"
#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"
#include "../tensorflow/wire.h"  // the protobuf wire reader the TensorFlow framework wrote
#include "fills.h"
#include "netdef.h"
#include "port_names.h"
#include "values.h"
#include "wire_net.h"

namespace amanda::caffe2_frontend {

using namespace detail;
using ir::OpId;
using ir::PortId;
using ir::Value;
namespace c2 = amanda_caffe2;

namespace {

template <class M>
bool has_unknown(const M& m) {
  return !m.GetReflection()->GetUnknownFields(m).empty();
}

// Where the init net's lifted fills go: blob name -> the fill.
struct Lifted {
  std::string blob;
  ir::Tensor tensor;
  int index = 0;            // position in the init net
  std::string fill;         // op type when not the default for the tensor's element type
  bool shape_first = false;
};

class Importer {
 public:
  Importer(ir::Graph& g, const PortNamer& names) : g_(g), names_(names) {
    s_value_ = g_.sym("@value");
    s_blob_ = g_.sym("@blob");
    s_name_ = g_.sym("@name");
    s_device_ = g_.sym("@device_option");
    s_engine_ = g_.sym("@engine");
  }

  // Fills graph node `gn` with the net. `lifted`: initializers for its external inputs.
  template <class Net>
  void net(const Net& n, OpId gn, const std::string& file, const std::vector<Lifted>* lifted) {
    DepthGuard depth("a NetDef nested in an argument");
    file_ = file;
    // (`name` and `type` are the graph node's own keys in the text form.)
    if (n.has_name()) set(gn, "net_name", Value(std::string_view(n.name())));
    if (n.has_type()) set(gn, "net_type", Value(std::string_view(n.type())));
    if (n.has_num_workers()) set(gn, "num_workers", Value(static_cast<int64_t>(n.num_workers())));
    if (n.has_device_option()) set(gn, "device_option", device_option_value(n.device_option()));
    if (n.arg_size()) args(n.arg(), gn, "arg", "@arg");
    if constexpr (std::is_same_v<Net, c2::NetDef>) {
      if (n.partition_info_size()) {
        Value::List l;
        for (const auto& p : n.partition_info()) l.push_back(partition_info_value(p));
        set(gn, "partition_info", Value(std::move(l)));
      }
      if (has_unknown(n)) set(gn, "@unknown_fields", kept_unknown(n));
    }

    Scope s;
    // Only a name ending in '.' and digits can be taken by a version name (blob.1, blob.2, ...):
    // the set holds those alone (most nets have none), not every blob.
    s.collect = [&n](absl::flat_hash_set<std::string_view>& names) {
      auto add = [&names](std::string_view b) {
        size_t k = b.size();
        while (k > 0 && b[k - 1] >= '0' && b[k - 1] <= '9') --k;
        if (k > 0 && k < b.size() && b[k - 1] == '.') names.insert(b);
      };
      for (const auto& op : n.op()) {
        for (const auto& b : op.input()) add(b);
        for (const auto& b : op.output()) add(b);
      }
      for (const auto& b : n.external_input()) add(b);
      for (const auto& b : n.external_output()) add(b);
    };
    s.blobs.reserve(static_cast<size_t>(n.op_size()) * 2 + n.external_input_size());

    Names port_names;
    for (const auto& b : n.external_input()) {
      // (The blob map holds only the external inputs yet: it says whether this one was listed before.)
      auto [it, fresh] = s.blobs.try_emplace(b);
      PortId p = graph_port(gn, ir::PortDir::In, b, port_names, !fresh);
      g_.set_port_role(p, ir::PortRole::GraphInput);
      Blob& e = it->second;
      if (!e.port) e.port = p;  // a blob listed twice: its first port
      e.versions = 1;
    }
    if (lifted) lift(*lifted, s);
    int k = 0;
    for (const auto& op : n.op()) this->op(op, gn, s, k++, port_names);
    Names out_names;
    for (const auto& b : n.external_output()) {
      PortId p = graph_port(gn, ir::PortDir::Out, b, out_names);
      auto it = s.blobs.find(b);
      if (it != s.blobs.end() && it->second.port) g_.connect(it->second.port, p);
    }
  }

 private:
  // Blob names are views of the message's strings (it outlives the import).
  struct Blob {
    PortId port;       // the port holding its latest version (none yet: null)
    int versions = 0;  // versions written so far
  };
  // An op type's port names: the schema's (looked up once per type), and the symbols of the first
  // positions (0: not made yet), interned once per import.
  struct TypeInfo {
    const PortNamer::Names* in_names = nullptr;
    const PortNamer::Names* out_names = nullptr;
    std::array<Symbol, 8> in{}, out{};
  };
  struct Scope {
    std::function<void(absl::flat_hash_set<std::string_view>&)> collect;  // every blob name of the net
    absl::flat_hash_map<std::string_view, Blob> blobs;      // blob -> its latest version's port, versions so far
    absl::flat_hash_set<std::string_view> names;            // the blob names a version name could take, made at the first rewrite
    bool collected = false;
    std::forward_list<std::string> made;                    // names made for versions (a deque allocates even when empty)
  };

  ir::Graph& g_;
  const PortNamer& names_;
  std::string file_;
  Symbol s_value_, s_blob_, s_name_, s_device_, s_engine_;
  absl::flat_hash_map<Symbol, TypeInfo> types_ = absl::flat_hash_map<Symbol, TypeInfo>(16);  // by op type
  // (Op types and argument names go straight to the symbol table: a per-import cache of them,
  // hashed or direct-mapped, measured no faster in sessions 13 and 14.)
  Symbol sym(std::string_view s) { return g_.sym(s); }

  [[noreturn]] void fail(const std::string& where, const std::string& msg) const { throw Error(file_ + ": " + where + ": " + msg); }

  void set(OpId op, std::string_view k, Value v) { g_.set_attr(op, g_.sym(k), std::move(v)); }

  template <class M>
  static Value kept_unknown(const M& m) {
    std::string bytes;
    m.GetReflection()->GetUnknownFields(m).SerializeToString(&bytes);
    return Value(base64_encode(bytes));
  }

  // A graph port named by its blob; a blob the IR cannot take as a port name (empty, taken by an
  // earlier port of the same side, starting with '^' or '@') gets `port.K` and the blob in @blob.
  // Port names taken on one side of a graph: views of the blob names (the bytes outlive the
  // import), of the ports' names, or of names made here. The set is made only when a caller cannot
  // say whether the blob was taken (`taken`: the external inputs, which the blob map tells) or a
  // name has to be made; from then on it holds every name of that side.
  struct Names {
    absl::flat_hash_set<std::string_view> used;
    bool full = false;  // `used` holds every port name of the side
    std::forward_list<std::string> made;  // (stable; no allocation while empty, as most nets leave it)
  };

  void fill_names(OpId gn, ir::PortDir dir, Names& names) {
    if (names.full) return;
    for (PortId p : g_.ports(gn, dir))
      if (!g_.is_control(p)) names.used.insert(g_.port_name_str(p));
    names.full = true;
  }

  PortId graph_port(OpId gn, ir::PortDir dir, std::string_view blob, Names& names, std::optional<bool> taken = std::nullopt) {
    std::string_view name = blob;
    if (!taken || names.full) {
      fill_names(gn, dir, names);
      taken = names.used.contains(blob);
    }
    if (blob.empty() || blob.front() == '^' || blob.front() == '@' || *taken) {
      fill_names(gn, dir, names);
      for (size_t k = g_.ports(gn, dir).size();; ++k) {
        std::string made = "port." + std::to_string(k);
        if (!names.used.contains(made)) {
          names.made.push_front(std::move(made));
          name = names.made.front();
          break;
        }
      }
    }
    if (names.full) names.used.insert(name);
    PortId p = g_.add_port(gn, dir, g_.sym(name));
    if (name != blob) g_.set_attr(p, s_blob_, Value(blob));
    return p;
  }

  // Arguments: each one an attribute (its name the key) when every one has a readable form and a
  // name of its own; otherwise the whole list kept as bytes in `raw_key`. An op's go to `out` (its
  // attribute list, set on the op once it is whole); the net's own to one map attribute.
  template <class R>
  void args(const R& list, OpId op, std::string_view prefix, const char* raw_key, ir::AttrList* out = nullptr) {
    bool net_args = prefix == "arg";  // the net's own arguments: one map
    size_t start = out ? out->size() : 0;
    Value::Map m;
    bool readable = true;
    int n = 0;
    for (const auto& a : list) {
      bool dup = false;
      for (int k = 0; k < n && !dup; ++k) dup = list.Get(k).name() == a.name();
      if (!a.has_name() || a.name().empty() || a.name().front() == '@' || dup) {
        readable = false;
        break;
      }
      std::optional<Value> v = argument_value(a, [&](const c2::NetDef& net) { return nested(net, op, std::string(a.name())); });
      if (!v) {
        readable = false;
        break;
      }
      if (net_args) m.push_back({std::string(a.name()), std::move(*v)});
      else if (out) out->emplace_back(sym(a.name()), std::move(*v));
      else g_.set_attr(op, sym(a.name()), std::move(*v));
      ++n;
    }
    if (readable) {
      if (net_args) set(op, "arg", Value(std::move(m)));
      return;
    }
    // Not every argument has a readable form: the whole list is kept as bytes instead.
    if (out) out->resize(start);
    else
      for (int k = 0; k < n && !net_args; ++k) g_.erase_attr(op, g_.sym(list.Get(k).name()));
    for (OpId gr : g_.attr_graphs(op)) g_.erase_op(gr);  // nested nets made before the irregular one
    Value::List raw;
    if constexpr (std::is_same_v<R, WireArgs>) {
      throw Error(file_ + ": internal: the wire reader took arguments it cannot hold");  // read_net_wire refuses those
    } else {
      for (const auto& a : list) raw.push_back(kept(a));
    }
    if (out) out->emplace_back(g_.sym(raw_key), Value(std::move(raw)));
    else set(op, raw_key, Value(std::move(raw)));
  }

  Value nested(const c2::NetDef& n, OpId owner, const std::string& arg) {
    OpId gn = g_.create_attr_graph(owner, g_.sym(arg));
    std::string file = file_;
    net(n, gn, file, nullptr);
    file_ = file;
    return Value::graph(gn);
  }

  void lift(const std::vector<Lifted>& lifted, Scope& s) {
    for (const auto& l : lifted) {
      PortId p = s.blobs.at(l.blob).port;
      g_.set_port_role(p, ir::PortRole::Initializer);
      g_.set_port_type(p, g_.types().tensor(l.tensor.dtype, ir::dims_of(l.tensor.shape)));
      g_.set_attr(p, g_.sym("initializer"), Value(l.tensor));
      g_.set_attr(p, g_.sym("graph_input"), Value(false));
      g_.set_attr(p, g_.sym("@init_index"), Value(static_cast<int64_t>(l.index)));
      if (!l.fill.empty()) g_.set_attr(p, g_.sym("@fill"), Value(l.fill));
      if (l.shape_first) g_.set_attr(p, g_.sym("@fill_shape_first"), Value(true));
    }
  }

  template <class Op>
  std::string op_where(int k, const Op& op) const {
    return "op #" + std::to_string(k) + " (" + (op.type().empty() ? std::string("no type") : std::string(op.type())) +
           (op.name().empty() ? "" : " '" + std::string(op.name()) + "'") + ")";
  }

  // The value name of a new version of `blob`: the blob itself the first time, then blob.1, blob.2
  // ... (skipping names the net uses).
  std::string_view version_name(std::string_view blob, Blob& e, Scope& s) {
    int& v = e.versions;
    if (v++ == 0) return blob;
    if (!s.collected) {
      s.collect(s.names);
      s.collected = true;
    }
    for (;;) {
      std::string name = std::string(blob) + "." + std::to_string(v - 1);
      if (!s.names.contains(name)) {
        s.made.push_front(std::move(name));
        s.names.insert(s.made.front());
        return s.made.front();
      }
      ++v;
    }
  }

  Symbol port_name(TypeInfo& t, ir::PortDir dir, int i) {
    bool in = dir == ir::PortDir::In;
    const PortNamer::Names* names = in ? t.in_names : t.out_names;
    const char* fallback = in ? "input" : "output";
    if (static_cast<size_t>(i) >= t.in.size()) return PortNamer::name_at(names, i, fallback, g_);
    Symbol& s = (in ? t.in : t.out)[static_cast<size_t>(i)];
    if (!s) s = PortNamer::name_at(names, i, fallback, g_);
    return s;
  }

  template <class Op>
  void op(const Op& d, OpId gn, Scope& s, int k, Names& port_names) {
    if (!d.has_type() || d.type().empty()) fail(op_where(k, d), "the op has no type");
    // The op's attributes, set at once when it is whole (one list, not one growth per attribute).
    ir::AttrList al;
    al.reserve(static_cast<size_t>(d.arg_size()) + 3);
    // Names as the ONNX reader gives them: an unnamed op (or one whose name the IR cannot hold:
    // taken, or `_k`, the text form's spelling of an anonymous op) is anonymous with the name in
    // @name; one that owns nested nets gets a name of its own, so that its graphs can name it.
    bool nets = false;
    for (const auto& a : d.arg()) nets |= a.has_n() || a.nets_size();
    OpId op;
    std::string_view name = d.name();
    Symbol type = sym(d.type());
    if (name.empty() && nets) {
      for (int j = k;; ++j) {
        std::string candidate = "_" + std::string(d.type()) + "_" + std::to_string(j);
        if (!g_.find_op(gn, g_.sym(candidate))) {
          op = g_.create_op(gn, type, g_.sym(candidate));
          break;
        }
      }
      al.emplace_back(g_.sym(d.has_name() ? "@name" : "@no_name"), d.has_name() ? Value(name) : Value(true));
    } else if (name.empty() || name[0] == '_' || g_.find_op(gn, g_.sym(name))) {
      op = g_.create_op(gn, type, Symbol(0), /*generate_name=*/true);
      if (d.has_name()) al.emplace_back(s_name_, Value(name));
    } else {
      op = g_.create_op(gn, type, g_.sym(name));
    }
    auto [sit, fresh] = types_.try_emplace(type);
    if (fresh) {
      if (const schema::OpSchema* sch = names_.find(d.type())) {
        sit->second.in_names = names_.names_of(&sch->inputs);
        sit->second.out_names = names_.names_of(&sch->outputs);
      }
    }
    TypeInfo& ti = sit->second;
    for (int i = 0; i < d.input_size(); ++i) {
      std::string_view b = d.input(i);
      PortId in = g_.add_input(op, port_name(ti, ir::PortDir::In, i));
      auto [it, fresh_blob] = s.blobs.try_emplace(b);
      PortId src;
      if (!fresh_blob && it->second.port) {
        src = it->second.port;
      } else {  // a blob nothing here writes and the net does not list: an input it does not declare
        src = graph_port(gn, ir::PortDir::In, b, port_names);
        g_.set_attr(src, g_.sym("@implicit"), Value(true));
        Blob& e = s.blobs[b];
        e.port = src;
        e.versions = 1;
      }
      g_.connect(src, in);
    }
    for (int i = 0; i < d.output_size(); ++i) {
      std::string_view b = d.output(i);
      PortId out = g_.add_output(op, port_name(ti, ir::PortDir::Out, i));
      Blob& e = s.blobs[b];
      std::string_view v = version_name(b, e, s);
      if (v != b) {
        ir::AttrList pl;
        pl.reserve(2);
        pl.emplace_back(s_value_, Value(v));
        pl.emplace_back(s_blob_, Value(b));
        g_.set_attr_list(out, std::move(pl));
      } else {
        g_.set_attr(out, s_value_, Value(v));
      }
      e.port = out;
    }
    if (d.arg_size()) args(d.arg(), op, "", "@args", &al);
    if (d.has_device_option()) al.emplace_back(s_device_, device_option_value(d.device_option()));
    if (d.has_engine()) al.emplace_back(s_engine_, Value(std::string_view(d.engine())));
    if (d.control_input_size()) {
      Value::List l;
      for (const auto& c : d.control_input()) l.push_back(Value(std::string_view(c)));
      al.emplace_back(g_.sym("@control_input"), Value(std::move(l)));
    }
    if (d.has_is_gradient_op()) al.emplace_back(g_.sym("@is_gradient_op"), Value(d.is_gradient_op()));
    if (d.has_debug_info()) al.emplace_back(g_.sym("@debug_info"), Value(std::string_view(d.debug_info())));
    if (d.has_domain()) al.emplace_back(g_.sym("@domain"), Value(std::string_view(d.domain())));
    if (d.has_op_version()) al.emplace_back(g_.sym("@op_version"), Value(static_cast<int64_t>(d.op_version())));
    if constexpr (std::is_same_v<Op, c2::OperatorDef>)
      if (has_unknown(d)) al.emplace_back(g_.sym("@unknown_fields"), kept_unknown(d));
    if (!al.empty()) g_.set_attr_list(op, std::move(al));
  }
};

// An init net's op: a plain fill read from the wire bytes (`fill`), or an op protobuf parsed.
struct InitOp {
  std::optional<FillResult> fill;
  std::string_view blob, type;           // a fill's
  std::string_view bytes;                // a wire fill's OperatorDef bytes (to parse if it stays an op)
  const c2::OperatorDef* msg = nullptr;  // otherwise
};

// The init net read fast: its ops that are plain fills straight from the bytes (read_fill_wire),
// every other field given to protobuf. False when the bytes do not walk as a message (protobuf
// then parses them all and says what is wrong).
bool split_init(std::string_view bytes, c2::NetDef& rest, std::vector<InitOp>& ops) {
  namespace wire = tf_frontend::detail::wire;
  std::string other;
  wire::Reader r(bytes);
  std::vector<size_t> kept;  // positions in `ops` of the ops protobuf parses
  while (!r.done()) {
    const uint8_t* start = r.p;
    uint32_t f, t;
    if (!r.tag(f, t)) return false;
    if (f == 2 && t == wire::kLen) {
      std::string_view b;
      if (!r.bytes(b)) return false;
      if (std::optional<WireFill> w = read_fill_wire(b)) {
        ops.push_back({std::move(w->fill), w->blob, w->type, b, nullptr});
        continue;
      }
      kept.push_back(ops.size());
      ops.push_back({});
    } else if (!r.skip(t)) {
      return false;
    }
    other.append(reinterpret_cast<const char*>(start), static_cast<size_t>(r.p - start));
  }
  if (other.size() > static_cast<size_t>(INT32_MAX) || !rest.ParseFromArray(other.data(), static_cast<int>(other.size())) ||
      static_cast<size_t>(rest.op_size()) != kept.size())
    return false;
  for (size_t k = 0; k < kept.size(); ++k) ops[kept[k]].msg = &rest.op(static_cast<int>(k));
  return true;
}

// The init net's ops that are plain fills of a predict net's external input are lifted; the
// others go to `rest` (which holds the init net's other fields), in order.
template <class Net>
std::vector<Lifted> lift_fills(std::vector<InitOp>& ops, const Net& predict, c2::NetDef& rest) {
  absl::flat_hash_set<std::string_view> externals(predict.external_input().begin(), predict.external_input().end());
  absl::flat_hash_set<std::string_view> done;
  std::vector<Lifted> out;
  google::protobuf::RepeatedPtrField<c2::OperatorDef> kept;
  for (size_t k = 0; k < ops.size(); ++k) {
    InitOp& op = ops[k];
    if (op.msg && !op.fill) {
      if ((op.fill = read_fill(*op.msg))) {
        op.blob = op.msg->output(0);
        op.type = op.msg->type();
      }
    }
    if (!op.fill || !externals.contains(op.blob) || !done.insert(op.blob).second) {
      c2::OperatorDef* d = kept.Add();
      if (op.msg) *d = *op.msg;
      else d->ParseFromArray(op.bytes.data(), static_cast<int>(op.bytes.size()));
      continue;
    }
    Lifted l;
    l.blob = std::string(op.blob);
    l.tensor = std::move(op.fill->tensor);
    l.index = static_cast<int>(k);
    if (!op.fill->default_fill) l.fill = std::string(op.type);
    l.shape_first = op.fill->shape_first;
    out.push_back(std::move(l));
  }
  rest.mutable_op()->Swap(&kept);
  return out;
}

struct Collector : google::protobuf::io::ErrorCollector {
  std::string first;
  int line = 0, column = 0;
  void AddError(int l, int c, const std::string& m) override {
    if (first.empty()) {
      first = m;
      line = l;
      column = c;
    }
  }
};

void parse(NetBytes b, c2::NetDef& n, const std::string& file) {
  if (b.bytes.size() > static_cast<size_t>(INT32_MAX)) throw Error(file + ": larger than protobuf's 2 GB limit");
  if (b.text) {
    Collector errors;
    google::protobuf::TextFormat::Parser p;
    p.RecordErrorsTo(&errors);
    // Read in place (a copy of a large net's text is a block above glibc's mmap threshold: mapped
    // and unmapped, page by page, on every read).
    google::protobuf::io::ArrayInputStream in(b.bytes.data(), static_cast<int>(b.bytes.size()));
    if (!p.Parse(&in, &n))
      throw ParseError(SourceLoc{file, static_cast<uint32_t>(errors.line + 1), static_cast<uint32_t>(errors.column + 1)},
                       "not a Caffe2 NetDef in text form: " + errors.first);
    return;
  }
  if (!n.ParseFromArray(b.bytes.data(), static_cast<int>(b.bytes.size())))
    throw Error(file + ": not a Caffe2 NetDef (protobuf could not parse its " + std::to_string(b.bytes.size()) + " bytes)");
}

}  // namespace

text::Document import_net(NetBytes predict, std::optional<NetBytes> init, const ImportOptions& options) {
  // The messages live on an arena (a net of many small ops is mostly allocations), made only when
  // protobuf parses something: a predict net the wire reader takes alone needs none.
  std::optional<google::protobuf::Arena> arena_;
  auto message = [&arena_]() -> c2::NetDef& {
    if (!arena_) arena_.emplace();
    return *google::protobuf::Arena::CreateMessage<c2::NetDef>(&*arena_);
  };
  // The predict net straight from its bytes when it has only what the wire reader reads.
  WireNet wn;
  bool fast = options.wire && !predict.text && read_net_wire(predict.bytes, wn);
  c2::NetDef* pn_ = nullptr;
  if (!fast) {
    pn_ = &message();
    parse(predict, *pn_, options.file_name);
  }
  text::Document doc(text::Document::Kind::Graph);
  ir::Graph& g = doc.graph;
  PortNamer names(options.schema);
  Importer imp(g, names);
  OpId root = g.root();
  g.set_graph_namespace(root, g.sym(kCaffe2Namespace));
  std::vector<Lifted> lifted;
  c2::NetDef* rest_ = nullptr;
  if (init) {
    c2::NetDef& in = message();
    c2::NetDef& rest = *(rest_ = &message());
    std::vector<InitOp> ops;
    if (init->text || !options.wire || !split_init(init->bytes, in, ops)) {
      ops.clear();
      in.Clear();
      parse(*init, in, options.init_file_name);
      for (const auto& op : in.op()) ops.push_back({std::nullopt, {}, {}, {}, &op});
    }
    lifted = fast ? lift_fills(ops, wn, rest) : lift_fills(ops, *pn_, rest);  // (rest's ops: the init net's ops that stay ops)
    in.clear_op();
    google::protobuf::RepeatedPtrField<c2::OperatorDef> kept;
    kept.Swap(rest.mutable_op());
    rest.CopyFrom(in);
    rest.mutable_op()->Swap(&kept);
  }
  if (fast) {  // sized once: the op, port and edge arrays would otherwise grow (and copy) as the net is read
    size_t ports = wn.ext_in.size() + wn.ext_out.size(), edges = wn.ext_out.size();
    for (const auto& op : wn.ops_) ports += op.in_n + op.out_n, edges += op.in_n;
    g.reserve(wn.ops_.size() + 2, ports, edges);
  }
  if (fast) imp.net(wn, root, options.file_name, init ? &lifted : nullptr);
  else imp.net(*pn_, root, options.file_name, init ? &lifted : nullptr);
  // The graph's own name (what an ONNX model's graph is called after a conversion).
  std::string_view net_name = fast ? wn.name() : std::string_view(pn_->name());
  if (!net_name.empty()) g.set_name(root, g.sym(net_name));
  if (init) {
    // The rest of the init net: its fields and the ops that are not plain fills, as a graph.
    OpId ig = g.create_attr_graph(root, g.sym("init_net"));
    imp.net(*rest_, ig, options.init_file_name, nullptr);
    g.set_attr(root, g.sym("init_net"), Value::graph(ig));
  }
  return doc;
}

}  // namespace amanda::caffe2_frontend
