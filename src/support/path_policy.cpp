#include "amanda/support/path_policy.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "amanda/support/diagnostics.h"
#include "amanda/support/gate.h"

namespace amanda {

std::shared_ptr<const Buffer> map_model_file(const std::string& base_dir, const std::string& name, const std::string& what) {
  // One implementation of the policy: the gate's (src/support/gate.cpp).
  if (base_dir.empty()) throw Error(what + " is refused: the model's folder is unknown");
  ReadGate gate(base_dir + "/");
  return gate.map(name, what);
}

std::shared_ptr<const Buffer> ModelFiles::map(const std::string& name) {
  auto it = mapped_.find(name);
  if (it != mapped_.end()) return it->second;
  auto buf = map_model_file(base_dir_, name, what_);
  mapped_.emplace(name, buf);
  return buf;
}

}  // namespace amanda
