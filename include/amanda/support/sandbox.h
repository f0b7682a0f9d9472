// Confining a child process that runs code from a model (libtorch's reader, `convert --check`):
// Linux Landlock where the kernel has it (probed at run time: files only under the paths given,
// and, from Landlock ABI 4, no TCP), a seccomp filter always (no socket but AF_UNIX, no exec, no
// ptrace), no new privileges. Call it in the child, after everything it needs is loaded. See
// SECURITY.md, "What runs in a child process".
#pragma once

#include <string>
#include <vector>

namespace amanda {

struct SandboxPolicy {
  std::vector<std::string> read;        // files and folders the process may read (and map, execute)
  std::vector<std::string> read_write;  // folders it may also write and create files in
};

// Confines the calling process for good. Returns what was applied, for messages:
// "Landlock ABI 3 (files), seccomp (no network, no exec)", or "seccomp (no network, no exec);
// files not confined: the kernel has no Landlock". Throws amanda::Error when nothing could be applied.
std::string enter_sandbox(const SandboxPolicy& policy);

// What enter_sandbox would use on this kernel, without applying anything ("Landlock ABI 3" or
// "no Landlock").
std::string probe_sandbox();

}  // namespace amanda
