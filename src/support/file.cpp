#include "amanda/support/file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amanda/support/diagnostics.h"

namespace amanda {

namespace {

class MappedBuffer final : public Buffer {
 public:
  // `fd`: the mapped file, kept open (and closed here) for AtomicFile::write_paged; -1: closed.
  MappedBuffer(void* p, size_t n, int fd) : p_(p), n_(n), fd_(fd) {}
  ~MappedBuffer() override {
    if (p_ && n_) munmap(p_, n_);
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }
  const uint8_t* data() const override { return static_cast<const uint8_t*>(p_); }
  size_t size() const override { return n_; }
  void release(const uint8_t* p, size_t n) const override {
    // Whole pages inside [p, p + n) only. The mapping is read-only and private, so its pages are
    // clean: MADV_DONTNEED drops them and a later read faults them back in from the file.
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t b = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
    uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n) & ~(page - 1);
    uintptr_t lo = reinterpret_cast<uintptr_t>(p_), hi = lo + n_;
    if (b < lo) b = lo;
    if (e > hi) e = hi;
    if (b < e) madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
  }

 private:
  void* p_;
  size_t n_;
  int fd_;
};

// Files from this size on keep their descriptor open while mapped, so that writing their bytes
// out copies file to file in the kernel (copy_file_range: no page of the mapping is faulted in,
// then dropped again). Smaller ones close it: a model may map many small external data files.
constexpr size_t kKeepFdFrom = size_t(16) << 20;

class HeapBuffer final : public Buffer {
 public:
  explicit HeapBuffer(std::string s) : s_(std::move(s)) {}
  const uint8_t* data() const override { return reinterpret_cast<const uint8_t*>(s_.data()); }
  size_t size() const override { return s_.size(); }

 private:
  std::string s_;
};

std::string errno_text() { return std::strerror(errno); }

}  // namespace

std::shared_ptr<const Buffer> map_file(const std::string& path) {
  // O_NONBLOCK: a FIFO named as the input would otherwise block the open forever (map_fd then
  // refuses it: only regular files are read).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw Error(path + ": error: cannot open: " + errno_text());
  return map_fd(fd, path);
}

std::shared_ptr<const Buffer> map_fd(int fd, const std::string& path) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    std::string e = errno_text();
    ::close(fd);
    throw Error(path + ": error: cannot stat: " + e);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": error: is a directory, expected a file");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": error: not a regular file (a FIFO, a device or a socket), expected a file");
  }
  size_t n = static_cast<size_t>(st.st_size);
  if (n == 0) {
    ::close(fd);
    return std::make_shared<HeapBuffer>(std::string());
  }
  void* p = mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    std::string e = errno_text();
    ::close(fd);
    throw Error(path + ": error: cannot map: " + e);
  }
  if (n < kKeepFdFrom) {
    ::close(fd);
    fd = -1;
  }
  return std::make_shared<MappedBuffer>(p, n, fd);
}

std::shared_ptr<const Buffer> make_buffer(std::string bytes) { return std::make_shared<HeapBuffer>(std::move(bytes)); }

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  temp_ = path_ + ".tmp-XXXXXX";
  fd_ = mkostemp(temp_.data(), O_CLOEXEC);
  if (fd_ < 0) throw Error(path_ + ": error: cannot create a temporary file next to it: " + errno_text());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::write(std::string_view bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left) {
    ssize_t w = ::write(fd_, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(path_ + ": error: cannot write: " + errno_text());
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  written_ += bytes.size();
}

void AtomicFile::write_paged(const Buffer* owner, const void* data, size_t n) {
  constexpr size_t kChunk = size_t(32) << 20;
  const auto* p = static_cast<const uint8_t*>(data);
  // Bytes of a mapped file that kept its descriptor: copied file to file by the kernel, at the
  // speed of `cat` (writing them from the mapping faults every page in and MADV_DONTNEED drops it
  // again, about twice cat's system time). Where the kernel cannot (another file system on an old
  // kernel, a special file), the rest is written from the mapping as before.
  if (const auto* m = dynamic_cast<const MappedBuffer*>(owner); m && m->fd() >= 0 && n >= (size_t(64) << 10)) {
    auto off = static_cast<off64_t>(p - m->data());
    while (n) {
      ssize_t w = ::copy_file_range(m->fd(), &off, fd_, nullptr, n, 0);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;  // not supported here (or the file shrank): write what is left
      p += w;
      n -= static_cast<size_t>(w);
      written_ += static_cast<uint64_t>(w);
    }
  }
  while (n) {
    size_t k = std::min(n, kChunk);
    write(p, k);
    if (owner) owner->release(p, k);
    p += k;
    n -= k;
  }
}

void AtomicFile::commit() {
  prepare();
  publish();
}

void AtomicFile::prepare() {
  if (prepared_) return;
  struct stat st {};
  mode_t mode;
  if (::stat(path_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(path_ + ": error: is a folder; not replaced by the output");
    mode = st.st_mode & 07777;  // an existing output keeps its permission bits
  } else {
    mode_t mask = umask(0);  // a new file gets the usual permissions (mkostemp makes 0600)
    umask(mask);
    mode = 0666 & ~mask;
  }
  fchmod(fd_, mode);
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw Error(path_ + ": error: cannot close: " + errno_text());
  prepared_ = true;
}

void AtomicFile::publish() {
  prepare();
  // Over an existing file, exchange the two names (one atomic step: the path always names a whole
  // file, old or new) and then unlink the old file under the temporary name. A plain rename over
  // it makes ext4 flush the new file's delayed blocks inside rename() (auto_da_alloc) and costs
  // about 0.1 s of system time per 500 MB (docs/performance.md); where the exchange is not
  // possible (no file there yet, a file system without RENAME_EXCHANGE) rename as before.
  // A folder in the way is never exchanged (rename refuses it with the usual error).
  struct stat there {};
  if (::lstat(path_.c_str(), &there) == 0 && !S_ISDIR(there.st_mode) &&
      ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;
    ::unlink(temp_.c_str());
    return;
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) throw Error(path_ + ": error: cannot rename into place: " + errno_text());
  committed_ = true;
}

void commit_all(std::initializer_list<AtomicFile*> files) {
  for (AtomicFile* f : files)
    if (f) f->prepare();
  for (AtomicFile* f : files)
    if (f) f->publish();
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

std::vector<std::string> data_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  if (!fs::is_directory(dir, ec)) return files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    auto ext = it->path().extension().string();
    if (it->is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace amanda
