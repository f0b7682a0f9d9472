// Finds and loads libamanda_torch.so on first use (see torchscript.h for why it is a plugin), and
// provides the PyTorch namespaces: the shipped .ops files first, the plugin only for the rest.
#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>

#include "amanda/support/gate.h"
#include "amanda/support/sandbox.h"
#include "amanda/frameworks/torch/torchscript.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/budget.h"
#include "amanda/support/file.h"
#include "frameworks/torchscript/importer.h"
#include "frameworks/torchscript/namespace_file.h"

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

std::vector<std::string> plugin_candidates() {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("AMANDA_TORCH_PLUGIN")) candidates.push_back(e);
  std::string d = exe_dir();
  if (!d.empty()) {
    candidates.push_back(d + "/libamanda_torch.so");
    candidates.push_back(d + "/../lib/amanda/libamanda_torch.so");
  }
  if (*AMANDA_TORCH_PLUGIN_DIR) candidates.push_back(std::string(AMANDA_TORCH_PLUGIN_DIR) + "/libamanda_torch.so");
  return candidates;
}

// Whether the plugin is there, without loading it (the libtorch reader runs in a child process,
// which loads it; this process never needs libtorch to read a model).
bool plugin_present() {
  if (std::string(AMANDA_TORCH_NAMESPACE).empty()) return false;
  for (const auto& c : plugin_candidates()) {
    std::error_code ec;
    if (std::filesystem::exists(c, ec)) return true;
  }
  return false;
}
std::string plugin_absent_why() {
  if (std::string(AMANDA_TORCH_NAMESPACE).empty())
    return "this build of Amanda has no PyTorch plugin (built with -DAMANDA_WITH_TORCH=OFF, or without Debian's libtorch-dev)";
  return "the PyTorch plugin libamanda_torch.so was not found next to the amanda executable (or in $AMANDA_TORCH_PLUGIN); build it with scripts/build.sh --all (needs libtorch-dev)";
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
    std::vector<std::string> candidates = plugin_candidates();
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
    l.why = "the PyTorch plugin libamanda_torch.so was not found next to the amanda executable (or in $AMANDA_TORCH_PLUGIN); build it with scripts/build.sh --all (needs libtorch-dev)" + errors;
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
      // Extensions: namespaces/pytorch/<version>.d/*.ops hold ops of libraries other than libtorch
      // (torchvision's operators), hand-written in the same form; their ops join the namespace.
      std::string text(map_file(file)->view()), where = file;
      std::vector<std::string> ext;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(file.substr(0, file.size() - 4) + ".d", ec))
        if (e.path().extension() == ".ops") ext.push_back(e.path().string());
      std::sort(ext.begin(), ext.end());
      for (const std::string& x : ext) {
        auto mapped = map_file(x);
        std::string_view t = mapped->view();
        // the extension's own first two lines (format, namespace) must be the base file's
        size_t a = t.find('\n'), b = a == std::string_view::npos ? a : t.find('\n', a + 1);
        size_t c = text.find('\n'), d = c == std::string::npos ? c : text.find('\n', c + 1);
        if (b == std::string_view::npos || d == std::string::npos || t.substr(0, b) != std::string_view(text).substr(0, d))
          throw Error(x + ": error: an extension must start with the lines 'amanda-ops 1' and the namespace line of " + file);
        if (!text.empty() && text.back() != '\n') text += '\n';
        text.append(t.substr(b + 1));
        where += " + " + x;
      }
      auto ns = torchscript::read_namespace_file(text, where, types);
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

