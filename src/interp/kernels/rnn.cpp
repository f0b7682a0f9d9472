#include "families.h"

namespace amanda::interp::kernels {

void register_rnn(KernelRegistry& r) {}

}  // namespace amanda::interp::kernels
