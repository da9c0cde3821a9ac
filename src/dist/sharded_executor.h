// Runs one step of a sharded model on every rank of a job.
//
// Rank 0's engine drives it through the Executor seam; the other ranks sit in
// run_shard_worker. Each command is a fixed header broadcast from rank 0, then
// its payload:
//   reserve  the full KV shape and step shape; each rank allocates its part
//            (its stage's layers, its lane's KV heads under tensor parallel),
//            then all wait for each other without a deadline: it is the first
//            command, and a worker may still be loading its weights
//   step     the serialized StepInput: every rank runs its stage; a later stage
//            receives the residual stream from the same lane of the stage before;
//            the logits rank sends the logits to rank 0
//   read / write block   one block's K/V, gathered from / scattered to the ranks
//            in rank order (what the host and disk tiers store)
//   stop     the workers return
// The stages run one after another (no micro-batch overlap yet).
//
// Failures: a worker whose command fails or times out ends the whole job
// (Communicator::abort); the other ranks would otherwise wait in a collective
// forever. On rank 0 a failed command (a worker died or stopped answering:
// PeerTimeout) breaks the executor instead: that step and every later one
// throw, so the engine fails its requests in their protocol's shape, and
// `on_lost` hears why once; its owner ends the job (Job::wait_until_lost).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "dist/communicator.h"
#include "dist/parallel_layout.h"
#include "engine/executor.h"
#include "model/model.h"

namespace llmesh::dist {

// Rank 0's executor over `model` (rank 0's shard); `world` spans the job.
std::unique_ptr<engine::Executor> make_sharded_executor(model::Model& model, Communicator& world,
                                                        const ParallelLayout& layout,
                                                        std::function<void(const std::string&)> on_lost);

// A worker rank's loop: runs rank 0's commands on its shard until stop. It
// waits for the next command without a deadline (a server may idle for days)
// and for the other ranks inside a command with the world's timeout.
void run_shard_worker(model::Model& model, Communicator& world, const ParallelLayout& layout);

// Tells the workers to return from run_shard_worker (rank 0; what the executor's destructor does).
void stop_shard_workers(Communicator& world);

// The part of the full KV shape that `rank` holds.
kv::KvCacheShape rank_kv_shape(const kv::KvCacheShape& full, const ParallelLayout& layout, int rank);

}  // namespace llmesh::dist
