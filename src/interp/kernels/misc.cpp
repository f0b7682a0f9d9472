#include "families.h"

namespace amanda::interp::kernels {

void register_misc(KernelRegistry& r) {}

}  // namespace amanda::interp::kernels
