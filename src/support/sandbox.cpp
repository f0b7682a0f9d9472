// Confining a child process (sandbox.h). Landlock is probed with landlock_create_ruleset(NULL, 0,
// LANDLOCK_CREATE_RULESET_VERSION): the kernel says which ABI it has, and the rights handled are
// those of that ABI (a right the kernel does not know would make the ruleset invalid). The
// seccomp filter is small and the same everywhere: it refuses sockets other than AF_UNIX (the
// network), execve/execveat and ptrace, with an errno rather than a kill, so that libtorch sees a
// failed call and reports it.
#include "amanda/support/sandbox.h"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "amanda/support/diagnostics.h"

namespace amanda {

namespace {

// The Landlock ABI (the kernel's headers may be older than the kernel: the values are spelled out).
constexpr uint64_t kFsExecute = 1ULL << 0, kFsWriteFile = 1ULL << 1, kFsReadFile = 1ULL << 2, kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsRefer = 1ULL << 13, kFsTruncate = 1ULL << 14, kFsIoctlDev = 1ULL << 15;
constexpr uint64_t kNetBindTcp = 1ULL << 0, kNetConnectTcp = 1ULL << 1;
constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4 and later
};
struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

int landlock_abi() {
  long abi = syscall(__NR_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

uint64_t fs_rights(int abi) {
  uint64_t r = (1ULL << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) r |= kFsRefer;
  if (abi >= 3) r |= kFsTruncate;
  if (abi >= 5) r |= kFsIoctlDev;
  return r;
}

// Applies Landlock; "" on success, else why not.
std::string apply_landlock(int abi, const SandboxPolicy& p) {
  uint64_t all = fs_rights(abi);
  RulesetAttr attr{all, abi >= 4 ? (kNetBindTcp | kNetConnectTcp) : 0};
  size_t size = abi >= 4 ? sizeof(RulesetAttr) : sizeof(uint64_t);
  int rs = static_cast<int>(syscall(__NR_landlock_create_ruleset, &attr, size, 0));
  if (rs < 0) return std::string("landlock_create_ruleset: ") + std::strerror(errno);
  auto add = [&](const std::string& path, bool write) -> std::string {
    int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return "";  // a path that does not exist needs no rule
    struct stat st {};
    ::fstat(fd, &st);
    uint64_t file_rights = kFsExecute | kFsReadFile | (write ? (kFsWriteFile | (abi >= 3 ? kFsTruncate : 0)) : 0);
    uint64_t rights = S_ISDIR(st.st_mode) ? (write ? all : (kFsExecute | kFsReadFile | kFsReadDir)) : file_rights;
    PathBeneathAttr pb{rights, fd};
    long rc = syscall(__NR_landlock_add_rule, rs, kRulePathBeneath, &pb, 0);
    int err = errno;
    ::close(fd);
    return rc < 0 ? "landlock_add_rule " + path + ": " + std::strerror(err) : "";
  };
  for (const auto& r : p.read)
    if (auto e = add(r, false); !e.empty()) return ::close(rs), e;
  for (const auto& r : p.read_write)
    if (auto e = add(r, true); !e.empty()) return ::close(rs), e;
  long rc = syscall(__NR_landlock_restrict_self, rs, 0);
  int err = errno;
  ::close(rs);
  return rc < 0 ? std::string("landlock_restrict_self: ") + std::strerror(err) : "";
}

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kArch = 0;
#endif

std::string apply_seccomp() {
  if (kArch == 0) return "seccomp: this architecture is not handled";
  constexpr uint32_t kErrno = SECCOMP_RET_ERRNO;
  sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),  // another ABI: no way around the filter
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 4),  // (not socket: to the execve test)
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, kErrno | EACCES),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, kErrno | EPERM),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof f / sizeof f[0]), f};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return std::string("seccomp: ") + std::strerror(errno);
  return "";
}

}  // namespace

std::string probe_sandbox() {
  int abi = landlock_abi();
  return abi > 0 ? "Landlock ABI " + std::to_string(abi) : "no Landlock";
}

std::string enter_sandbox(const SandboxPolicy& policy) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) throw Error(std::string("cannot confine the process: no_new_privs: ") + std::strerror(errno));
  std::string files;
  int abi = landlock_abi();
  if (abi > 0) {
    std::string why = apply_landlock(abi, policy);
    files = why.empty() ? "Landlock ABI " + std::to_string(abi) + " (files" + (abi >= 4 ? ", TCP" : "") + ")"
                        : "files not confined: " + why;
  } else {
    files = "files not confined: the kernel has no Landlock";
  }
  std::string sc = apply_seccomp();
  if (!sc.empty() && files.starts_with("files not confined"))
    throw Error("cannot confine the process: " + files + "; " + sc);
  std::string net = sc.empty() ? "seccomp (no network, no exec)" : sc;
  return files.starts_with("Landlock") ? files + ", " + net : net + "; " + files;
}

}  // namespace amanda
