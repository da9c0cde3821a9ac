// Communicator over MPI (Open MPI from Debian: openmpi-bin, libopenmpi-dev).
//
// MpiRuntime initializes MPI once per process (thread level SERIALIZED: the
// engine thread makes the calls after the main thread initialized it) and
// finalizes it when destroyed. Errors come back as llmesh::Error naming the
// call instead of MPI's default of killing the job without a word.
#pragma once

#include <memory>

#include "dist/communicator.h"

namespace llmesh::dist {

class MpiRuntime {
 public:
  MpiRuntime();
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  // MPI_COMM_WORLD.
  std::unique_ptr<Communicator> world() const;
  // Whether this process was started by mpirun / mpiexec (so MPI should be initialized).
  static bool launched_by_mpirun();
};

}  // namespace llmesh::dist
