// The gate (support/gate.h). This first version routes the model file and the files it names
// through the path policy (path_policy.h) and stages outputs as AtomicFiles committed together.
#include "amanda/support/gate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "amanda/support/diagnostics.h"
#include "amanda/support/path_policy.h"

namespace amanda {

namespace fs = std::filesystem;

struct ReadGate::Impl {
  std::map<std::string, std::shared_ptr<const Buffer>> mapped;
};

ReadGate::ReadGate(std::string model) : model_(std::move(model)), impl_(std::make_unique<Impl>()) {
  struct stat st {};
  std::string m = model_;
  while (m.size() > 1 && m.back() == '/') m.pop_back();
  model_is_folder_ = ::stat(m.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (model_is_folder_) {
    root_ = m;
  } else {
    fs::path parent = fs::path(m).parent_path();
    root_ = parent.empty() ? "." : parent.string();
  }
}

ReadGate::~ReadGate() = default;

std::string ReadGate::peek(size_t n) const {
  if (model_is_folder_) return {};
  struct stat st {};
  if (::stat(model_.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};  // a FIFO or a device is never opened
  int fd = ::open(model_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return {};
  struct stat st2 {};
  std::string head;
  if (::fstat(fd, &st2) == 0 && S_ISREG(st2.st_mode)) {
    head.resize(n);
    ssize_t got = ::read(fd, head.data(), n);
    head.resize(got > 0 ? static_cast<size_t>(got) : 0);
  }
  ::close(fd);
  return head;
}

std::shared_ptr<const Buffer> ReadGate::map_model() const { return map_file(model_); }

std::shared_ptr<const Buffer> ReadGate::map(const std::string& name, const std::string& what) {
  auto it = impl_->mapped.find(name);
  if (it != impl_->mapped.end()) return it->second;
  auto b = map_model_file(root_, name, what);
  impl_->mapped.emplace(name, b);
  return b;
}

bool ReadGate::has_file(const std::string& name) const {
  try {
    map_model_file(root_, name, "file");
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool ReadGate::has_folder(const std::string& name) const {
  if (name.empty() || name[0] == '/' || name.find("..") != std::string::npos) return false;
  std::error_code ec;
  fs::path p = fs::path(root_) / name;
  return fs::is_directory(fs::symlink_status(p, ec)) && !ec;
}

std::vector<std::string> ReadGate::list(const std::string& name, size_t limit) const {
  if (!has_folder(name)) throw Error("folder '" + name + "' is refused: not a folder inside the model's folder");
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(root_) / name, ec)) {
    if (out.size() >= limit) throw Error("folder '" + name + "' has more than " + std::to_string(limit) + " entries");
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct WriteGate::Impl {
  std::vector<std::pair<std::string, std::unique_ptr<AtomicFile>>> files;  // relative name -> staged file
  bool folder = false;
};

WriteGate::WriteGate(std::string output) : output_(std::move(output)), impl_(std::make_unique<Impl>()) {}
WriteGate::~WriteGate() = default;  // AtomicFiles never committed remove their temporaries

AtomicFile& WriteGate::main() {
  for (auto& [n, f] : impl_->files)
    if (n.empty()) return *f;
  impl_->files.emplace_back("", std::make_unique<AtomicFile>(output_));
  return *impl_->files.back().second;
}

AtomicFile& WriteGate::create(const std::string& name) {
  if (name.empty() || name[0] == '/' || name.find('\\') != std::string::npos || name.find('\0') != std::string::npos)
    throw Error("output file '" + name + "' is refused: a writer names files relative to the output");
  for (size_t s = 0; s <= name.size();) {
    size_t e = name.find('/', s);
    if (e == std::string::npos) e = name.size();
    std::string part = name.substr(s, e - s);
    if (part.empty() || part == "." || part == "..")
      throw Error("output file '" + name + "' is refused: empty, '.' or '..' component");
    s = e + 1;
  }
  if (impl_->files.size() >= kMaxFiles) throw Error("output '" + output_ + "': more than " + std::to_string(kMaxFiles) + " files");
  fs::path base = impl_->folder ? fs::path(output_) : fs::path(output_).parent_path();
  impl_->files.emplace_back(name, std::make_unique<AtomicFile>((base / name).string()));
  return *impl_->files.back().second;
}

void WriteGate::make_folder_output() { impl_->folder = true; }

void WriteGate::commit() {
  for (auto& [n, f] : impl_->files) f->prepare();
  for (auto& [n, f] : impl_->files) f->publish();
}

std::vector<std::string> WriteGate::files() const {
  std::vector<std::string> v;
  for (const auto& [n, f] : impl_->files) v.push_back(n.empty() ? output_ : n);
  return v;
}

}  // namespace amanda
