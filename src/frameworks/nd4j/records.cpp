#include "frameworks/nd4j/records.h"

#include "frameworks/nd4j/nd4j.h"

namespace amanda::nd4j {

namespace {
// Legacy ("XYZ") ops are numbered by (OpType, number) in libnd4j's legacy_ops.h, not by a hash;
// these are the entries libnd4j's own test graphs use (checked by tests/nd4j/flat_roundtrip_test).
// An op missing here is written as a custom op (its hash), which libnd4j also executes.
struct Legacy {
  std::string_view type;
  int64_t op_type, op_num;
};
constexpr Legacy kLegacy[] = {
    {"neg", 1 /* TRANSFORM_SAME */, 3},
    {"all", 8 /* REDUCE_BOOL */, 1},
};
constexpr int64_t kCustom = 21;
}  // namespace

void derived_op_number(std::string_view type, int64_t& op_type, int64_t& op_num) {
  for (const auto& l : kLegacy)
    if (l.type == type) {
      op_type = l.op_type;
      op_num = l.op_num;
      return;
    }
  const OpDesc* d = Descriptors::shipped().find(type);
  op_type = kCustom;
  op_num = op_hash(d ? std::string_view(d->name) : type);
}

}  // namespace amanda::nd4j
