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

Symbol PortNamer::name(const std::vector<schema::PortSchema>* ports, int i, int n, const char* fallback, ir::Graph& g) const {
  (void)n;
  if (ports) {
    for (size_t k = 0; k < ports->size(); ++k) {
      const schema::PortSchema& p = (*ports)[k];
      std::optional<std::string> base = p.expected_name();
      if (!base) break;
      if (p.arity == schema::Arity::Variadic) return g.sym(*base + "." + std::to_string(i - static_cast<int>(k)));
      if (static_cast<int>(k) == i) return g.sym(*base);
    }
  }
  return g.sym(std::string(fallback) + "." + std::to_string(i));
}

}  // namespace amanda::caffe2_frontend::detail
