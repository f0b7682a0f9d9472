#include "amanda/support/path_policy.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "amanda/support/diagnostics.h"

namespace amanda {

namespace {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
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

const char* kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace

std::shared_ptr<const Buffer> map_model_file(const std::string& base_dir, const std::string& name, const std::string& what) {
  auto refuse = [&](const std::string& why) -> Error { return Error(what + " '" + name + "' is refused: " + why); };
  auto unreadable = [&](const std::string& why) -> Error { return Error(what + " '" + name + "' cannot be read: " + why); };
  if (base_dir.empty()) throw refuse("the model's folder is unknown");
  if (name.empty() || name[0] == '/') throw refuse("it must be a relative path inside the model's folder");
  if (name.find('\\') != std::string::npos) throw refuse("it contains a backslash");
  if (name.find('\0') != std::string::npos) throw refuse("it contains a NUL character");
  std::vector<std::string> parts;
  for (size_t s = 0; s <= name.size();) {
    size_t e = name.find('/', s);
    if (e == std::string::npos) e = name.size();
    std::string part = name.substr(s, e - s);
    if (part == "..") throw refuse("it contains '..'");
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    s = e + 1;
  }
  if (parts.empty()) throw refuse("it names the model's folder, not a file");

  Fd dir(::open(base_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) throw unreadable("the model's folder " + base_dir + ": " + std::strerror(errno));
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    Fd next(::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      int err = errno;
      struct stat st {};
      if (::fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        throw refuse("it goes through a symbolic link ('" + parts[i] + "')");
      throw unreadable("'" + parts[i] + "': " + std::strerror(err));
    }
    dir = std::move(next);
  }
  const std::string& leaf = parts.back();
  // O_PATH first: a device or FIFO is recognised without opening it.
  struct stat st {};
  {
    Fd probe(::openat(dir.get(), leaf.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (probe.get() < 0) throw unreadable(std::strerror(errno));
    if (::fstat(probe.get(), &st) != 0) throw unreadable(std::strerror(errno));
    if (S_ISLNK(st.st_mode)) throw refuse("it is a symbolic link");
    if (!S_ISREG(st.st_mode)) throw refuse(std::string("it is ") + kind_of(st.st_mode) + ", not a regular file");
  }
  Fd f(::openat(dir.get(), leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (f.get() < 0) throw unreadable(std::strerror(errno));
  struct stat st2 {};
  if (::fstat(f.get(), &st2) != 0) throw unreadable(std::strerror(errno));
  if (!S_ISREG(st2.st_mode) || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev)
    throw refuse("it changed while it was being opened");
  return map_fd(f.release(), base_dir + "/" + name);
}

std::shared_ptr<const Buffer> ModelFiles::map(const std::string& name) {
  auto it = mapped_.find(name);
  if (it != mapped_.end()) return it->second;
  auto buf = map_model_file(base_dir_, name, what_);
  mapped_.emplace(name, buf);
  return buf;
}

}  // namespace amanda
