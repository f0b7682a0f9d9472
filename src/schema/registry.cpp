#include "amanda/schema/registry.h"
#include "amanda/support/file.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace amanda::schema {

namespace fs = std::filesystem;

namespace {

// A namespace stored in a file; loaded on first use.
class FileProvider final : public Provider {
 public:
  FileProvider(std::string name, std::string path) : name_(std::move(name)), path_(std::move(path)) {}
  std::vector<std::string> names() const override { return {name_}; }
  std::unique_ptr<NamespaceSchema> load(const std::string&, const TypeSystems& types) const override {
    auto ns = read_namespace(path_, types);
    if (ns->name != name_)
      throw ParseError(ns->loc, "file " + path_ + " is where namespace " + name_ + " should be, but it declares " + ns->name);
    return ns;
  }

 private:
  std::string name_, path_;
};

}  // namespace

Registry::Registry() = default;

void Registry::note_name(const std::string& name) {
  auto [family, version] = split_version(name);
  if (version.empty()) return;
  auto& v = families_[family];
  if (std::find(v.begin(), v.end(), version) != v.end()) return;
  v.push_back(version);
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) { return compare_versions(a, b) < 0; });
}

void Registry::add_provider(std::shared_ptr<Provider> p) {
  for (const auto& n : p->names()) {
    sources_[n] = p;
    loaded_.erase(n);
    note_name(n);
  }
}

void Registry::add(std::unique_ptr<NamespaceSchema> ns) {
  if (!ns) throw Error("Registry::add: no namespace");
  if (!ns->types) compile_types(*ns, types_);  // built in code: compile its type expressions here
  std::string n = ns->name;
  sources_.erase(n);
  note_name(n);
  loaded_[n] = std::move(ns);
}

void Registry::add_folder(const std::string& dir) {
  std::error_code ec;
  for (const fs::path f : data_files(dir)) {
    // tensorflow/1.13.1.yaml -> amanda/tensorflow/1.13.1 (or amanda/... when the folder says so)
    fs::path rel = fs::relative(f, dir, ec);
    std::string name = (rel.parent_path() / rel.stem()).generic_string();
    if (name.rfind("amanda/", 0) != 0) name = "amanda/" + name;
    if (!valid_namespace_name(name)) continue;
    add_provider(std::make_shared<FileProvider>(name, f.string()));
  }
}

void Registry::add_search_path(const std::string& paths) {
  size_t start = 0;
  while (start <= paths.size()) {
    size_t e = paths.find(':', start);
    if (e == std::string::npos) e = paths.size();
    if (e > start) add_folder(paths.substr(start, e - start));
    start = e + 1;
  }
}

bool Registry::known(std::string_view name) const { return loaded_.contains(name) || sources_.contains(name); }

const NamespaceSchema* Registry::find(std::string_view name) {
  auto it = loaded_.find(name);
  if (it != loaded_.end()) return it->second.get();
  auto s = sources_.find(name);
  if (s == sources_.end()) return nullptr;
  std::string key(name);
  auto ns = s->second->load(key, types_);
  if (!ns) return nullptr;
  if (ns->name != key) throw Error("the provider of namespace " + key + " gave namespace " + ns->name);
  if (!ns->types) compile_types(*ns, types_);
  auto* raw = ns.get();
  loaded_[key] = std::move(ns);
  return raw;
}

std::vector<std::string> Registry::list(std::string_view prefix) const {
  std::vector<std::string> names;
  auto want = [&](const std::string& n) {
    return prefix.empty() || n == prefix || (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0 && n[prefix.size()] == '/');
  };
  for (const auto& [n, _] : sources_)
    if (want(n)) names.push_back(n);
  for (const auto& [n, _] : loaded_)
    if (want(n) && !sources_.contains(n)) names.push_back(n);
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    auto [fa, va] = split_version(a);
    auto [fb, vb] = split_version(b);
    if (fa != fb) return fa < fb;
    return compare_versions(va, vb) < 0;
  });
  return names;
}

size_t Registry::loaded_count() const { return loaded_.size(); }

const OpSchema* Registry::resolve(std::string_view ns, std::string_view type) {
  if (const NamespaceSchema* n = find(ns))
    if (const OpSchema* op = n->find(type)) return op;
  auto [family, version] = split_version(ns);
  if (version.empty()) return nullptr;
  auto fam = families_.find(family);
  if (fam == families_.end()) return nullptr;
  const auto& versions = fam->second;
  // Walk down from the largest version <= the one asked for.
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    if (compare_versions(*it, version) > 0) continue;
    const NamespaceSchema* n = find(family + "/" + *it);
    if (!n) continue;
    if (const OpSchema* op = n->find(type)) return op;
  }
  return nullptr;
}

std::string shipped_data_dir(const std::string& name, const char* env_var, const std::string& fallback) {
  if (const char* env = std::getenv(env_var)) return env;
  // <prefix>/bin/amanda -> <prefix>/share/amanda/NAME
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    fs::path exe(std::string(buf, static_cast<size_t>(n)));
    fs::path share = exe.parent_path().parent_path() / "share" / "amanda" / name;
    std::error_code ec;
    if (fs::is_directory(share, ec)) return share.string();
  }
  return fallback;
}

std::string shipped_namespace_dir() {
#ifdef AMANDA_SOURCE_NAMESPACES
  return shipped_data_dir("namespaces", "AMANDA_NAMESPACES_DIR", AMANDA_SOURCE_NAMESPACES);
#else
  return shipped_data_dir("namespaces", "AMANDA_NAMESPACES_DIR", "namespaces");
#endif
}

std::unique_ptr<Registry> make_default_registry() {
  auto r = std::make_unique<Registry>();
  r->add_folder(shipped_namespace_dir());
  if (const char* p = std::getenv("AMANDA_SCHEMA_PATH")) r->add_search_path(p);
  return r;
}

}  // namespace amanda::schema
