#include "frameworks/nd4j/flat_align.h"

#include <cstdint>
#include <cstring>

namespace amanda::nd4j {

namespace {

class AlignedBuffer : public Buffer {
 public:
  explicit AlignedBuffer(const Buffer& from) : words_(new uint64_t[(from.size() + 7) / 8]), size_(from.size()) {
    if (size_) std::memcpy(words_.get(), from.data(), size_);
  }
  const uint8_t* data() const override { return reinterpret_cast<const uint8_t*>(words_.get()); }
  size_t size() const override { return size_; }

 private:
  std::unique_ptr<uint64_t[]> words_;
  size_t size_;
};

// The first misaligned vector of 8-byte numbers under a table, as "what at offset N", or "".
class Walk {
 public:
  explicit Walk(const uint8_t* base) : base_(base) {}

  template <class T>
  bool vec(const flatbuffers::Vector<T>* v, const char* what) {
    static_assert(sizeof(T) == 8);
    // (An empty vector is read by no load: FlatBuffers' C++ builder leaves it 4-byte aligned.)
    if (!v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % 8 == 0) return true;
    found = std::string(what) + " at byte offset " + std::to_string(reinterpret_cast<const uint8_t*>(v->data()) - base_);
    return false;
  }
  bool array(const sd::graph::FlatArray* a, const char* what) { return !a || vec(a->shape(), what); }
  bool arrays(const flatbuffers::Vector<flatbuffers::Offset<sd::graph::FlatArray>>* as, const char* what) {
    if (as)
      for (const auto* a : *as)
        if (!array(a, what)) return false;
    return true;
  }

  std::string found;

 private:
  const uint8_t* base_;
};

}  // namespace

std::shared_ptr<const Buffer> aligned_flatbuffer(std::shared_ptr<const Buffer> bytes) {
  if (reinterpret_cast<uintptr_t>(bytes->data()) % 8 == 0) return bytes;
  return std::make_shared<AlignedBuffer>(*bytes);
}

std::string misaligned_vector(const sd::graph::FlatGraph* g, const uint8_t* base) {
  Walk w(base);
  if (g->variables())
    for (const auto* v : *g->variables())
      if (v && (!w.vec(v->shape(), "a FlatVariable's shape") || !w.array(v->ndarray(), "a FlatVariable's ndarray shape")))
        return w.found;
  if (g->nodes())
    for (const auto* n : *g->nodes()) {
      if (!n) continue;
      if (!w.vec(n->extraParams(), "a FlatNode's extraParams") || !w.vec(n->extraInteger(), "a FlatNode's extraInteger") ||
          !w.array(n->scalar(), "a FlatNode's scalar shape"))
        return w.found;
      if (n->properties())
        for (const auto* p : *n->properties())
          if (p && (!w.vec(p->l(), "a FlatProperties' l") || !w.vec(p->d(), "a FlatProperties' d") ||
                    !w.arrays(p->a(), "a FlatProperties' array shape")))
            return w.found;
    }
  if (g->updaterState())
    for (const auto* u : *g->updaterState())
      if (u && !w.arrays(u->updaterStateValues(), "an UpdaterState's array shape")) return w.found;
  return "";
}

}  // namespace amanda::nd4j
