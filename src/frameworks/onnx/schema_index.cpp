// See schema_index.h.
#include "schema_index.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <string_view>
#include <unordered_map>
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

struct Index {
  std::mutex mu;
  // (domain, op) -> entries by since version, ascending
  std::unordered_map<std::string, std::vector<const Entry*>> by_op;
  std::unordered_map<const Entry*, const onnx::OpSchema*> built;
  std::deque<onnx::OpSchema> schemas;  // never freed: pointers are handed out (as the registry's are)
  Index() {
    for (const Entry& e : kEntries) by_op[key(e.domain, e.op)].push_back(&e);
    for (auto& [k, v] : by_op) std::sort(v.begin(), v.end(), [](const Entry* a, const Entry* b) { return a->since < b->since; });
  }
  static std::string key(Domain d, std::string_view op) { return std::string(1, static_cast<char>('0' + d)) + std::string(op); }
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
  auto it = ix.by_op.find(Index::key(d, op));
  if (it == ix.by_op.end()) return nullptr;  // libonnx has no such op in this domain
  const Entry* pick = nullptr;
  for (const Entry* e : it->second)
    if (e->since <= version) pick = e;
  if (!pick) return nullptr;  // every version is newer
  auto [b, fresh] = ix.built.try_emplace(pick, nullptr);
  if (fresh) {
    onnx::OpSchema& s = ix.schemas.emplace_back(pick->make());
    s.Finalize();  // what the registry does when it registers a schema
    b->second = &s;
  }
  return b->second;
}

size_t built_schema_count() {
  Index& ix = index();
  std::lock_guard<std::mutex> lock(ix.mu);
  return ix.schemas.size();
}

}  // namespace amanda::onnx_frontend::detail
