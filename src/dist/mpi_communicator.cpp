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

// Waits for a request without holding a core: MPI's blocking calls poll in a
// loop, which on a shared machine takes a core from the ranks doing the work
// (and keeps an idle server's workers at 100%). Polls for 50 µs, then sleeps
// between polls, doubling up to 1 ms.
void wait_politely(MPI_Request& request, const char* call) {
  const Clock::time_point start = Clock::now();
  std::chrono::microseconds nap{0};
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), call);
    if (done) return;
    if (Clock::now() - start < std::chrono::microseconds(50)) continue;
    nap = std::min(std::chrono::microseconds(1000), std::max(std::chrono::microseconds(10), nap * 2));
    std::this_thread::sleep_for(nap);
  }
}

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
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
    wait_politely(request, "MPI_Ibcast");
  }

  void all_reduce_sum(float* data, int64_t count) override {
    Timed t(*this, size_t(count) * sizeof(float));
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, data, checked_count(size_t(count)), MPI_FLOAT, MPI_SUM, comm_),
              "MPI_Allreduce");
  }

  void all_gather(const void* mine, size_t bytes, void* all) override {
    Timed t(*this, bytes);
    check_mpi(MPI_Allgather(mine, checked_count(bytes), MPI_BYTE, all, checked_count(bytes), MPI_BYTE, comm_),
              "MPI_Allgather");
  }

  void gather(const void* mine, const std::vector<size_t>& counts, void* all, int root) override {
    Timed t(*this, counts[size_t(rank_)]);
    std::vector<int> sizes, offsets;
    layout(counts, sizes, offsets);
    MPI_Request request;
    check_mpi(MPI_Igatherv(mine, sizes[size_t(rank_)], MPI_BYTE, all, sizes.data(), offsets.data(), MPI_BYTE, root,
                           comm_, &request),
              "MPI_Igatherv");
    wait_politely(request, "MPI_Igatherv");
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
    wait_politely(request, "MPI_Iscatterv");
  }

  void send(const void* data, size_t bytes, int dest) override {
    Timed t(*this, bytes);
    check_mpi(MPI_Send(data, checked_count(bytes), MPI_BYTE, dest, kTag, comm_), "MPI_Send");
  }

  void recv(void* data, size_t bytes, int source) override {
    Timed t(*this, 0);
    MPI_Request request;
    check_mpi(MPI_Irecv(data, checked_count(bytes), MPI_BYTE, source, kTag, comm_, &request), "MPI_Irecv");
    wait_politely(request, "MPI_Irecv");
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    MPI_Comm sub;
    check_mpi(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
    return std::make_unique<MpiCommunicator>(sub, /*owned=*/true);
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(comm_, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
  }

 private:
  static constexpr int kTag = 7;

  // Adds one call's bytes and wall time to the counters.
  struct Timed {
    Timed(MpiCommunicator& c, size_t bytes) : c(c), start(Clock::now()) {
      c.counters_.bytes_sent += bytes;
      ++c.counters_.num_calls;
    }
    ~Timed() { c.counters_.seconds += std::chrono::duration<double>(Clock::now() - start).count(); }
    MpiCommunicator& c;
    Clock::time_point start;
  };

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
