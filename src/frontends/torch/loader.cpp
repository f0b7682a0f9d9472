// Finds and loads libamanda_torch.so on first use (see torchscript.h for why it is a plugin), and
// provides the PyTorch namespaces: the shipped .ops files first, the plugin only for the rest.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

#include "amanda/frontends/torch/torchscript.h"
#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "frontends/torchscript/importer.h"
#include "frontends/torchscript/namespace_file.h"

#ifndef AMANDA_TORCH_NAMESPACE
#define AMANDA_TORCH_NAMESPACE ""
#endif
#ifndef AMANDA_TORCH_PLUGIN_DIR
#define AMANDA_TORCH_PLUGIN_DIR ""
#endif

namespace amanda::torch_frontend {

namespace {

// The PyTorch namespace shipped as namespaces/pytorch/<version>.ops, for builds without libtorch.
constexpr const char* kShippedTorchNamespace = "amanda/pytorch/1.13";

std::string exe_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.parent_path().string();
}

struct Loaded {
  const PluginApi* api = nullptr;
  std::string why;
};

const Loaded& load() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::string(AMANDA_TORCH_NAMESPACE).empty()) {
      l.why = "this build of Amanda has no PyTorch plugin (built with -DAMANDA_WITH_TORCH=OFF, or without Debian's libtorch-dev)";
      return;
    }
    std::vector<std::string> candidates;
    if (const char* e = std::getenv("AMANDA_TORCH_PLUGIN")) candidates.push_back(e);
    std::string d = exe_dir();
    if (!d.empty()) {
      candidates.push_back(d + "/libamanda_torch.so");
      candidates.push_back(d + "/../lib/amanda/libamanda_torch.so");
    }
    if (*AMANDA_TORCH_PLUGIN_DIR) candidates.push_back(std::string(AMANDA_TORCH_PLUGIN_DIR) + "/libamanda_torch.so");
    std::string errors;
    for (const auto& c : candidates) {
      std::error_code ec;
      if (!std::filesystem::exists(c, ec)) continue;
      void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: its objects outlive calls
      if (!h) {
        errors += std::string("; ") + dlerror();
        continue;
      }
      auto fn = reinterpret_cast<const PluginApi* (*)()>(dlsym(h, "amanda_torch_plugin_v1"));
      if (!fn) {
        errors += "; " + c + " has no amanda_torch_plugin_v1";
        continue;
      }
      const PluginApi* api = fn();
      if (!api || api->version != 1) {
        errors += "; " + c + " is a plugin of another version";
        continue;
      }
      l.api = api;
      return;
    }
    l.why = "the PyTorch plugin libamanda_torch.so was not found next to the amanda executable (or in $AMANDA_TORCH_PLUGIN)" + errors;
  });
  return l;
}

const PluginApi& api() {
  const Loaded& l = load();
  if (!l.api) throw Error("PyTorch support is not available: " + l.why);
  return *l.api;
}

