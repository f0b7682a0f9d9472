// Helpers of the fuzz targets that read model folders and write outputs (issue 32): a private
// sandbox folder per process, files and links made from the input, and the listing that the
// property "nothing written but the defined output, nothing read outside the model" is checked on.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <string_view>

#include "amanda/support/budget.h"

namespace amanda::fuzz {

// Budgets well under -rss_limit_mb=2048: a blow-up is a budget error or a finding.
inline void small_budgets() {
  BudgetLimits small;
  small.memory = uint64_t(256) << 20;
  small.decompressed = uint64_t(64) << 20;
  small.steps = 20'000;
  small.ops = 20'000;
  small.expr_steps = 100'000;
  small.depth = 200;
  Budget::run().set_limits(small);
  Budget::run().reset_counters();
}

inline void remove_tree(const std::string& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    if (DIR* d = ::opendir(p.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") remove_tree(p + "/" + n);
      }
      ::closedir(d);
    }
    ::rmdir(p.c_str());
  } else {
    ::unlink(p.c_str());
  }
}

// Every entry under `dir`, relative ("a", "a/b"), links not followed.
inline std::set<std::string> listing(const std::string& dir, const std::string& prefix = "") {
  std::set<std::string> out;
  if (DIR* d = ::opendir((dir + (prefix.empty() ? "" : "/" + prefix)).c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      std::string rel = prefix.empty() ? n : prefix + "/" + n;
      out.insert(rel);
      struct stat st {};
      if (::lstat((dir + "/" + rel).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        for (const auto& x : listing(dir, rel)) out.insert(x);
    }
    ::closedir(d);
  }
  return out;
}

inline void put(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) std::abort();
  for (size_t off = 0; off < bytes.size();) {
    ssize_t w = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (w <= 0) std::abort();
    off += size_t(w);
  }
  ::close(fd);
}

// A fresh sandbox for one input: ROOT/model (the model's folder), ROOT/out (outputs),
// ROOT/outside (a secret next to the model: must never be read into, or written).
struct Sandbox {
  std::string root, model, out, outside;
  Sandbox() {
    static std::string base = [] {
      const char* t = std::getenv("TMPDIR");
      std::string tmpl = std::string(t && *t ? t : "/tmp") + "/amanda-fuzz-XXXXXX";
      if (!::mkdtemp(tmpl.data())) std::abort();
      return tmpl;
    }();
    root = base;
    remove_tree(root + "/model");
    remove_tree(root + "/out");
    remove_tree(root + "/outside");
    model = root + "/model";
    out = root + "/out";
    outside = root + "/outside";
    ::mkdir(model.c_str(), 0755);
    ::mkdir(out.c_str(), 0755);
    ::mkdir(outside.c_str(), 0755);
    put(outside + "/secret.bin", "SECRETSECRETSECRETSECRETSECRETSE");  // 32 bytes: 8 floats
  }
  // The outside folder as it was made.
  bool outside_intact() const { return listing(outside) == std::set<std::string>{"secret.bin"}; }
};

// Whether every entry under `dir` matches `allowed` (a regular expression on the relative name).
inline std::string unexpected_file(const std::string& dir, const std::string& allowed) {
  std::regex re(allowed);
  for (const auto& f : listing(dir))
    if (!std::regex_match(f, re)) return f;
  return "";
}

}  // namespace amanda::fuzz
