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

Symbol PortNamer::name(const std::vector<schema::PortSchema>* ports, int i, int n, const char* fallback, ir::Graph& g) const {
  (void)n;
  if (ports) {
    auto [it, fresh] = cache_.try_emplace(ports);
    Names& c = it->second;
    if (fresh) {
      if (ns_ == shipped_namespace()) {
        // The shipped namespace lives as long as the process: its ports' names are made once per
        // process, not once per import (a small net's import is otherwise mostly this).
        static std::mutex m;
        static absl::flat_hash_map<const std::vector<schema::PortSchema>*, std::pair<std::vector<std::string>, int>> shared;
        std::lock_guard<std::mutex> lock(m);
        auto [sit, made] = shared.try_emplace(ports);
        if (made) {
          sit->second.second = -1;
          make_names(*ports, sit->second.first, sit->second.second);
        }
        c.names = sit->second.first;
        c.variadic = sit->second.second;
      } else {
        make_names(*ports, c.names, c.variadic);
      }
    }
    if (c.variadic >= 0 && i >= c.variadic) return g.sym(c.names[c.variadic] + "." + std::to_string(i - c.variadic));
    if (i < static_cast<int>(c.names.size())) {
      if (c.graph != &g) {
        c.graph = &g;
        c.syms.clear();
        for (const auto& n : c.names) c.syms.push_back(g.sym(n));
      }
      return c.syms[static_cast<size_t>(i)];
    }
  }
  return g.sym(std::string(fallback) + "." + std::to_string(i));
}

}  // namespace amanda::caffe2_frontend::detail