// libtorch's TorchScript parser has no depth limit and trusts its input: a hostile archive
// crashes it (SIGSEGV on 200,000 nested calls). So it never runs in our process: a child (fork)
// loads the plugin, reads the archive under memory and CPU-time limits, and hands the graph back
// as the YAML form (tensors in a side file) in a private temporary folder; a crash, a timeout or
// an error there is a refusal here. See SECURITY.md.
class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/amanda-torch-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw Error("cannot create a temporary folder for the libtorch reader: " + std::string(std::strerror(errno)));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The libtorch children's CPU-time limit, in seconds. Model code runs there (libtorch's reader
// propagates shapes by running ops; `--check` runs forward()), so a forward() that loops forever
// must end in seconds, not minutes: 10 s plus 1 s per 10 MB of archive (a forward's work grows
// with its weights: torchvision's resnet50, 100 MB, reads and runs in about a second and gets 20
// s). $AMANDA_TORCH_TIMEOUT sets it (seconds) for a model that needs longer.
int cpu_limit_seconds(const std::string& path) {
  if (const char* e = std::getenv("AMANDA_TORCH_TIMEOUT")) {
    int v = std::atoi(e);
    if (v > 0) return v;
  }
  std::error_code ec;
  uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (ec) bytes = 0;
  return static_cast<int>(10 + std::min<uintmax_t>(bytes / 10'000'000, 3600));
}

// The wall-clock limit: twice the CPU-time limit and 10 s more (a child on a busy shared machine
// gets less than a core; one that blocks uses no CPU at all and is stopped here).
int wall_limit_seconds(int cpu) { return 2 * cpu + 10; }

// Runs `work` in a child process under the libtorch reader's limits (no core file; address space:
// the memory budget + 6 GiB; CPU time: cpu_limit_seconds) and waits for it, with a wall-clock
// limit too. `work` writes its result into the folder and throws on failure; the child's error
// message reaches the parent through error.txt. Throws amanda::Error naming `path` and `what` when
// the child fails, crashes or times out.
// What confined the last child ("Landlock ABI 6 (files, TCP), seccomp (no network, no exec)").
std::string& last_sandbox() {
  static std::string s;
  return s;
}

template <class Work>
void run_isolated(const std::string& path, const std::string& what, const TempDir& dir, Work work) {
  std::string err_file = dir.path() + "/error.txt";
  const int cpu_limit = cpu_limit_seconds(path);
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = fork();
  if (pid < 0) throw Error(path + ": error: cannot start the " + what + "'s process: " + std::strerror(errno));
  if (pid == 0) {
    int code = 3;
    try {
      struct rlimit core {0, 0};
      setrlimit(RLIMIT_CORE, &core);
#if !defined(__SANITIZE_ADDRESS__)
      // Address space: the run's memory budget plus what libtorch itself maps (about 2 GB).
      uint64_t as = checked_add(Budget::run().limits().memory, uint64_t(6) << 30, "the " + what + "'s memory limit");
      struct rlimit mem {as, as};
      setrlimit(RLIMIT_AS, &mem);
#endif
      rlim_t cpu = static_cast<rlim_t>(cpu_limit);
      struct rlimit t {cpu, cpu + 5};
      setrlimit(RLIMIT_CPU, &t);
      const Loaded& l = load();
      if (!l.api) throw Error(path + ": error: PyTorch support is not available: " + l.why);
      // Model code may run from here on (libtorch's constant propagation; `--check` runs
      // forward()): the child reads only the archive and the system's libraries, writes only its
      // private folder, and has no network (Landlock where the kernel has it; seccomp always).
      SandboxPolicy policy;
      policy.read = {path, "/usr", "/lib", "/lib64", "/proc/self", "/proc/cpuinfo", "/sys/devices/system/cpu", "/dev/null", "/dev/urandom"};
      if (std::string d = exe_dir(); !d.empty()) policy.read.push_back(d);
      if (*AMANDA_TORCH_PLUGIN_DIR) policy.read.push_back(AMANDA_TORCH_PLUGIN_DIR);
      if (const char* e = std::getenv("AMANDA_TORCH_PLUGIN")) policy.read.push_back(e);
      if (std::string d = schema::shipped_namespace_dir(); !d.empty()) policy.read.push_back(d);
      policy.read_write = {dir.path()};
      std::string confined = enter_sandbox(policy);
      write_file_atomic(dir.path() + "/sandbox.txt", confined);
      work(*l.api);
      code = 0;
    } catch (const std::bad_alloc&) {
      try {
        write_file_atomic(err_file, path + ": error: the " + what + " ran out of memory (its limit: the memory budget, --max-memory, + 6 GiB)");
      } catch (...) {
      }
      code = 1;
    } catch (const std::exception& e) {
      try {
        write_file_atomic(err_file, e.what());
      } catch (...) {
      }
      code = 1;
    }
    _exit(code);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wall_limit_seconds(cpu_limit));
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw Error(path + ": error: lost the " + what + "'s process: " + std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      throw Error(path + ": error: refused: the " + what + " took more than " + std::to_string(wall_limit_seconds(cpu_limit)) +
                  " s of wall-clock time (twice its CPU-time limit of " + std::to_string(cpu_limit) +
                  " s and 10 s; $AMANDA_TORCH_TIMEOUT sets the CPU-time limit)");
    }
    struct timespec ts {0, 10'000'000};
    nanosleep(&ts, nullptr);
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGXCPU)
      throw Error(path + ": error: refused: the " + what + " was stopped at its CPU-time limit of " + std::to_string(cpu_limit) +
                  " s (a forward() that does not end? 10 s + 1 s per 10 MB of archive; $AMANDA_TORCH_TIMEOUT sets it)");
    throw Error(path + ": error: refused: libtorch's " + what.substr(9) + " crashed on this archive (signal " + std::to_string(sig) + ", " +
                strsignal(sig) + ")");
  }
  try {
    last_sandbox() = std::string(map_file(dir.path() + "/sandbox.txt")->view());
  } catch (const Error&) {
    last_sandbox().clear();
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string msg;
    try {
      msg = std::string(map_file(err_file)->view());
    } catch (const Error&) {
    }
    if (msg.empty()) msg = path + ": error: refused: the " + what + " failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
    throw Error(msg);
  }
}

