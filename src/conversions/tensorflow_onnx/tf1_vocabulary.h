// The spellings of TF1 control flow (Enter/Merge/Switch/LoopCond/NextIteration/Exit frames) in a
// graph's namespace. TensorFlow's own graphs are one dialect; SameDiff's imports of TF1 graphs (nd4j's
// `enter`, `merge`, `switch`, `loop_cond`, `next_iteration`, `exit`, their frame name and
// isConstant in the node's properties) are another with the same dataflow. The loop and cond
// lowerings (tf1_loops.cpp, tf1_conds.cpp) read the graph only through this, so one lowering serves
// both (docs/tensorflow.md "Loops", docs/nd4j.md "TF1 control flow").
#pragma once

#include <functional>
#include <string>

#include "amanda/ir/graph.h"

namespace amanda::tf_frontend {

struct Tf1Vocabulary {
  std::string enter = "Enter", exit = "Exit", merge = "Merge", switch_op = "Switch", loop_cond = "LoopCond",
              next_iteration = "NextIteration";
  // The pass-through op the lowerings look through and make (a body's outputs), with its port names.
  std::string identity = "Identity", identity_in = "input", identity_out = "output";
  // The attribute naming a value's element type that made Identities copy ("" = none); TF's "T".
  std::string type_attr = "T";
  // The constant op copied into bodies and branches ("" = the dialect's constants are graph inputs,
  // which bodies capture as outer values).
  std::string constant = "Const";
  // An Enter's frame, and whether it brings a loop invariant in (TF's frame_name and is_constant).
  std::function<std::string(const ir::Graph&, ir::OpId)> frame_name;
  std::function<bool(const ir::Graph&, ir::OpId)> is_constant;
  // Whether this dialect's graphs can hold TF 2 TensorLists (variant loop variables).
  bool tensor_lists = true;
};

// TensorFlow's own spellings.
const Tf1Vocabulary& tensorflow_vocabulary();

}  // namespace amanda::tf_frontend
