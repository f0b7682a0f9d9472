// Files: memory-mapped input (tensor bytes are borrowed from the mapping, not copied) and
// atomic output (write a temporary file in the same folder, then rename it over the target,
// so a failed run never leaves half a file behind).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>
#include <string_view>

namespace amanda {

// Bytes that some object owns: a mapped file, a heap buffer. Shared so that tensors can borrow
// slices of it and keep it alive.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
  std::string_view view() const { return {reinterpret_cast<const char*>(data()), size()}; }
  // Tells the owner that [p, p + n) will not be read soon: a mapped file drops those pages from
  // the process (they stay in the page cache and come back on the next read). Heap bytes: nothing.
  virtual void release(const uint8_t* p, size_t n) const {}
};

// A read-only mapping of a whole file. Throws amanda::Error with the path when it cannot be read.
std::shared_ptr<const Buffer> map_file(const std::string& path);
// Maps an open descriptor (which it closes) as map_file does; `path` is for messages.
std::shared_ptr<const Buffer> map_fd(int fd, const std::string& path);
// Heap-owned bytes.
std::shared_ptr<const Buffer> make_buffer(std::string bytes);

// Every regular *.yaml / *.yml / *.json file under dir (recursively), sorted; none when dir is not
// a folder. The shipped namespaces/ and tables/ folders are read this way.
std::vector<std::string> data_files(const std::string& dir);

// Writes files atomically. Create, append, then commit(); if commit() is never called (an
// exception, an early return) the temporary file is removed by the destructor.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);
  void write(const void* data, size_t n) { write(std::string_view(static_cast<const char*>(data), n)); }
  // Writes bytes that `owner` (may be null) holds, in chunks, releasing each chunk after writing
  // it: copying a tensor out of a mapped file does not leave the file resident in memory.
  void write_paged(const Buffer* owner, const void* data, size_t n);
  uint64_t size() const { return written_; }
  void commit();  // prepare(), then publish()
  // The two halves of commit(), for outputs of several files (commit_all): prepare() closes the
  // temporary, gives it the target's permission bits (an existing output keeps its mode; a new
  // one gets 0666 & ~umask) and checks that the target can be replaced (not a folder);
  // publish() renames it over the target.
  void prepare();
  void publish();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
  bool prepared_ = false;
};

// Commits several files of one output together (a model and its .data side file): every one is
// prepared first, so that a problem with any of them (a target that is a folder, a full disk)
// leaves none renamed into place; then they are renamed in order. Null entries are skipped.
void commit_all(std::initializer_list<AtomicFile*> files);

void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace amanda