// The PyTorch namespaces: the compact files shipped as namespaces/pytorch/<version>.ops (read
// without libtorch, in milliseconds), and the plugin's own namespace when no file has its name.
class TorchProvider final : public schema::Provider {
 public:
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    bool plugin_named = false;
    for (const auto& [name, file] : files()) {
      out.push_back(name);
      plugin_named |= name == AMANDA_TORCH_NAMESPACE;
    }
    if (!plugin_named && *AMANDA_TORCH_NAMESPACE) out.push_back(AMANDA_TORCH_NAMESPACE);
    return out;
  }
  std::unique_ptr<schema::NamespaceSchema> load(const std::string& name, const schema::TypeSystems& types) const override {
    for (const auto& [n, file] : files()) {
      if (n != name) continue;
      auto ns = torchscript::read_namespace_file(map_file(file)->view(), file, types);
      if (ns->name != name) throw Error(file + ": error: the file holds namespace '" + ns->name + "', not '" + name + "'");
      return ns;
    }
    if (name != AMANDA_TORCH_NAMESPACE) return nullptr;
    return plugin_namespace(types);
  }

 private:
  // amanda/pytorch/<version> -> <shipped namespaces>/pytorch/<version>.ops; lists the folder only.
  static std::vector<std::pair<std::string, std::string>> files() {
    std::vector<std::pair<std::string, std::string>> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(schema::shipped_namespace_dir() + "/pytorch", ec)) {
      if (e.path().extension() != ".ops") continue;
      out.emplace_back("amanda/pytorch/" + e.path().stem().string(), e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

bool is_torchscript_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".pt" || ext == ".pth" || ext == ".ptl" || ext == ".torchscript") return true;
  if (ext == ".onnx" || ext == ".yaml" || ext == ".yml" || ext == ".json") return false;
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  return f.read(magic, 4) && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

text::Document read_torchscript(const std::string& path, const ImportOptions& o, schema::Registry* registry,
                                std::string* used) {
  if (o.reader != "auto" && o.reader != "script" && o.reader != "libtorch")
    throw Error("unknown TorchScript reader '" + o.reader + "' (auto, script or libtorch)");
  if (o.reader != "libtorch") {
    std::unique_ptr<schema::Registry> own;
    if (!registry) {
      own = schema::make_default_registry();
      own->add_provider(make_torch_namespace_provider());
      registry = own.get();
    }
    std::string ns_name = torch_namespace_name();
    if (ns_name.empty()) ns_name = kShippedTorchNamespace;
    try {
      const schema::NamespaceSchema* ns = registry->find(ns_name);
      if (!ns) throw torchscript::Unsupported("the namespace " + ns_name + " is not available");
      std::vector<std::string> gaps;
      text::Document doc = torchscript::import_archive(path, o, *ns, &gaps);
      std::string list;
      for (const auto& g : gaps) list += (list.empty() ? "" : ", ") + g;
      // Untyped values where libtorch would type them: prefer libtorch's graph when it is here.
      if (!gaps.empty() && o.reader == "auto" && torch_available())
        throw torchscript::Unsupported("no shape rule for " + list);
      if (!gaps.empty())
        std::cerr << "amanda: note: " << path << ": the libtorch-free reader has no shape rule for " << list
                  << "; their outputs are untyped\n";
      if (used) *used = "script";
      return doc;
    } catch (const torchscript::Unsupported& e) {
      if (o.reader == "script") throw Error(path + ": error: the libtorch-free reader cannot read this module: " + e.what());
      if (!torch_available())
        throw Error(path + ": error: the libtorch-free reader cannot read this module: " + e.what() +
                    "; and the libtorch reader is not available: " + load().why);
      if (std::getenv("AMANDA_TORCH_DEBUG")) std::cerr << "torch import: falling back to libtorch: " << e.what() << "\n";
    }
  }
  const Loaded& l = load();
  if (!l.api) throw Error(path + ": error: PyTorch support is not available: " + l.why);
  const PluginApi& a = *l.api;
  text::Document doc;
  std::string err;
  if (!a.read(path.c_str(), &o, &doc, &err)) throw Error(err);
  if (used) *used = "libtorch";
  return doc;
}

std::string torch_namespace_name() { return AMANDA_TORCH_NAMESPACE; }

bool torch_available(std::string* why) {
  const Loaded& l = load();
  if (why) *why = l.why;
  return l.api != nullptr;
}

std::shared_ptr<schema::Provider> make_torch_namespace_provider() { return std::make_shared<TorchProvider>(); }

std::unique_ptr<schema::NamespaceSchema> plugin_namespace(const schema::TypeSystems& types) {
  std::unique_ptr<schema::NamespaceSchema> ns;
  std::string err;
  if (!api().namespace_schema(&types, &ns, &err)) throw Error(std::string(AMANDA_TORCH_NAMESPACE) + ": error: " + err);
  return ns;
}

}  // namespace amanda::torch_frontend
