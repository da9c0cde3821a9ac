// The collectives a sharded model needs, over an existing communication
// engine (dist/mpi_communicator.h: Open MPI; ranks on one machine talk over
// shared memory, across machines over TCP or RDMA, as MPI chooses).
//
// Every call is collective over the ranks of this communicator unless it names
// a peer (send / recv). Calls that may wait a long time for a peer — a command
// from rank 0, the previous pipeline stage's hidden states — wait without
// spinning a core (wait_politely in mpi_communicator.cpp); the reductions
// inside a step are short and spin a little longer first. Every wait gives up
// after timeout() with PeerTimeout, so a dead or stopped rank cannot hang the
// job. Counts are in bytes unless a float count is named.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.h"

namespace llmesh::dist {

// A call waited longer than the communicator's timeout for another rank: that
// rank is dead, stopped or on a broken link. The call's buffers are no longer
// in step with the other ranks; the job must end.
class PeerTimeout : public Error {
 public:
  using Error::Error;
};

// What this rank moved, for `llmesh bench` and the startup log.
struct CommCounters {
  uint64_t bytes_sent = 0;      // payload this rank sent (reductions: its input size)
  uint64_t num_calls = 0;
  double seconds = 0;           // wall time inside communication calls, waits included
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  virtual void all_reduce_sum(float* data, int64_t count) = 0;
  // Every rank's `bytes` bytes, in rank order, into `all` ([size() * bytes]) on every rank.
  virtual void all_gather(const void* mine, size_t bytes, void* all) = 0;
  // Rank r's counts[r] bytes, concatenated in rank order into `all` on `root` (ignored elsewhere).
  virtual void gather(const void* mine, const std::vector<size_t>& counts, void* all, int root) = 0;
  // The inverse: rank r gets its counts[r] bytes of root's `all`.
  virtual void scatter(const void* all, const std::vector<size_t>& counts, void* mine, int root) = 0;
  virtual void send(const void* data, size_t bytes, int dest) = 0;
  virtual void recv(void* data, size_t bytes, int source) = 0;
  // The ranks with the same `color`, ordered by `key`.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
  // Ends every rank of the job with `code`: what a rank does when a step fails,
  // since the others would otherwise wait in a collective forever.
  [[noreturn]] virtual void abort(int code) = 0;

  const CommCounters& counters() const { return counters_; }
  // How long one call waits for the other ranks before it throws PeerTimeout;
  // 0 waits forever (a worker waiting for rank 0's next command). A split
  // communicator starts with its parent's.
  void set_timeout(double seconds) { timeout_s_ = seconds; }
  double timeout() const { return timeout_s_; }

 protected:
  CommCounters counters_;
  double timeout_s_ = 0;

  // Adds one call's bytes and wall time to the counters: `Timed t(*this, bytes);`.
  struct Timed {
    Timed(Communicator& c, size_t bytes) : c(c), start(std::chrono::steady_clock::now()) {
      c.counters_.bytes_sent += bytes;
      ++c.counters_.num_calls;
    }
    ~Timed() {
      c.counters_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    Communicator& c;
    std::chrono::steady_clock::time_point start;
  };
};

}  // namespace llmesh::dist
