// See wire.h.
#include "wire.h"

#include <climits>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "amanda/support/diagnostics.h"

namespace amanda::onnx_frontend::detail {

namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using WFL = google::protobuf::internal::WireFormatLite;

struct Field {
  uint32_t number;
  WFL::WireType type;
  const uint8_t* begin;    // the tag
  const uint8_t* end;      // past the field
  const uint8_t* payload;  // length-delimited only
  size_t payload_size;
};

// Calls f(Field) for every field of the message in [p, p + n); false when the bytes are not a
// sequence of well-formed fields (or f returns false).
template <class F>
bool for_each_field(const uint8_t* p, size_t n, F&& f) {
  if (n > static_cast<size_t>(INT_MAX)) return false;
  CodedInputStream in(p, static_cast<int>(n));
  while (in.CurrentPosition() < static_cast<int>(n)) {
    const uint8_t* begin = p + in.CurrentPosition();
    uint32_t tag = in.ReadTag();
    if (tag == 0) return false;
    Field fd{static_cast<uint32_t>(WFL::GetTagFieldNumber(tag)), WFL::GetTagWireType(tag), begin, nullptr, nullptr, 0};
    if (fd.number == 0) return false;
    if (fd.type == WFL::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t len = 0;
      if (!in.ReadVarint32(&len) || len > static_cast<uint32_t>(INT_MAX)) return false;
      fd.payload = p + in.CurrentPosition();
      fd.payload_size = len;
      if (!in.Skip(static_cast<int>(len))) return false;
    } else if (fd.type == WFL::WIRETYPE_END_GROUP || !WFL::SkipField(&in, tag)) {
      return false;
    }
    fd.end = p + in.CurrentPosition();
    if (!f(fd)) return false;
  }
  return true;
}

// Protobuf's default recursion limit, counted from the model: a message `depth` levels down
// parses with what is left of it, as it would inside a parse of the whole model.
constexpr int kRecursionLimit = 100;

bool merge(google::protobuf::MessageLite& m, const uint8_t* b, const uint8_t* e, int depth) {
  if (b == e) return true;
  CodedInputStream in(b, static_cast<int>(e - b));
  in.SetRecursionLimit(kRecursionLimit - depth);
  return m.MergePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// Contiguous runs of fields that protobuf parses, flushed into `m` (a message `depth` levels
// below the model) when a routed field comes.
struct Runs {
  google::protobuf::MessageLite& m;
  int depth;
  const uint8_t* b = nullptr;
  const uint8_t* e = nullptr;
  bool add(const Field& f) {
    if (b && e == f.begin) {
      e = f.end;
      return true;
    }
    if (!flush()) return false;
    b = f.begin;
    e = f.end;
    return true;
  }
  bool flush() {
    bool ok = !b || merge(m, b, e, depth);
    b = e = nullptr;
    return ok;
  }
};

// Past this nesting (a graph level is graph -> node -> attribute -> graph) the model is left to
// protobuf, which refuses it.
constexpr int kMaxDepth = kRecursionLimit - 4;

bool parse_tensor(const uint8_t* p, size_t n, onnx::TensorProto& t, RawSpans& spans, int depth) {
  int raws = 0;
  Field rf{};
  bool odd = false;
  if (!for_each_field(p, n, [&](const Field& f) {
        if (f.number == onnx::TensorProto::kRawDataFieldNumber) {
          if (f.type != WFL::WIRETYPE_LENGTH_DELIMITED) odd = true;
          ++raws;
          rf = f;
        }
        return true;
      }))
    return false;
  if (raws != 1 || odd) return merge(t, p, p + n, depth);  // protobuf's own rules (last one wins, ...)
  if (!merge(t, p, rf.begin, depth) || !merge(t, rf.end, p + n, depth)) return false;
  spans.add(&t, RawSpan{rf.payload, rf.payload_size, true, p, n});
  return true;
}

bool parse_graph(const uint8_t* p, size_t n, onnx::GraphProto& g, RawSpans& spans, int depth);

// An attribute's fields that hold tensors or graphs.
bool routed_attr_field(uint32_t number) {
  using A = onnx::AttributeProto;
  return number == A::kTFieldNumber || number == A::kGFieldNumber || number == A::kTensorsFieldNumber ||
         number == A::kGraphsFieldNumber;
}

// Tensors of attributes from this size on are borrowed; smaller ones (the shape and axis
// Constants of exporters, thousands in a big graph) stay on protobuf's bulk path, where walking
// them one by one would cost more than copying them.
constexpr size_t kBorrowFrom = 256;

// Does the attribute hold a graph, or a tensor worth borrowing? (Malformed bytes: yes, so that the
// walk, failing, leaves the model to protobuf.)
bool attr_routed(const Field& f) {
  using A = onnx::AttributeProto;
  bool any = false;
  bool ok = for_each_field(f.payload, f.payload_size, [&](const Field& x) {
    bool tensor = x.number == A::kTFieldNumber || x.number == A::kTensorsFieldNumber;
    any = any || (routed_attr_field(x.number) && (!tensor || x.payload_size >= kBorrowFrom));
    return !any;
  });
  return any || !ok;
}

bool parse_attribute(const uint8_t* p, size_t n, onnx::AttributeProto& a, RawSpans& spans, int depth) {
  using A = onnx::AttributeProto;
  int ts = 0, gs = 0;
  if (!for_each_field(p, n, [&](const Field& f) {
        ts += f.number == A::kTFieldNumber;
        gs += f.number == A::kGFieldNumber;
        return true;
      }))
    return false;
  if (ts > 1 || gs > 1) return merge(a, p, p + n, depth);  // a singular field twice merges: protobuf's rules
  Runs runs{a, depth};
  bool ok = for_each_field(p, n, [&](const Field& f) {
    if (!routed_attr_field(f.number)) return runs.add(f);
    if (f.type != WFL::WIRETYPE_LENGTH_DELIMITED || !runs.flush()) return false;
    switch (f.number) {
      case A::kTFieldNumber: return parse_tensor(f.payload, f.payload_size, *a.mutable_t(), spans, depth + 1);
      case A::kTensorsFieldNumber: return parse_tensor(f.payload, f.payload_size, *a.add_tensors(), spans, depth + 1);
      case A::kGFieldNumber: return parse_graph(f.payload, f.payload_size, *a.mutable_g(), spans, depth + 1);
      default: return parse_graph(f.payload, f.payload_size, *a.add_graphs(), spans, depth + 1);
    }
  });
  return ok && runs.flush();
}

// A node whose attributes hold no tensor and no graph is parsed by protobuf with its neighbours.
bool parse_node(const uint8_t* p, size_t n, onnx::NodeProto& node, RawSpans& spans, int depth) {
  Runs runs{node, depth};
  bool ok = for_each_field(p, n, [&](const Field& f) {
    if (f.number != onnx::NodeProto::kAttributeFieldNumber || (f.type == WFL::WIRETYPE_LENGTH_DELIMITED && !attr_routed(f)))
      return runs.add(f);
    if (f.type != WFL::WIRETYPE_LENGTH_DELIMITED || !runs.flush()) return false;
    return parse_attribute(f.payload, f.payload_size, *node.add_attribute(), spans, depth + 1);
  });
  return ok && runs.flush();
}

bool node_routed(const Field& f) {
  bool any = false;
  bool ok = for_each_field(f.payload, f.payload_size, [&](const Field& x) {
    if (x.number == onnx::NodeProto::kAttributeFieldNumber)
      any = x.type != WFL::WIRETYPE_LENGTH_DELIMITED || attr_routed(x);
    return !any;
  });
  return any || !ok;
}

bool parse_graph(const uint8_t* p, size_t n, onnx::GraphProto& g, RawSpans& spans, int depth) {
  if (depth > kMaxDepth) return false;
  Runs runs{g, depth};
  bool ok = for_each_field(p, n, [&](const Field& f) {
    bool init = f.number == onnx::GraphProto::kInitializerFieldNumber;
    bool node = f.number == onnx::GraphProto::kNodeFieldNumber;
    if (!init && !node) return runs.add(f);
    if (f.type != WFL::WIRETYPE_LENGTH_DELIMITED) return false;
    if (node && !node_routed(f)) return runs.add(f);
    if (!runs.flush()) return false;
    if (init) return parse_tensor(f.payload, f.payload_size, *g.add_initializer(), spans, depth + 1);
    return parse_node(f.payload, f.payload_size, *g.add_node(), spans, depth + 1);
  });
  return ok && runs.flush();
}

// The complete_* put the borrowed raw_data back into a copy of a message, walking the copy and
// its original (whose tensors' addresses key the spans) side by side.
void complete_graph(onnx::GraphProto& g, const onnx::GraphProto& orig, const RawSpans& raw);

void complete_tensor(onnx::TensorProto& t, const onnx::TensorProto& orig, const RawSpans& raw) {
  if (const RawSpan* s = raw.find(orig); s && s->present) t.set_raw_data(s->data, s->size);
}

void complete_attr(onnx::AttributeProto& a, const onnx::AttributeProto& orig, const RawSpans& raw) {
  if (orig.has_t()) complete_tensor(*a.mutable_t(), orig.t(), raw);
  for (int i = 0; i < orig.tensors_size(); ++i) complete_tensor(*a.mutable_tensors(i), orig.tensors(i), raw);
  if (orig.has_g()) complete_graph(*a.mutable_g(), orig.g(), raw);
  for (int i = 0; i < orig.graphs_size(); ++i) complete_graph(*a.mutable_graphs(i), orig.graphs(i), raw);
}

void complete_graph(onnx::GraphProto& g, const onnx::GraphProto& orig, const RawSpans& raw) {
  for (int i = 0; i < orig.initializer_size(); ++i) complete_tensor(*g.mutable_initializer(i), orig.initializer(i), raw);
  for (int i = 0; i < orig.node_size(); ++i)
    for (int j = 0; j < orig.node(i).attribute_size(); ++j)
      complete_attr(*g.mutable_node(i)->mutable_attribute(j), orig.node(i).attribute(j), raw);
}

}  // namespace

bool parse_model_borrowing(const uint8_t* bytes, size_t n, onnx::ModelProto& m, RawSpans& raw) {
  raw.clear();
  Runs runs{m, 0};
  Field graph{};
  int graphs = 0;
  bool ok = for_each_field(bytes, n, [&](const Field& f) {
    if (f.number != onnx::ModelProto::kGraphFieldNumber) return runs.add(f);
    if (f.type != WFL::WIRETYPE_LENGTH_DELIMITED) return false;
    graph = f;
    return ++graphs == 1 && runs.flush();  // several graph fields merge: leave that to protobuf
  });
  if (!ok || !runs.flush() || graphs != 1) return false;
  return parse_graph(graph.payload, graph.payload_size, *m.mutable_graph(), raw, 1);
}

onnx::AttributeProto complete_attribute(const onnx::AttributeProto& a, const RawSpans& raw) {
  onnx::AttributeProto c = a;
  if (raw.size()) complete_attr(c, a, raw);
  return c;
}

// ---- writing

namespace {

size_t varint_size(uint64_t v) { return CodedOutputStream::VarintSize64(v); }

void put_tag_len(Sink& out, uint32_t field, uint64_t len) {
  uint8_t buf[16];
  uint8_t* e = CodedOutputStream::WriteVarint32ToArray(WFL::MakeTag(static_cast<int>(field), WFL::WIRETYPE_LENGTH_DELIMITED), buf);
  e = CodedOutputStream::WriteVarint64ToArray(len, e);
  out.write(buf, static_cast<size_t>(e - buf));
}

uint64_t tag_len_size(uint32_t field, uint64_t len) {
  return varint_size(WFL::MakeTag(static_cast<int>(field), WFL::WIRETYPE_LENGTH_DELIMITED)) + varint_size(len);
}

struct TensorPart {
  std::string head, tail;  // fields before and after raw_data (or the whole tensor in head)
  const ir::Tensor* raw = nullptr;
  uint64_t size() const {
    return head.size() + tail.size() + (raw ? tag_len_size(onnx::TensorProto::kRawDataFieldNumber, raw->size) + raw->size : 0);
  }
};

// A helper message on the same arena as the model (so that swapping fields with it moves
// pointers instead of copying), or on the heap when the model is.
template <class T>
class Local {
 public:
  explicit Local(google::protobuf::Arena* a) : p_(google::protobuf::Arena::CreateMessage<T>(a)), own_(a == nullptr) {}
  ~Local() {
    if (own_) delete p_;
  }
  Local(const Local&) = delete;
  Local& operator=(const Local&) = delete;
  T* operator->() { return p_; }
  T& operator*() { return *p_; }

