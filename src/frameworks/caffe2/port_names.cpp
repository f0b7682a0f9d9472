#include "port_names.h"

#include <mutex>

#include "amanda/schema/registry.h"
#include "netdef.h"

namespace amanda::caffe2_frontend::detail {

const schema::NamespaceSchema* shipped_namespace() {
  static std::once_flag once;
  static std::unique_ptr<schema::Registry> reg;
  static const schema::NamespaceSchema* ns = nullptr;
  std::call_once(once, [] {
    try {
      reg = schema::make_default_registry();
      ns = reg->find(kCaffe2Namespace);
    } catch (const std::exception&) {
      ns = nullptr;  // ports get positional names
    }
  });
  return ns;
}

PortNamer::PortNamer(const schema::NamespaceSchema* ns) : ns_(ns ? ns : shipped_namespace()) {}

const schema::OpSchema* PortNamer::find(std::string_view type) const { return ns_ ? ns_->find(type) : nullptr; }

namespace {

void make_names(const std::vector<schema::PortSchema>& ports, std::vector<std::string>& names, int& variadic) {
  for (const auto& p : ports) {
    std::optional<std::string> base = p.expected_name();
    if (!base) break;
    names.push_back(std::move(*base));
    if (p.arity == schema::Arity::Variadic) {
      variadic = static_cast<int>(names.size()) - 1;
      break;
    }
  }
}

}  // namespace

const PortNamer::Names* PortNamer::names_of(const std::vector<schema::PortSchema>* ports) const {
  if (ns_ == shipped_namespace()) {
    // The shipped namespace lives as long as the process: its ports' names are made once per
    // process, not once per import (a small net's import is otherwise mostly this).
    static std::mutex m;
    static absl::node_hash_map<const std::vector<schema::PortSchema>*, Names> shared;  // (node-stable)
    std::lock_guard<std::mutex> lock(m);
    auto [it, made] = shared.try_emplace(ports);
    if (made) make_names(*ports, it->second.names, it->second.variadic);
    return &it->second;
  }
  auto [it, made] = own_.try_emplace(ports);
  if (made) make_names(*ports, it->second.names, it->second.variadic);
  return &it->second;
}

Symbol PortNamer::name_at(const Names* c, int i, const char* fallback, ir::Graph& g) {
  if (c) {
    if (c->variadic >= 0 && i >= c->variadic) return g.sym(c->names[c->variadic] + "." + std::to_string(i - c->variadic));
    if (i < static_cast<int>(c->names.size())) return g.sym(c->names[static_cast<size_t>(i)]);
  }
  return g.sym(std::string(fallback) + "." + std::to_string(i));
}

Symbol PortNamer::name(const std::vector<schema::PortSchema>* ports, int i, int n, const char* fallback, ir::Graph& g) const {
  (void)n;
  return name_at(ports ? names_of(ports) : nullptr, i, fallback, g);
}

}  // namespace amanda::caffe2_frontend::detail
