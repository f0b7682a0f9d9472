#!/usr/bin/env python3
"""Writes a copy of include/amanda/ir/value.h that clang 14 accepts, for the fuzz build only.

clang 14 with libstdc++ 12 in C++20 instantiates std::vector's constexpr destructor as soon as an
inline member of ir::Value touches the variant that holds std::vector<MapEntry>, while MapEntry is
still incomplete, and rejects the header (GCC does not). The copy declares those members in the
class and defines them, unchanged, after MapEntry. When value.h itself defines them there, the
copy is identical to the original.

usage: clang14_value_h.py SOURCE DEST
"""
import re
import sys

src, dest = sys.argv[1], sys.argv[2]
text = open(src).read()
moved = []


def ctor(m):
    init = " : " + m.group(2) if m.group(2) else ""
    moved.append("inline Value::Value(%s)%s {}" % (m.group(1), init))
    return "  Value(%s);" % m.group(1)


text = re.sub(r"^  Value\(([^)]*)\)(?: : (v_\(.*\)))? \{\}$", ctor, text, flags=re.M)
if "  Value() = default;\n" in text:
    text = text.replace("  Value() = default;\n", "  Value();\n")
    moved.insert(0, "inline Value::Value() = default;")


def graph(m):
    moved.append("inline Value Value::graph(OpId g) { %s }" % m.group(1))
    return "  static Value graph(OpId g);"


text = re.sub(r"^  static Value graph\(OpId g\) \{ (.*) \}$", graph, text, flags=re.M)
if moved:
    anchor = "std::string_view kind_name(Value::Kind k);"
    if anchor not in text:
        sys.exit("clang14_value_h.py: value.h changed shape; update this script (no '%s')" % anchor)
    text = text.replace(anchor, "// Moved out of the class for clang 14 (see fuzz/clang14_value_h.py).\n" +
                        "\n".join(moved) + "\n\n" + anchor)
with open(dest, "w") as f:
    f.write(text)
