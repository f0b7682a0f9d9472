#include "families.h"

namespace amanda::interp::kernels {

void register_quant(KernelRegistry& r) {}

}  // namespace amanda::interp::kernels
