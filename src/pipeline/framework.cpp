#include "amanda/pipeline/framework.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "amanda/ir/conventions.h"

namespace amanda::pipeline {

const std::vector<std::string>& Options::all(std::string_view key) const {
  static const std::vector<std::string> none;
  auto it = values_.find(std::string(key));
  return it == values_.end() ? none : it->second;
}

std::string Options::get(std::string_view key, std::string fallback) const {
  const auto& v = all(key);
  return v.empty() ? fallback : v.back();
}

bool Options::flag(std::string_view key) const {
  auto it = values_.find(std::string(key));
  if (it == values_.end()) return false;
  if (it->second.empty()) return true;
  const std::string& v = it->second.back();
  return v.empty() || v == "1" || v == "true" || v == "yes" || v == "on";
}

FrameworkRegistry& FrameworkRegistry::instance() {
  static FrameworkRegistry* r = [] {
    auto* reg = new FrameworkRegistry();  // never freed: frameworks may be used during exit
    register_builtin_frameworks(*reg);
    // Framework plug-ins outside the source tree: shared objects named in $AMANDA_PLUGINS (':'-separated).
    if (const char* p = std::getenv("AMANDA_PLUGINS")) {
      std::string s = p;
      size_t start = 0;
      while (start <= s.size()) {
        size_t e = s.find(':', start);
        if (e == std::string::npos) e = s.size();
        if (e > start) reg->load_plugin(s.substr(start, e - start));
        start = e + 1;
      }
    }
    // Every framework's conventions (element type numberings, constant ops), once.
    for (const auto& f : reg->frameworks()) f->register_conventions(ir::conventions());
    return reg;
  }();
  return *r;
}

void FrameworkRegistry::load_plugin(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw Error("$AMANDA_PLUGINS: cannot load '" + path + "': " + dlerror());
  auto fn = reinterpret_cast<amanda_register_frameworks_fn>(dlsym(h, "amanda_register_frameworks"));
  if (!fn) throw Error("$AMANDA_PLUGINS: '" + path + "' does not export amanda_register_frameworks");
  size_t before = frameworks_.size();
  fn(*this);
  // A plug-in loaded after the built-ins registered their conventions registers its own now.
  for (size_t i = before; i < frameworks_.size(); ++i) frameworks_[i]->register_conventions(ir::conventions());
  plugins_.push_back(h);
}

const Framework* FrameworkRegistry::for_namespace(std::string_view ns) const {
  for (const auto& f : frameworks_)
    for (const auto& p : f->namespace_prefixes())
      if (ns.starts_with(p)) return f.get();
  return nullptr;
}

const Framework* FrameworkRegistry::for_reading(const Probe& probe) const {
  const Framework* best = nullptr;
  int best_score = 0;
  for (const auto& f : frameworks_) {  // ties: the first registered wins (deterministic)
    int s = f->detect_read(probe);
    if (s > best_score) best = f.get(), best_score = s;
  }
  return best;
}

const Framework* FrameworkRegistry::for_writing(std::string_view path, std::string_view graph_ns) const {
  const Framework* best = nullptr;
  int best_score = 0;
  for (const auto& f : frameworks_) {
    int s = f->detect_write(path, graph_ns);
    if (s > best_score) best = f.get(), best_score = s;
  }
  return best;
}

}  // namespace amanda::pipeline
