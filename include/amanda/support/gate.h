// The gate: the only code that opens files a model reader or writer touches (DESIGN.md, layer 1).
//
// Readers get a ReadGate rooted at the model's folder and reach bytes only through it: the model
// file itself, and the files it names (ONNX external data, TF.js shards, a SavedModel's variables,
// a Caffe2 init net), each under the path policy (relative, no '..', no symbolic link in any
// component, regular files only, opened without blocking and size-checked before it is mapped).
//
// Writers get a WriteGate for the output the user named: they create only the files their format
// defines, with names they choose (never a name taken from the input), and every file is staged
// under a temporary name (a temporary folder for folder outputs) and moved into place only by
// commit(), after everything succeeded. A gate destroyed without commit() leaves nothing behind.
//
// tests/security/gate_source_test.py fails the build when a source outside src/support/ calls
// open/fopen/std::ifstream/std::ofstream/mmap on a path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/support/file.h"

namespace amanda {

class ReadGate {
 public:
  // `model` is the path the user named (trusted: the user chose it); it may be a file or a folder
  // (a SavedModel). The root of the sandbox is the folder that holds the file, or the folder itself.
  explicit ReadGate(std::string model);
  ReadGate(const ReadGate&) = delete;
  ReadGate& operator=(const ReadGate&) = delete;
  ~ReadGate();

  const std::string& model_path() const { return model_; }
  const std::string& root() const { return root_; }
  bool model_is_folder() const { return model_is_folder_; }

  // The first `n` bytes of the model file for format detection: a regular file is opened without
  // blocking (a FIFO named x.pb never blocks); a folder, FIFO, device or missing file gives "".
  std::string peek(size_t n) const;
  // The model file itself, mapped (regular file only; refused with the path and the reason).
  std::shared_ptr<const Buffer> map_model() const;

  // A file the model names, relative to root() (or to `base`, a folder under root() that the
  // reader reached through this gate), under the path policy. `what` names it in errors
  // ("external data", "weights shard"). Each name is mapped once per gate and shared.
  std::shared_ptr<const Buffer> map(const std::string& name, const std::string& what);
  // Whether `name` is a regular file under the policy (no error when it is not).
  bool has_file(const std::string& name) const;
  // Whether `name` is a folder under the policy (no symbolic link in any component).
  bool has_folder(const std::string& name) const;
  // The entries of the folder `name` (under the policy), sorted; at most `limit` (an error beyond).
  std::vector<std::string> list(const std::string& name, size_t limit = 100000) const;

  // At most this many distinct files per model (300,000 TF.js shards are refused, not read).
  static constexpr size_t kMaxFiles = 10000;

 private:
  struct Impl;
  std::string model_;
  std::string root_;
  bool model_is_folder_ = false;
  std::unique_ptr<Impl> impl_;
};

class WriteGate {
 public:
  // `output` is the path the user named (a file, or a folder for formats that write one). Files
  // are staged beside it and appear only on commit().
  explicit WriteGate(std::string output);
  WriteGate(const WriteGate&) = delete;
  WriteGate& operator=(const WriteGate&) = delete;
  ~WriteGate();  // without commit(): every staged file and folder is removed

  const std::string& output_path() const { return output_; }

  // The main output file (the path the user named).
  AtomicFile& main();
  // A file beside the main output (`name` relative to the output's folder: "model.data",
  // "init_net.pb", "group1-shard1of1.bin"), or inside the output folder when the output is a folder
  // ("variables/variables.index"). The writer chooses the name; it is checked (relative, no '..',
  // no empty or dot components, at most `kMaxFiles` files per output) and refused otherwise.
  AtomicFile& create(const std::string& name);
  // The output is a folder (a SavedModel): staged as a temporary folder renamed into place.
  void make_folder_output();
  // The folders that hold the output are created when missing (a TF.js graph model's model.json and
  // shards go into the folder named with it, as tensorflowjs_converter does). Call before creating.
  void make_parent_folders();

  // Drops a file created with create() (a side file that turned out empty): it is not written.
  void discard(const std::string& name);
  // A file of the format that this output does not have (a SavedModel without variables written
  // over one with): removed from an existing output folder on commit, if it is there. Same name
  // rules as create().
  void remove_on_commit(const std::string& name);

  // Moves every staged file into place (all prepared first: a problem with any leaves none moved).
  void commit();
  // The files commit() wrote, relative names (for messages and tests).
  std::vector<std::string> files() const;

  static constexpr size_t kMaxFiles = 10000;
  // A higher cap for outputs whose count the user asked for (`run --dump-intermediates`).
  void set_max_files(size_t n);

 private:
  struct Impl;
  std::string output_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace amanda
