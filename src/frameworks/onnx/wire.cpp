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

bool merge(google::protobuf::MessageLite& m, const uint8_t* b, const uint8_t* e) {
  if (b == e) return true;
  CodedInputStream in(b, static_cast<int>(e - b));
  return m.MergePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// Contiguous runs of fields that protobuf parses, flushed into `m` when a routed field comes.
struct Runs {
  google::protobuf::MessageLite& m;
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
    bool ok = !b || merge(m, b, e);
    b = e = nullptr;
    return ok;
  }
};

bool parse_tensor(const uint8_t* p, size_t n, onnx::TensorProto& t, RawSpan& raw) {
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
  if (raws != 1 || odd) return merge(t, p, p + n);  // protobuf's own rules (last one wins, ...)
  if (!merge(t, p, rf.begin) || !merge(t, rf.end, p + n)) return false;
  raw = RawSpan{rf.payload, rf.payload_size, true, p, n, nullptr};
  return true;
}

bool parse_graph(const uint8_t* p, size_t n, onnx::GraphProto& g, std::vector<RawSpan>& raw) {
  Runs runs{g};
  bool ok = for_each_field(p, n, [&](const Field& f) {
    if (f.number != onnx::GraphProto::kInitializerFieldNumber) return runs.add(f);
    if (f.type != WFL::WIRETYPE_LENGTH_DELIMITED || !runs.flush()) return false;
    raw.emplace_back();
    return parse_tensor(f.payload, f.payload_size, *g.add_initializer(), raw.back());
  });
  return ok && runs.flush();
}

}  // namespace

bool parse_model_borrowing(const uint8_t* bytes, size_t n, onnx::ModelProto& m, std::vector<RawSpan>& raw) {
  raw.clear();
  Runs runs{m};
  Field graph{};
  int graphs = 0;
  bool ok = for_each_field(bytes, n, [&](const Field& f) {
    if (f.number != onnx::ModelProto::kGraphFieldNumber) return runs.add(f);
    if (f.type != WFL::WIRETYPE_LENGTH_DELIMITED) return false;
    graph = f;
    return ++graphs == 1 && runs.flush();  // several graph fields merge: leave that to protobuf
  });
  if (!ok || !runs.flush() || graphs != 1) return false;
  return parse_graph(graph.payload, graph.payload_size, *m.mutable_graph(), raw);
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
