#include "families.h"

namespace amanda::interp::kernels {

void register_signal(KernelRegistry& r) {}

}  // namespace amanda::interp::kernels