text::Document read_libtorch_isolated(const std::string& path, const ImportOptions& o) {
  TempDir dir;
  std::string out = dir.path() + "/graph.yaml";
  run_isolated(path, "libtorch reader", dir, [&](const PluginApi& api) {
    text::Document doc;
    std::string err;
    if (!api.read(path.c_str(), &o, &doc, &err)) throw Error(err);
    text::write_file(doc, out, text::Format::Yaml);
  });
  Diagnostics diags;
  text::ReadOptions ro;
  ro.base_dir = dir.path();
  // The side file stays mapped after the folder is removed.
  return text::read_file(out, diags, text::Format::Yaml, ro);
}

// The tensors the child hands back: "AMT1", a count, then per tensor its element type code, rank,
// dimensions, byte count and bytes (all little-endian, as this machine writes them: the reader is
// the same binary).
void put_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }
uint64_t get_u64(std::string_view& s, const std::string& what) {
  if (s.size() < 8) throw Error("the libtorch runner's results are truncated (" + what + ")");
  uint64_t v;
  std::memcpy(&v, s.data(), 8);
  s.remove_prefix(8);
  return v;
}

}  // namespace

std::vector<ir::Tensor> run_torchscript_isolated(const std::string& path, const std::vector<ir::Tensor>& inputs) {
  if (!plugin_present()) throw Error(path + ": error: cannot run the module: " + plugin_absent_why());
  TempDir dir;
  std::string out = dir.path() + "/outputs.bin";
  run_isolated(path, "libtorch runner", dir, [&](const PluginApi& api) {
    if (!api.run) throw Error(path + ": error: the PyTorch plugin cannot run modules (an older plugin)");
    std::vector<ir::Tensor> outputs;
    std::string err;
    if (!api.run(path.c_str(), &inputs, &outputs, &err)) throw Error(err);
    std::string s = "AMT1";
    put_u64(s, outputs.size());
    for (const auto& t : outputs) {
      put_u64(s, static_cast<uint64_t>(t.dtype));
      put_u64(s, t.shape.size());
      for (int64_t d : t.shape) put_u64(s, static_cast<uint64_t>(d));
      put_u64(s, t.size);
      s.append(reinterpret_cast<const char*>(t.data), t.size);
    }
    write_file_atomic(out, s);
  });
  // Say how the module's code was confined (SECURITY.md: --check runs model code).
  std::cerr << path << ": note: forward() ran in a child process confined by " << last_sandbox()
            << ", with CPU-time and memory limits\n";
  auto file = map_file(out);
  std::string_view s = file->view();
  if (!s.starts_with("AMT1")) throw Error("the libtorch runner's results are not in its format");
  s.remove_prefix(4);
  uint64_t n = get_u64(s, "count");
  std::vector<ir::Tensor> result;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t code = get_u64(s, "element type");
    if (code >= static_cast<uint64_t>(ir::kDTypeCount)) throw Error("the libtorch runner's results hold a bad element type");
    uint64_t rank = get_u64(s, "rank");
    if (rank > 64) throw Error("the libtorch runner's results hold a bad rank");
    std::vector<int64_t> shape;
    for (uint64_t k = 0; k < rank; ++k) shape.push_back(static_cast<int64_t>(get_u64(s, "dimension")));
    uint64_t size = get_u64(s, "size");
    if (size > s.size()) throw Error("the libtorch runner's results are truncated (bytes)");
    result.push_back(ir::Tensor::from_bytes(static_cast<ir::DType>(code), std::move(shape), std::string(s.substr(0, size))));
    s.remove_prefix(size);
  }
  return result;
}