 private:
  T* p_;
  bool own_;
};

}  // namespace

uint64_t serialize_model_spliced(onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred, Sink& out,
                                 const std::string& what) {
  auto too_big = [&] { return Error(what + "the model cannot be serialised (over 2 GiB? use --external-data)"); };
  if (!m.has_graph()) {
    std::string s;
    if (!m.SerializeToString(&s)) throw too_big();
    out.reserve(s.size());
    out.write(s.data(), s.size());
    return s.size();
  }
  google::protobuf::Arena* arena = m.GetArena();
  // Model: fields 1-6 | graph (7) | 8, 14, 20, 25.
  Local<onnx::ModelProto> mtail(arena);
  mtail->mutable_opset_import()->Swap(m.mutable_opset_import());
  mtail->mutable_metadata_props()->Swap(m.mutable_metadata_props());
  mtail->mutable_training_info()->Swap(m.mutable_training_info());
  mtail->mutable_functions()->Swap(m.mutable_functions());
  // Graph: node (1), name (2) | initializer (5) | 10-15.
  onnx::GraphProto& g = *m.mutable_graph();
  Local<onnx::GraphProto> gtail(arena);
  if (g.has_doc_string()) {
    gtail->mutable_doc_string()->swap(*g.mutable_doc_string());
    g.clear_doc_string();
  }
  gtail->mutable_input()->Swap(g.mutable_input());
  gtail->mutable_output()->Swap(g.mutable_output());
  gtail->mutable_value_info()->Swap(g.mutable_value_info());
  gtail->mutable_quantization_annotation()->Swap(g.mutable_quantization_annotation());
  gtail->mutable_sparse_initializer()->Swap(g.mutable_sparse_initializer());

  auto& inits = *g.mutable_initializer();
  std::vector<TensorPart> parts(static_cast<size_t>(inits.size()));
  uint64_t graph_size = 0;
  for (int i = 0; i < inits.size(); ++i) {
    onnx::TensorProto& t = inits[i];
    TensorPart& part = parts[static_cast<size_t>(i)];
    part.raw = static_cast<size_t>(i) < deferred.size() ? deferred[static_cast<size_t>(i)] : nullptr;
    if (part.raw) {
      // Tensor: fields 1-8 | raw_data (9) | 10-14.
      Local<onnx::TensorProto> tt(arena);
      tt->mutable_double_data()->Swap(t.mutable_double_data());
      tt->mutable_uint64_data()->Swap(t.mutable_uint64_data());
      if (t.has_doc_string()) {
        tt->mutable_doc_string()->swap(*t.mutable_doc_string());
        t.clear_doc_string();
      }
      tt->mutable_external_data()->Swap(t.mutable_external_data());
      if (t.has_data_location()) tt->set_data_location(t.data_location());
      t.clear_data_location();
      if (!tt->SerializeToString(&part.tail)) throw too_big();
    }
    if (!t.SerializeToString(&part.head)) throw too_big();
    uint64_t ts = part.size();
    graph_size += tag_len_size(onnx::GraphProto::kInitializerFieldNumber, ts) + ts;
  }
  inits.Clear();
  std::string mh, mt, gh, gt;
  if (!g.SerializeToString(&gh) || !gtail->SerializeToString(&gt)) throw too_big();
  m.clear_graph();
  if (!m.SerializeToString(&mh) || !mtail->SerializeToString(&mt)) throw too_big();
  graph_size += gh.size() + gt.size();
  uint64_t total = mh.size() + tag_len_size(onnx::ModelProto::kGraphFieldNumber, graph_size) + graph_size + mt.size();
  if (total > static_cast<uint64_t>(INT_MAX)) throw too_big();
  out.reserve(total);

  out.write(mh.data(), mh.size());
  put_tag_len(out, onnx::ModelProto::kGraphFieldNumber, graph_size);
  out.write(gh.data(), gh.size());
  for (const auto& part : parts) {
    put_tag_len(out, onnx::GraphProto::kInitializerFieldNumber, part.size());
    out.write(part.head.data(), part.head.size());
    if (part.raw) {
      put_tag_len(out, onnx::TensorProto::kRawDataFieldNumber, part.raw->size);
      out.write_tensor(*part.raw);
    }
    out.write(part.tail.data(), part.tail.size());
  }
  out.write(gt.data(), gt.size());
  out.write(mt.data(), mt.size());
  return total;
}

}  // namespace amanda::onnx_frontend::detail
