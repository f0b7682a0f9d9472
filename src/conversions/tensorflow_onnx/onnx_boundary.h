// A TensorFlow graph (GraphDef or TF.js graph model) has no graph ports: its Placeholder ops are
// the inputs, and the outputs are whatever the caller fetches. ONNX wants both on the graph. This
// turns a graph in amanda/tensorflow/... into one with root ports, before the tables
// tables/tensorflow/tf_2.2_onnx_13*.yaml convert its ops (docs/tensorflow.md, "Conversion to ONNX"):
//
// - every Placeholder becomes a root input port named as TF names its tensor ("input_1:0"), typed
//   from its `dtype` and `shape` attributes (an unknown dimension becomes the symbol
//   "<placeholder>_dim<i>", an ONNX dim_param; an unknown rank is refused);
// - the outputs are, in this order of preference: the names given (`--outputs a,b:1`), the
//   TF.js signature's outputs (root attr `tfjs`: `signature` or `userDefinedMetadata.signature`),
//   else every data output of an op none of whose outputs anything reads (Const, Placeholder and
//   NoOp excepted), in graph order; each becomes a root output port named "node:k";
// - NoOp ops and control edges are dropped (ONNX runs by data flow alone), and the root attributes
//   that only TensorFlow files carry (`tfjs`, `versions`, `library`, `imports`) are removed; a
//   non-empty function library is refused (functional control flow is not converted).
#pragma once

#include <string>
#include <vector>

#include "amanda/ir/graph.h"

namespace amanda::tf_frontend {

// Does nothing when the root is not in amanda/tensorflow/... or already has ports. Throws
// amanda::Error naming the node when an output name or a placeholder cannot be used.
void make_onnx_boundary(ir::Graph& g, const std::vector<std::string>& outputs = {});

// TF1 while loops (frames of Enter/Merge/Switch/LoopCond/NextIteration/Exit) become ops
// `onnx::Loop` whose body attribute graph holds the loop's TF ops (the TF table converts them; the
// root's `imports` says `onnx` is amanda/onnx/13), TensorLists of the common patterns become
// tensors and scan outputs (src/frameworks/tensorflow/tf1_loops.cpp). make_onnx_boundary calls it.
// Returns whether there was a loop; throws amanda::Error naming the frame and op it cannot convert.
bool lower_tf1_loops(ir::Graph& g);

// TF1 conds (Switch/Merge outside any loop frame): each Merge becomes an op `onnx::If` on the
// Switches' predicate, its then/else graphs holding copies of the branch ops the Merge's inputs
// depend on (src/frameworks/tensorflow/tf1_conds.cpp). Merges it cannot convert (nested conds, a
// used value_index, inputs that are not the two sides of one predicate) are left to the table,
// which refuses them by name. make_onnx_boundary calls it after lower_tf1_loops. Returns how many.
size_t lower_tf1_conds(ir::Graph& g);

// TF2's functional If/StatelessIf and While/StatelessWhile, whose branches, cond and body are
// functions of the graph's library, as onnx::If / onnx::Loop ops with copies of the functions'
// bodies (tf2_control_flow.cpp). Any other call of a library function is refused by name.
// Returns the number of ops lowered.
size_t lower_tf2_control_flow(ir::Graph& g);

// Select ops whose condition has the rank of their values (found by a few ops' rank rules: a TF
// graph has no types) become SelectV2, the same op then, so that the table need not reshape the
// condition at run time (src/frameworks/tensorflow/select_ranks.cpp). make_onnx_boundary calls it.
size_t select_to_select_v2(ir::Graph& g);

// After the tables ran: each root output's producer takes the output's name as its ONNX value
// name (`@value`), so that the node writes the value the graph output names. Throws amanda::Error
// naming an output that the rules left without a producer (an output of a TF op that its ONNX
// form does not have: FusedBatchNorm's batch statistics).
// Also renames the `onnx::Loop` ops lower_tf1_loops made to `Loop` and names their body outputs.
void name_onnx_outputs(ir::Graph& g);
// The rank of a TF op's output where a few ops' rank rules settle it (select_ranks.cpp), or -1.
int tf_output_rank(const ir::Graph& g, ir::PortId out);

// Between ONNX type inferences of the converted graph: each loop-carried input of the bodies of
// the Loops lower_tf1_loops made gets the element type and the rank (not the sizes) of the value
// the Loop starts from, and each Loop output the rank of the body's output (one more for a scan
// output). ONNX's Loop inference (onnx 1.12) drops the shapes of loop-carried values, so without
// this every value computed from a loop's result would have an unknown rank (and onnx.checker
// wants a shape on every graph output). Returns whether it typed anything (infer again then).
bool type_loop_bodies(ir::Graph& g);

}  // namespace amanda::tf_frontend
