// See schema_index.h.
#include "schema_index.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <iterator>
#include <mutex>
#include <string_view>
#include <vector>

#include <onnx/defs/operator_sets.h>
#include <onnx/defs/operator_sets_ml.h>

namespace amanda::onnx_frontend::detail {

namespace {

enum Domain : int { Onnx, OnnxML };

struct Entry {
  const char* op;
  Domain domain;
  int since;
  onnx::OpSchema (*make)();
};

#define AMANDA_ONNX_SCHEMA(dom, ver, name) {#name, dom, ver, &onnx::GetOpSchema<onnx::ONNX_OPERATOR_SET_SCHEMA_CLASS_NAME(dom, ver, name)>},
const Entry kEntries[] = {
#include "onnx_schema_index.inc"
};
#undef AMANDA_ONNX_SCHEMA

// Entries sorted by (domain, op, since): a binary search finds an op's versions. (A hash map
// from op to versions, built on first use, was 15% of the schema lookups of a small model's whole
// `amanda optimize`.)
bool entry_less(const Entry* a, const Entry* b) {
  if (a->domain != b->domain) return a->domain < b->domain;
  if (int c = std::strcmp(a->op, b->op)) return c < 0;
  return a->since < b->since;
}

struct Index {
  std::mutex mu;
  std::vector<const Entry*> sorted;
  std::vector<const onnx::OpSchema*> built;  // by position in kEntries
  std::deque<onnx::OpSchema> schemas;  // never freed: pointers are handed out (as the registry's are)
  Index() : built(std::size(kEntries), nullptr) {
    sorted.reserve(std::size(kEntries));
    for (const Entry& e : kEntries) sorted.push_back(&e);
    std::sort(sorted.begin(), sorted.end(), entry_less);
  }
};

Index& index() {
  static Index* i = new Index;  // never destroyed (the schemas must outlive every user)
  return *i;
}

}  // namespace

const onnx::OpSchema* schema(const std::string& op, int version, const std::string& domain) {
  Domain d;
  if (domain.empty()) d = Onnx;
  else if (domain == "ai.onnx.ml") d = OnnxML;
  else return onnx::OpSchemaRegistry::Schema(op, version, domain);
  Index& ix = index();
  std::lock_guard<std::mutex> lock(ix.mu);
  // The last entry of (d, op) with since <= version.
  Entry probe{op.c_str(), d, version, nullptr};
  auto it = std::upper_bound(ix.sorted.begin(), ix.sorted.end(), &probe, entry_less);
  if (it == ix.sorted.begin()) return nullptr;
  const Entry* pick = *(it - 1);
  if (pick->domain != d || op != pick->op) return nullptr;  // no such op, or every version is newer
  const onnx::OpSchema*& b = ix.built[static_cast<size_t>(pick - kEntries)];
  if (!b) {
    onnx::OpSchema& s = ix.schemas.emplace_back(pick->make());
    s.Finalize();  // what the registry does when it registers a schema
    b = &s;
  }
  return b;
}

size_t built_schema_count() {
  Index& ix = index();
  std::lock_guard<std::mutex> lock(ix.mu);
  return ix.schemas.size();
}

}  // namespace amanda::onnx_frontend::detail
