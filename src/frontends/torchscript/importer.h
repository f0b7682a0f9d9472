// Reads a TorchScript archive (torch.jit.save) without libtorch. See importer.cpp.
#pragma once
