// The path policy for every file a model refers to (ONNX external data, the tensor side files of
// the YAML/JSON form, anything later): a model from a stranger must not make Amanda read
// /etc/passwd, block on a FIFO, or map the same file 70,000 times. A name is accepted when it is
//   - relative, without '..' and without a backslash;
//   - resolved inside the model's folder with no symbolic link in any component (each component
//     is opened with O_NOFOLLOW from the folder's descriptor, so nothing can swap a component
//     for a link between a check and the open);
//   - a regular file (no FIFO, device or folder): looked at with O_PATH first (opening a device
//     can have effects), then opened O_NONBLOCK and checked again with fstat.
// See SECURITY.md.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "amanda/support/file.h"

namespace amanda {

// Maps `name` (as the model wrote it) under the policy. Throws amanda::Error
// "<what> '<name>' is refused: <reason>" (or "... cannot be read: <reason>").
std::shared_ptr<const Buffer> map_model_file(const std::string& base_dir, const std::string& name, const std::string& what);

// The files one model refers to, each mapped once and shared by every tensor in it (a model of
// 70,000 external tensors in one file maps it once, not past the kernel's mapping limit).
class ModelFiles {
 public:
  ModelFiles(std::string base_dir, std::string what) : base_dir_(std::move(base_dir)), what_(std::move(what)) {}
  std::shared_ptr<const Buffer> map(const std::string& name);
  const std::string& base_dir() const { return base_dir_; }

 private:
  std::string base_dir_;
  std::string what_;
  std::map<std::string, std::shared_ptr<const Buffer>> mapped_;
};

}  // namespace amanda