namespace {

// libtorch's errors are its own texts over several lines: a TorchScript traceback with the
// exception last, or a compile error whose first line is blank ("Unknown builtin op: ..." below).
// A refusal needs one line that names the op and the reason: the op libtorch stopped at (the call
// its serialized-code traceback marks, innermost last) and the exception, or the unknown op.
std::string libtorch_summary(std::string_view msg, const std::string& path) {
  if (msg.starts_with(path + ": error: ")) msg.remove_prefix(path.size() + 9);
  std::vector<std::string_view> lines;
  for (size_t at = 0; at <= msg.size();) {
    size_t end = msg.find('\n', at);
    if (end == std::string_view::npos) end = msg.size();
    std::string_view l = msg.substr(at, end - at);
    while (!l.empty() && std::isspace(static_cast<unsigned char>(l.front()))) l.remove_prefix(1);
    while (!l.empty() && std::isspace(static_cast<unsigned char>(l.back()))) l.remove_suffix(1);
    lines.push_back(l);
    at = end + 1;
  }
  for (std::string_view l : lines)
    if (l.starts_with("Unknown builtin op: ")) {
      std::string op(l.substr(20));
      if (!op.empty() && op.back() == '.') op.pop_back();
      return op + ": libtorch does not know this op (the library that defines it is not loaded)";
    }
  // the op: in the serialized code's traceback, the last line marked "<--- HERE" follows the call
  std::string op;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].starts_with("Traceback of TorchScript, original code")) break;
    if (!lines[i].ends_with("<--- HERE")) continue;
    std::string_view call = lines[i - 1];
    for (std::string_view prefix : {"torch.", "ops."}) {
      size_t p = call.rfind(prefix);
      while (p != std::string_view::npos && p > 0 && (std::isalnum(static_cast<unsigned char>(call[p - 1])) || call[p - 1] == '_'))
        p = p ? call.rfind(prefix, p - 1) : std::string_view::npos;
      if (p == std::string_view::npos) continue;
      size_t e = p + prefix.size();
      while (e < call.size() && (std::isalnum(static_cast<unsigned char>(call[e])) || call[e] == '_' || call[e] == '.')) ++e;
      if (e >= call.size() || call[e] != '(') continue;
      std::string name(call.substr(p + prefix.size(), e - p - prefix.size()));
      if (prefix == "torch.") op = "aten::" + name;
      else if (size_t dot = name.find('.'); dot != std::string::npos) op = name.substr(0, dot) + "::" + name.substr(dot + 1);
      break;
    }
  }
  // the reason: the exception (its type ends in Error or Exception), else the first line
  std::string_view why;
  for (std::string_view l : lines) {
    size_t colon = l.find(": ");
    if (colon == std::string_view::npos || colon == 0) continue;
    std::string_view type = l.substr(0, colon);
    bool name = std::all_of(type.begin(), type.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
    if (name && (type.ends_with("Error") || type.ends_with("Exception"))) why = l;
  }
  if (why.empty())
    for (std::string_view l : lines)
      if (!l.empty()) {
        why = l;
        break;
      }
  if (why.empty()) why = "no message";
  return op.empty() ? std::string(why) : op + ": " + std::string(why);
}

}  // namespace

