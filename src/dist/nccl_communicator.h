// Communicator over NCCL, for ranks whose tensors live on NVIDIA GPUs
// (`--comm nccl`). MPI still starts the job and carries NCCL's bootstrap (the
// unique id) and the final abort; the collectives run on NCCL's transports
// (NVLink, PCIe peer-to-peer, InfiniBand / RoCE).
//
// Today's model runs on the CPU, so the buffers are host memory: each call
// stages them through the device. It is the seam a GPU backend will use with
// device pointers. It is compiled when CMake finds CUDA and NCCL (the CUDA
// toolkit's own copy counts). It is built here but not run: no GPU in CI.
// A build without them refuses `--comm nccl` with one line.
#pragma once

#include <memory>

#include "dist/communicator.h"

namespace llmesh::dist {

// Whether this binary was built with NCCL.
bool nccl_available();

// A NCCL communicator over the ranks of `bootstrap` (collective: every rank
// calls it). Each rank uses GPU local_rank % devices. Error when built without
// NCCL or when there is no GPU.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap);

}  // namespace llmesh::dist
