#include "dist/mpi_communicator.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "core/error.h"

namespace llmesh::dist {

namespace {

using Clock = std::chrono::steady_clock;

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail("{} failed: {}", call, std::string(text, size_t(length)));
}

int checked_count(size_t bytes) {
  check(bytes <= size_t(INT_MAX), "one MPI message of {} bytes is over the 2 GiB limit", bytes);
  return int(bytes);
}

// How long a wait polls before it starts to sleep between polls: commands and
// pipeline hand-offs may wait for a whole stage's compute, so they soon nap;
// the reductions inside a step usually finish within this.
constexpr std::chrono::microseconds kSpinCommand{50}, kSpinInStep{10000};

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_), "MPI_Comm_rank");
  }
  ~MpiCommunicator() override {
    if (owned_) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void broadcast(void* data, size_t bytes, int root) override {
    Timed t(*this, rank_ == root ? bytes : 0);
    MPI_Request request;
    check_mpi(MPI_Ibcast(data, checked_count(bytes), MPI_BYTE, root, comm_, &request), "MPI_Ibcast");
    wait(request, "a broadcast", kSpinCommand);
  }

  void all_reduce_sum(float* data, int64_t count) override {
    Timed t(*this, size_t(count) * sizeof(float));
    MPI_Request request;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, checked_count(size_t(count)),
                             MPI_FLOAT, MPI_SUM, comm_, &request),
              "MPI_Iallreduce");
    wait(request, "an all-reduce", kSpinInStep);
  }

  void all_gather(const void* mine, size_t bytes, void* all) override {
    Timed t(*this, bytes);
    MPI_Request request;
    check_mpi(MPI_Iallgather(mine, checked_count(bytes), MPI_BYTE, all, checked_count(bytes), MPI_BYTE, comm_,
                             &request),
              "MPI_Iallgather");
    wait(request, "an all-gather", kSpinInStep);
  }

  void gather(const void* mine, const std::vector<size_t>& counts, void* all, int root) override {
    Timed t(*this, counts[size_t(rank_)]);
    std::vector<int> sizes, offsets;
    layout(counts, sizes, offsets);
    MPI_Request request;
    check_mpi(MPI_Igatherv(mine, sizes[size_t(rank_)], MPI_BYTE, all, sizes.data(), offsets.data(), MPI_BYTE, root,
                           comm_, &request),
              "MPI_Igatherv");
    wait(request, "a gather", kSpinCommand);
  }

  void scatter(const void* all, const std::vector<size_t>& counts, void* mine, int root) override {
    size_t total = 0;
    for (size_t c : counts) total += c;
    Timed t(*this, rank_ == root ? total : 0);
    std::vector<int> sizes, offsets;
    layout(counts, sizes, offsets);
    MPI_Request request;
    check_mpi(MPI_Iscatterv(all, sizes.data(), offsets.data(), MPI_BYTE, mine, sizes[size_t(rank_)], MPI_BYTE, root,
                            comm_, &request),
              "MPI_Iscatterv");
    wait(request, "a scatter", kSpinCommand);
  }

  void send(const void* data, size_t bytes, int dest) override {
    Timed t(*this, bytes);
    MPI_Request request;
    check_mpi(MPI_Isend(data, checked_count(bytes), MPI_BYTE, dest, kTag, comm_, &request), "MPI_Isend");
    wait(request, fmt::format("a send to rank {}", dest).c_str(), kSpinInStep);
  }

  void recv(void* data, size_t bytes, int source) override {
    Timed t(*this, 0);
    MPI_Request request;
    check_mpi(MPI_Irecv(data, checked_count(bytes), MPI_BYTE, source, kTag, comm_, &request), "MPI_Irecv");
    wait(request, fmt::format("a receive from rank {}", source).c_str(), kSpinCommand);
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    MPI_Comm sub;
    check_mpi(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
    auto child = std::make_unique<MpiCommunicator>(sub, /*owned=*/true);
    child->set_timeout(timeout_s_);
    return child;
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(comm_, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
  }

 private:
  static constexpr int kTag = 7;

  // Waits for a request without holding a core: MPI's blocking calls poll in a
  // loop, which on a shared machine takes a core from the ranks doing the work
  // (and keeps an idle server's workers at 100%). Polls for `spin`, then sleeps
  // between polls, doubling up to 1 ms; gives up after timeout_s_ (when set).
  // A request left behind by a timeout is never completed: the job ends.
  void wait(MPI_Request& request, const char* what, std::chrono::microseconds spin) const {
    const Clock::time_point start = Clock::now();
    const double limit = timeout_s_;
    std::chrono::microseconds nap{0};
    for (uint64_t polls = 0;; ++polls) {
      int done = 0;
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
      if (done) return;
      if ((polls & 255) != 0 && nap.count() == 0) continue;  // spinning: read the clock now and then
      const auto waited = Clock::now() - start;
      if (limit > 0 && waited > std::chrono::duration<double>(limit))
        throw PeerTimeout(fmt::format("rank {}: {} had no answer from the other ranks in {:g} s: a rank is dead, "
                                      "stopped or cut off (the limit is --rank-timeout)",
                                      world_rank_, what, limit));
      if (waited < spin) continue;
      nap = std::min(std::chrono::microseconds(1000), std::max(std::chrono::microseconds(10), nap * 2));
      std::this_thread::sleep_for(nap);
    }
  }

  static void layout(const std::vector<size_t>& counts, std::vector<int>& sizes, std::vector<int>& offsets) {
    size_t offset = 0;
    for (size_t c : counts) {
      sizes.push_back(checked_count(c));
      offsets.push_back(checked_count(offset));
      offset += c;
    }
  }

  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0, size_ = 1;
  int world_rank_ = 0;  // what messages name: the rank mpirun and the logs show
};

}  // namespace

MpiRuntime::MpiRuntime() {
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  check(provided >= MPI_THREAD_SERIALIZED,
        "this MPI library gives thread level {}; llmesh needs MPI_THREAD_SERIALIZED (the engine thread makes the calls)",
        provided);
}

MpiRuntime::~MpiRuntime() { MPI_Finalize(); }

std::unique_ptr<Communicator> MpiRuntime::world() const {
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, /*owned=*/false);
}

bool MpiRuntime::launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace llmesh::dist
