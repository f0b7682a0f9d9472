// The namespace registry: hierarchical names (amanda/tensorflow/1.13.1 lives in amanda/tensorflow,
// in amanda), lazy loading through providers, and ONNX-style resolution of versioned namespaces:
// an op's schema in amanda/onnx/12 is the one declared in the largest version <= 12 of the
// family amanda/onnx.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/schema/schema.h"

namespace amanda::schema {

// Supplies namespaces on demand. names() must be cheap; load() builds one namespace.
class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::vector<std::string> names() const = 0;
  virtual std::unique_ptr<NamespaceSchema> load(const std::string& name, const TypeSystems& types) const = 0;
};

class Registry {
 public:
  Registry();
  TypeSystems& type_systems() { return types_; }
  const TypeSystems& type_systems() const { return types_; }

  void add_provider(std::shared_ptr<Provider> p);
  // Adds a loaded namespace (a user's --schema file). Replaces one of the same name.
  void add(std::unique_ptr<NamespaceSchema> ns);
  // Adds every *.yaml / *.yml / *.json file of a folder (recursively) lazily.
  void add_folder(const std::string& dir);
  // Adds the folders of a ':'-separated path list (e.g. $AMANDA_SCHEMA_PATH).
  void add_search_path(const std::string& paths);

  bool known(std::string_view name) const;
  // Loads on first use; nullptr when no provider has it. Throws what a provider throws.
  const NamespaceSchema* find(std::string_view name);
  // Every known namespace name under prefix (all when empty), sorted by path then version.
  std::vector<std::string> list(std::string_view prefix = {}) const;
  size_t loaded_count() const;

  // The schema of op `type` in namespace ns: declared there, or, for a versioned namespace
  // FAMILY/V, in the largest version <= V of FAMILY that declares it.
  const OpSchema* resolve(std::string_view ns, std::string_view type);

 private:
  TypeSystems types_;
  std::map<std::string, std::shared_ptr<Provider>, std::less<>> sources_;  // name -> provider
  std::map<std::string, std::unique_ptr<NamespaceSchema>, std::less<>> loaded_;
  // family -> versions (sorted by compare_versions)
  std::map<std::string, std::vector<std::string>, std::less<>> families_;
  void note_name(const std::string& name);
};

// The registry the tool uses: the namespaces shipped in namespaces/, the ONNX ones from libonnx,
// and the folders of $AMANDA_SCHEMA_PATH.
std::unique_ptr<Registry> make_default_registry();
// Where the shipped namespaces/ folder is (next to the executable's share dir or the source tree).
std::string shipped_namespace_dir();
// A data folder shipped with the tool: $ENV_VAR if set, else <prefix>/share/amanda/NAME next to the
// executable, else `fallback` (the source tree's folder, for a build that is not installed).
std::string shipped_data_dir(const std::string& name, const char* env_var, const std::string& fallback);

}  // namespace amanda::schema
