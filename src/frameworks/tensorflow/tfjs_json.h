// A TF.js topology (protobuf's JSON form of a GraphDef) from a RapidJSON tree, for the subset
// TF.js's converter writes (tfjs_json.cpp). False (and `g` cleared) for anything else: the caller
// then reads it with protobuf's own JSON reader.
#pragma once

#include <rapidjson/document.h>

#include "amanda_tf_graph.pb.h"

namespace amanda::tf_frontend::detail {

bool graphdef_from_json(const rapidjson::Value& j, tensorflow::GraphDef& g);

}  // namespace amanda::tf_frontend::detail
