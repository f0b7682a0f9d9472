#include "families.h"

namespace amanda::interp::kernels {

void register_training(KernelRegistry& r) {}

}  // namespace amanda::interp::kernels
