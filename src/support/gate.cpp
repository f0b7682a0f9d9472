// The gate (include/amanda/support/gate.h): every file a reader or writer touches goes through
// here. Names a model supplies are resolved from a descriptor of the model's folder, one component
// at a time with O_NOFOLLOW, so neither '..', an absolute path nor a symbolic link anywhere can
// leave the folder, and nothing can be swapped between a check and the open. Only regular files
// are opened, and only after an O_PATH look (a FIFO or a device is never opened, so never blocks).
#include "amanda/support/gate.h"

#include <filesystem>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "amanda/support/diagnostics.h"

namespace amanda {

// A named (not anonymous) namespace: ReadGate::Impl, a class with external linkage, holds Fd
// members, which GCC warns about (-Wsubobject-linkage) when this file is compiled in a unity batch.
namespace gate_detail {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

}  // namespace gate_detail

namespace {

using gate_detail::Fd;

const char* kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

std::string errno_text(int e) { return std::strerror(e); }

// A name from a model, fit for a message: control bytes escaped (a NUL would cut the message, an
// escape sequence would reach the terminal), at most 200 bytes.
std::string shown(const std::string& name) {
  std::string out;
  for (unsigned char c : name.substr(0, 200)) {
    if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  if (name.size() > 200) out += "...";
  return out;
}

// The components of a name a model (or a writer) supplies, or the reason it is refused.
std::string split_name(const std::string& name, std::vector<std::string>& parts) {
  if (name.empty()) return "it must be a relative path inside the model's folder (it is empty)";
  if (name[0] == '/') return "it must be a relative path inside the model's folder";
  if (name.find('\\') != std::string::npos) return "it contains a backslash";
  if (name.find('\0') != std::string::npos) return "it contains a NUL character";
  if (name.size() > 4096) return "it is longer than 4096 bytes";
  for (size_t s = 0; s <= name.size();) {
    size_t e = name.find('/', s);
    if (e == std::string::npos) e = name.size();
    std::string part = name.substr(s, e - s);
    if (part == "..") return "it contains '..'";
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    s = e + 1;
  }
  return {};
}

std::string trim_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string parent_of(const std::string& p) {
  size_t s = p.rfind('/');
  if (s == std::string::npos) return ".";
  if (s == 0) return "/";
  return p.substr(0, s);
}

// Opens a regular file the user named (trusted path; symbolic links the user chose are followed)
// without blocking: looked at first, opened only when it is a regular file.
Fd open_user_file(const std::string& path, std::string& why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why = "cannot open: " + errno_text(errno);
    return Fd();
  }
  if (!S_ISREG(st.st_mode)) {
    why = std::string("it is ") + kind_of(st.st_mode) + ", expected a regular file";
    return Fd();
  }
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (f.get() < 0) {
    why = "cannot open: " + errno_text(errno);
    return Fd();
  }
  struct stat st2 {};
  if (::fstat(f.get(), &st2) != 0 || !S_ISREG(st2.st_mode)) {
    why = "it changed while it was being opened";
    return Fd();
  }
  return f;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ReadGate

struct ReadGate::Impl {
  Fd root;                 // the model's folder, opened once: every name resolves from here
  std::string root_error;  // why the root could not be opened (reported on first use)
  std::map<std::string, std::shared_ptr<const Buffer>> mapped;

  // Walks `parts` (all but the last must be folders) from the root with O_NOFOLLOW. Returns the
  // descriptor of the folder holding the last component, or throws via `fail`.
  enum class Want { File, Folder };
  struct Resolved {
    Fd fd;  // O_PATH of the leaf (File) / O_DIRECTORY of the leaf (Folder)
    struct stat st {};
    std::string error;  // empty when resolved
    bool refused = false;  // a policy refusal (vs. missing / unreadable)
  };

  Resolved resolve(const std::string& name, Want want) const {
    Resolved r;
    auto refuse = [&](std::string why) {
      r.error = std::move(why);
      r.refused = true;
      return std::move(r);
    };
    auto unreadable = [&](std::string why) {
      r.error = std::move(why);
      return std::move(r);
    };
    if (root.get() < 0) return unreadable("the model's folder: " + root_error);
    std::vector<std::string> parts;
    std::string bad = split_name(name, parts);
    if (!bad.empty()) return refuse(bad);
    if (parts.size() > 64) return refuse("it has more than 64 components");
    if (parts.empty() && want == Want::File) return refuse("it names the model's folder, not a file");
    Fd dir(::fcntl(root.get(), F_DUPFD_CLOEXEC, 0));
    if (dir.get() < 0) return unreadable(errno_text(errno));
    size_t folders = want == Want::Folder ? parts.size() : parts.size() - 1;
    for (size_t i = 0; i < folders; ++i) {
      Fd next(::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (next.get() < 0) {
        int err = errno;
        struct stat st {};
        if (::fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
          if (S_ISLNK(st.st_mode)) return refuse("it goes through a symbolic link ('" + parts[i] + "')");
          if (!S_ISDIR(st.st_mode)) return refuse("'" + parts[i] + "' is " + kind_of(st.st_mode) + ", not a folder");
        }
        return unreadable("'" + parts[i] + "': " + errno_text(err));
      }
      dir = std::move(next);
    }
    if (want == Want::Folder) {
      if (::fstat(dir.get(), &r.st) != 0) return unreadable(errno_text(errno));
      r.fd = std::move(dir);
      return r;
    }
    const std::string& leaf = parts.back();
    // O_PATH first: a device or FIFO is recognised without opening it.
    Fd probe(::openat(dir.get(), leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (probe.get() < 0) return unreadable(errno_text(errno));
    if (::fstat(probe.get(), &r.st) != 0) return unreadable(errno_text(errno));
    if (S_ISLNK(r.st.st_mode)) return refuse("it is a symbolic link");
    if (!S_ISREG(r.st.st_mode)) return refuse(std::string("it is ") + kind_of(r.st.st_mode) + ", not a regular file");
    // Reopen for reading from the parent (O_PATH descriptors cannot be read).
    Fd f(::openat(dir.get(), leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (f.get() < 0) return unreadable(errno_text(errno));
    struct stat st2 {};
    if (::fstat(f.get(), &st2) != 0) return unreadable(errno_text(errno));
    if (!S_ISREG(st2.st_mode) || st2.st_ino != r.st.st_ino || st2.st_dev != r.st.st_dev)
      return refuse("it changed while it was being opened");
    r.fd = std::move(f);
    return r;
  }
};

ReadGate::ReadGate(std::string model) : impl_(std::make_unique<Impl>()) {
  bool named_folder = model.size() > 1 && model.back() == '/';  // "dir/": the root is dir, never its parent
  model_ = trim_slashes(std::move(model));
  struct stat st {};
  if (named_folder || (!model_.empty() && ::stat(model_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    model_is_folder_ = true;
    root_ = model_;
  } else {
    root_ = parent_of(model_);
  }
  impl_->root = Fd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (impl_->root.get() < 0) impl_->root_error = root_ + ": " + errno_text(errno);
}

ReadGate::~ReadGate() = default;

std::string ReadGate::peek(size_t n) const {
  if (model_is_folder_) return {};
  std::string why;
  Fd f = open_user_file(model_, why);
  if (f.get() < 0) return {};
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(f.get(), out.data() + got, n - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

std::shared_ptr<const Buffer> ReadGate::map_model() const {
  if (model_is_folder_) throw Error(model_ + ": error: is a folder, expected a file");
  std::string why;
  Fd f = open_user_file(model_, why);
  if (f.get() < 0) throw Error(model_ + ": error: " + why);
  return map_fd(f.release(), model_);
}

std::shared_ptr<const Buffer> ReadGate::map(const std::string& name, const std::string& what) {
  auto it = impl_->mapped.find(name);
  if (it != impl_->mapped.end()) return it->second;
  if (impl_->mapped.size() >= kMaxFiles)
    throw Error(what + " '" + shown(name) + "' is refused: the model names more than " + std::to_string(kMaxFiles) + " files");
  auto r = impl_->resolve(name, Impl::Want::File);
  if (!r.error.empty())
    throw Error(what + " '" + shown(name) + "' " + (r.refused ? "is refused: " : "cannot be read: ") + r.error);
  auto buf = map_fd(r.fd.release(), root_ + "/" + name);
  impl_->mapped.emplace(name, buf);
  return buf;
}

bool ReadGate::has_file(const std::string& name) const {
  return impl_->resolve(name, Impl::Want::File).error.empty();
}

bool ReadGate::has_folder(const std::string& name) const {
  return impl_->resolve(name, Impl::Want::Folder).error.empty();
}

std::vector<std::string> ReadGate::list(const std::string& name, size_t limit) const {
  auto r = impl_->resolve(name.empty() ? std::string(".") : name, Impl::Want::Folder);
  if (!r.error.empty())
    throw Error(root_ + "/" + shown(name) + ": error: folder " + (r.refused ? "is refused: " : "cannot be read: ") + r.error);
  DIR* d = ::fdopendir(r.fd.get());
  if (!d) throw Error(root_ + "/" + name + ": error: cannot list: " + errno_text(errno));
  r.fd.release();
  std::vector<std::string> out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    if (out.size() >= limit) {
      ::closedir(d);
      throw Error(root_ + "/" + name + ": error: the folder holds more than " + std::to_string(limit) + " entries");
    }
    out.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// WriteGate

struct WriteGate::Impl {
  std::string path;  // the output as named, without trailing slashes
  std::unique_ptr<AtomicFile> main;
  struct Staged {
    std::string name;
    std::unique_ptr<AtomicFile> file;
  };
  std::vector<Staged> files;
  bool folder = false;
  std::string staging;               // the temporary folder of a folder output
  std::vector<std::string> subdirs;  // folders made inside staging (relative), in creation order
  std::vector<std::string> committed;
  std::vector<std::string> stale;  // removed from an existing output folder on commit
  size_t max_files = WriteGate::kMaxFiles;
  std::set<std::string> names;  // of the staged files
  bool done = false;

  // `failed`: also the files already renamed inside the staging folder (a commit that failed
  // half-way); after a commit they are in the output and the staging names are gone.
  void remove_staging(bool failed) {
    if (staging.empty()) return;
    if (failed)
      for (auto& s : files) ::unlink(s.file->path().c_str());
    files.clear();  // AtomicFile destructors unlink their temporaries
    for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) ::rmdir((staging + "/" + *it).c_str());
    ::rmdir(staging.c_str());
    staging.clear();
  }
};

WriteGate::WriteGate(std::string output) : output_(std::move(output)), impl_(std::make_unique<Impl>()) {
  // output_path() is the path as named ("out/" says a folder); the files go to it without slashes.
  impl_->path = trim_slashes(output_);
  if (impl_->path.empty()) throw Error("error: the output path is empty");
}

WriteGate::~WriteGate() {
  if (!impl_->done) {
    impl_->main.reset();
    impl_->remove_staging(true);
    impl_->files.clear();
  }
}

AtomicFile& WriteGate::main() {
  if (impl_->folder) throw Error(impl_->path + ": error: the output is a folder; its files are created by name");
  if (impl_->done) throw Error(impl_->path + ": error: the output was already committed");
  if (!impl_->main) impl_->main = std::make_unique<AtomicFile>(impl_->path);
  return *impl_->main;
}

void WriteGate::make_parent_folders() {
  std::filesystem::path parent = std::filesystem::path(impl_->path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw Error(impl_->path + ": error: cannot create the folder " + parent.string() + ": " + ec.message());
}

void WriteGate::make_folder_output() {
  if (impl_->folder) return;
  if (impl_->main || !impl_->files.empty()) throw Error(impl_->path + ": error: the output became a folder after files were created");
  struct stat st {};
  if (::stat(impl_->path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw Error(impl_->path + ": error: exists and is not a folder; not replaced by the output");
  std::string tmpl = impl_->path + ".tmp-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw Error(impl_->path + ": error: cannot create a temporary folder next to it: " + errno_text(errno));
  impl_->staging = tmpl;
  impl_->folder = true;
}

AtomicFile& WriteGate::create(const std::string& name) {
  if (impl_->done) throw Error(impl_->path + ": error: the output was already committed");
  auto refuse = [&](const std::string& why) { return Error(impl_->path + ": error: output file '" + shown(name) + "' is refused: " + why); };
  std::vector<std::string> parts;
  std::string bad = split_name(name, parts);
  if (!bad.empty()) throw refuse(bad);
  if (parts.empty()) throw refuse("it names no file");
  for (const auto& p : parts)
    if (p.size() > 255) throw refuse("a component is longer than 255 bytes");
  std::string rel;
  for (const auto& p : parts) rel += (rel.empty() ? "" : "/") + p;
  if (impl_->files.size() >= impl_->max_files)
    throw refuse("an output has at most " + std::to_string(impl_->max_files) + " files");
  if (impl_->names.count(rel)) throw refuse("it was already created");
  std::string target;
  if (impl_->folder) {
    // Subfolders are made inside the staging folder (we own it: no link can be there).
    std::string sub;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      sub += (sub.empty() ? "" : "/") + parts[i];
      if (std::find(impl_->subdirs.begin(), impl_->subdirs.end(), sub) != impl_->subdirs.end()) continue;
      if (::mkdir((impl_->staging + "/" + sub).c_str(), 0777) != 0 && errno != EEXIST)
        throw refuse("cannot create folder '" + sub + "': " + errno_text(errno));
      impl_->subdirs.push_back(sub);
    }
    target = impl_->staging + "/" + rel;
  } else {
    if (parts.size() != 1) throw refuse("a file beside the output cannot be in a subfolder");
    std::string dir = parent_of(impl_->path);
    target = (dir == "." && impl_->path.find('/') == std::string::npos) ? rel : dir + "/" + rel;
    if (target == impl_->path) throw refuse("it is the main output");
  }
  impl_->files.push_back({rel, std::make_unique<AtomicFile>(target)});
  impl_->names.insert(rel);
  return *impl_->files.back().file;
}

void WriteGate::discard(const std::string& name) {
  for (auto it = impl_->files.begin(); it != impl_->files.end(); ++it)
    if (it->name == name) {
      impl_->names.erase(it->name);
      impl_->files.erase(it);  // (its temporary file is removed)
      return;
    }
}

void WriteGate::set_max_files(size_t n) { impl_->max_files = n; }

void WriteGate::remove_on_commit(const std::string& name) {
  std::vector<std::string> parts;
  std::string bad = split_name(name, parts);
  if (!bad.empty() || parts.empty()) throw Error(impl_->path + ": error: output file '" + shown(name) + "' is refused: " + bad);
  std::string rel;
  for (const auto& p : parts) rel += (rel.empty() ? "" : "/") + p;
  impl_->stale.push_back(rel);
}

void WriteGate::commit() {
  if (impl_->done) return;
  if (!impl_->folder) {
    // Side files first and the main file last: a reader never sees a model without its data.
    for (auto& s : impl_->files) s.file->prepare();
    if (impl_->main) impl_->main->prepare();
    for (auto& s : impl_->files) s.file->publish();
    if (impl_->main) impl_->main->publish();
    for (auto& s : impl_->files) impl_->committed.push_back(s.name);
    if (impl_->main) {
      size_t sl = impl_->path.rfind('/');
      impl_->committed.push_back(sl == std::string::npos ? impl_->path : impl_->path.substr(sl + 1));
    }
    impl_->done = true;
    return;
  }
  for (auto& s : impl_->files) s.file->prepare();
  for (auto& s : impl_->files) s.file->publish();
  struct stat st {};
  if (::lstat(impl_->path.c_str(), &st) != 0) {
    // A new folder: one rename puts the whole output in place.
    if (::rename(impl_->staging.c_str(), impl_->path.c_str()) != 0)
      throw Error(impl_->path + ": error: cannot rename the output folder into place: " + errno_text(errno));
  } else {
    if (!S_ISDIR(st.st_mode)) throw Error(impl_->path + ": error: exists and is not a folder; not replaced by the output");
    // An existing folder: its files are replaced one by one (each rename is atomic); every
    // target is checked first so that a folder in the way leaves nothing moved.
    Fd out(::open(impl_->path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (out.get() < 0) throw Error(impl_->path + ": error: cannot open the output folder: " + errno_text(errno));
    for (const auto& s : impl_->files) {
      struct stat t {};
      if (::fstatat(out.get(), s.name.c_str(), &t, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(t.st_mode))
        throw Error(impl_->path + "/" + s.name + ": error: is a folder; not replaced by the output");
    }
    for (const auto& sub : impl_->subdirs) {
      if (::mkdirat(out.get(), sub.c_str(), 0777) != 0 && errno != EEXIST)
        throw Error(impl_->path + "/" + sub + ": error: cannot create: " + errno_text(errno));
      struct stat t {};
      if (::fstatat(out.get(), sub.c_str(), &t, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(t.st_mode))
        throw Error(impl_->path + "/" + sub + ": error: is not a folder (a symbolic link?); not written through");
    }
    Fd stage(::open(impl_->staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (stage.get() < 0) throw Error(impl_->staging + ": error: " + errno_text(errno));
    for (const auto& s : impl_->files)
      if (::renameat(stage.get(), s.name.c_str(), out.get(), s.name.c_str()) != 0)
        throw Error(impl_->path + "/" + s.name + ": error: cannot rename into place: " + errno_text(errno));
    for (const auto& name : impl_->stale) {
      // Only a regular file (or a link, which unlinkat removes, not its target) in a real folder.
      size_t sl = name.rfind('/');
      Fd parent(sl == std::string::npos ? ::fcntl(out.get(), F_DUPFD_CLOEXEC, 0)
                                        : ::openat(out.get(), name.substr(0, sl).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (parent.get() < 0) continue;
      std::string leaf = sl == std::string::npos ? name : name.substr(sl + 1);
      struct stat t {};
      if (::fstatat(parent.get(), leaf.c_str(), &t, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(t.st_mode)) ::unlinkat(parent.get(), leaf.c_str(), 0);
    }
  }
  for (auto& s : impl_->files) impl_->committed.push_back(s.name);
  impl_->remove_staging(false);  // (empty now, or already renamed into place: rmdir fails harmlessly)
  impl_->done = true;
}

std::vector<std::string> WriteGate::files() const { return impl_->committed; }

}  // namespace amanda
