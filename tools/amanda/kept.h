#pragma once
// Objects a command keeps to the end of the process (convert_commands.cpp, optimize_command.cpp).

#include <memory>
#include <vector>

namespace amanda::tool {

// The objects of one command (the namespaces, the tables, the graph: up to tens of MB of small
// allocations) are never freed: the process ends right after (main leaves with std::_Exit), and
// freeing them costs a noticeable part of a small model's whole process, for nothing. They stay
// reachable from here, so leak checkers do not count them (what LLVM's tools do with
// -disable-free).
template <class T>
T& kept_until_exit(std::unique_ptr<T> p) {
  static auto* kept = new std::vector<std::shared_ptr<void>>();
  std::shared_ptr<T> s(std::move(p));
  kept->push_back(s);
  return *s;
}

}  // namespace amanda::tool