bool is_torchscript_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".pt" || ext == ".pth" || ext == ".ptl" || ext == ".torchscript") return true;
  if (ext == ".onnx" || ext == ".yaml" || ext == ".yml" || ext == ".json") return false;
  // Through the gate: a FIFO named x.pb gives no bytes instead of blocking the open.
  std::string magic = ReadGate(path).peek(4);
  return magic == std::string("PK\x03\x04", 4);
}

text::Document read_torchscript(const std::string& path, const ImportOptions& o, schema::Registry* registry,
                                std::string* used) {
  if (o.reader != "auto" && o.reader != "script" && o.reader != "libtorch")
    throw Error("unknown TorchScript reader '" + o.reader + "' (auto, script or libtorch)");
  Budget::run().reset_counters();  // each archive read gets the whole budget
  std::string script_why;  // why the libtorch-free reader did not read it (auto)
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
      if (!gaps.empty() && o.reader == "auto" && plugin_present())
        throw torchscript::Unsupported("no shape rule for " + list);
      if (!gaps.empty())
        std::cerr << "amanda: note: " << path << ": the libtorch-free reader has no shape rule for " << list
                  << "; their outputs are untyped\n";
      if (used) *used = "script";
      return doc;
    } catch (const torchscript::Unsupported& e) {
      if (o.reader == "script") throw Error(path + ": error: the libtorch-free reader cannot read this module: " + e.what());
      if (!plugin_present())
        throw Error(path + ": error: the libtorch-free reader cannot read this module: " + e.what() +
                    "; and the libtorch reader is not available: " + plugin_absent_why());
      if (std::getenv("AMANDA_TORCH_DEBUG")) std::cerr << "torch import: falling back to libtorch: " << e.what() << "\n";
      // Without input shapes libtorch's graph is untyped too, and rules that need ranks refuse: say
      // what the user can give (the fallback is silent otherwise: it is an implementation choice).
      else if (std::string_view(e.what()).find("--input-shape") != std::string_view::npos)
        std::cerr << "amanda: note: " << path << ": " << e.what()
                  << "; reading it with libtorch, whose graph has no shapes either (conversions that need ranks refuse: give --input-shape)\n";
      script_why = e.what();
    }
  }
  if (!plugin_present()) throw Error(path + ": error: PyTorch support is not available: " + plugin_absent_why());
  text::Document doc;
  try {
    doc = read_libtorch_isolated(path, o);
  } catch (const Error& e) {
    // One line naming the op and the reason first (libtorch's own text follows with --reader
    // libtorch; after the libtorch-free reader, both readers' reasons on that line).
    std::string why = libtorch_summary(e.what(), path);
    if (std::getenv("AMANDA_TORCH_DEBUG")) std::cerr << "torch import: the libtorch reader failed: " << e.what() << "\n";
    if (!script_why.empty())
      throw Error(path + ": error: the libtorch-free reader cannot read this module: " + script_why + "; nor can the libtorch reader: " +
                  why + " (--reader libtorch shows libtorch's message)");
    std::string full = e.what();
    if (full.starts_with(path + ": error: ")) full.erase(0, path.size() + 9);
    while (!full.empty() && (full.front() == '\n' || full.front() == ' ')) full.erase(0, 1);
    throw Error(path + ": error: the libtorch reader cannot read this module: " + why + (full == why ? "" : "\n" + full));
  }
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
