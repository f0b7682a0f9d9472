#include "families.h"

namespace amanda::interp::kernels {

void register_text(KernelRegistry& r) {}

}  // namespace amanda::interp::kernels
