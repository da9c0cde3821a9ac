#include "dist/nccl_communicator.h"

#include "core/error.h"

#ifdef LLMESH_HAVE_NCCL

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace llmesh::dist {

namespace {

using Clock = std::chrono::steady_clock;

void check_cuda(cudaError_t code, const char* call) {
  if (code != cudaSuccess) fail("{} failed: {}", call, cudaGetErrorString(code));
}

void check_nccl(ncclResult_t code, const char* call) {
  if (code != ncclSuccess && code != ncclInProgress) fail("{} failed: {}", call, ncclGetErrorString(code));
}

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, Communicator& bootstrap, int world_rank)
      : comm_(comm), bootstrap_(bootstrap), world_rank_(world_rank) {
    check_nccl(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank");
    check_nccl(ncclCommCount(comm_, &size_), "ncclCommCount");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~NcclCommunicator() override {
    if (device_) cudaFree(device_);
    cudaStreamDestroy(stream_);
    ncclCommDestroy(comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void broadcast(void* data, size_t bytes, int root) override {
    Timed t(*this, rank_ == root ? bytes : 0);
    std::byte* d = staging(bytes);
    if (rank_ == root) copy_in(d, data, bytes);
    check_nccl(ncclBroadcast(d, d, bytes, ncclUint8, root, comm_, stream_), "ncclBroadcast");
    copy_out(data, d, bytes);
    wait("a broadcast");
  }

  void all_reduce_sum(float* data, int64_t count) override {
    const size_t bytes = size_t(count) * sizeof(float);
    Timed t(*this, bytes);
    std::byte* d = staging(bytes);
    copy_in(d, data, bytes);
    check_nccl(ncclAllReduce(d, d, size_t(count), ncclFloat32, ncclSum, comm_, stream_), "ncclAllReduce");
    copy_out(data, d, bytes);
    wait("an all-reduce");
  }

  void all_gather(const void* mine, size_t bytes, void* all) override {
    Timed t(*this, bytes);
    std::byte* d = staging(bytes * size_t(size_));
    copy_in(d + bytes * size_t(rank_), mine, bytes);
    check_nccl(ncclAllGather(d + bytes * size_t(rank_), d, bytes, ncclUint8, comm_, stream_), "ncclAllGather");
    copy_out(all, d, bytes * size_t(size_));
    wait("an all-gather");
  }

  // Variable counts: point-to-point pairs fused in one group.
  void gather(const void* mine, const std::vector<size_t>& counts, void* all, int root) override {
    Timed t(*this, counts[size_t(rank_)]);
    std::vector<size_t> offsets = offsets_of(counts);
    std::byte* d = staging(offsets.back());
    copy_in(d + offsets[size_t(rank_)], mine, counts[size_t(rank_)]);
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    if (rank_ == root) {
      for (int r = 0; r < size_; ++r)
        if (r != root) check_nccl(ncclRecv(d + offsets[size_t(r)], counts[size_t(r)], ncclUint8, r, comm_, stream_), "ncclRecv");
    } else {
      check_nccl(ncclSend(d + offsets[size_t(rank_)], counts[size_t(rank_)], ncclUint8, root, comm_, stream_), "ncclSend");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    if (rank_ == root) copy_out(all, d, offsets.back());
    wait("a gather");
  }

  void scatter(const void* all, const std::vector<size_t>& counts, void* mine, int root) override {
    std::vector<size_t> offsets = offsets_of(counts);
    Timed t(*this, rank_ == root ? offsets.back() : 0);
    std::byte* d = staging(offsets.back());
    if (rank_ == root) copy_in(d, all, offsets.back());
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    if (rank_ == root) {
      for (int r = 0; r < size_; ++r)
        if (r != root) check_nccl(ncclSend(d + offsets[size_t(r)], counts[size_t(r)], ncclUint8, r, comm_, stream_), "ncclSend");
    } else {
      check_nccl(ncclRecv(d + offsets[size_t(rank_)], counts[size_t(rank_)], ncclUint8, root, comm_, stream_), "ncclRecv");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    copy_out(mine, d + offsets[size_t(rank_)], counts[size_t(rank_)]);
    wait("a scatter");
  }

  void send(const void* data, size_t bytes, int dest) override {
    Timed t(*this, bytes);
    std::byte* d = staging(bytes);
    copy_in(d, data, bytes);
    check_nccl(ncclSend(d, bytes, ncclUint8, dest, comm_, stream_), "ncclSend");
    wait("a send");
  }

  void recv(void* data, size_t bytes, int source) override {
    Timed t(*this, 0);
    std::byte* d = staging(bytes);
    check_nccl(ncclRecv(d, bytes, ncclUint8, source, comm_, stream_), "ncclRecv");
    copy_out(data, d, bytes);
    wait("a receive");
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    ncclComm_t sub;
    check_nccl(ncclCommSplit(comm_, color, key, &sub, nullptr), "ncclCommSplit");
    auto child = std::make_unique<NcclCommunicator>(sub, bootstrap_, world_rank_);
    child->set_timeout(timeout_s_);
    return child;
  }

  [[noreturn]] void abort(int code) override {
    ncclCommAbort(comm_);
    bootstrap_.abort(code);
    std::_Exit(code);  // bootstrap_.abort does not return; this is for the compiler
  }

 private:
  static std::vector<size_t> offsets_of(const std::vector<size_t>& counts) {
    std::vector<size_t> offsets{0};
    for (size_t c : counts) offsets.push_back(offsets.back() + c);
    return offsets;  // [size + 1]: the last is the total
  }

  std::byte* staging(size_t bytes) {
    if (bytes > capacity_) {
      if (device_) check_cuda(cudaFree(device_), "cudaFree");
      check_cuda(cudaMalloc(&device_, bytes), "cudaMalloc");
      capacity_ = bytes;
    }
    return static_cast<std::byte*>(device_);
  }
  void copy_in(void* d, const void* h, size_t bytes) {
    check_cuda(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
  }
  void copy_out(void* h, const void* d, size_t bytes) {
    check_cuda(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
  }

  // Like the MPI communicator's wait: polls the stream, naps, and gives up
  // after the timeout (aborting the NCCL communicator, whose kernels would
  // otherwise spin on the GPU forever).
  void wait(const char* what) {
    const Clock::time_point start = Clock::now();
    std::chrono::microseconds nap{0};
    while (true) {
      const cudaError_t state = cudaStreamQuery(stream_);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) check_cuda(state, what);
      ncclResult_t async = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
      check_nccl(async, what);
      const auto waited = Clock::now() - start;
      if (timeout_s_ > 0 && waited > std::chrono::duration<double>(timeout_s_)) {
        ncclCommAbort(comm_);
        throw PeerTimeout(fmt::format("rank {}: {} had no answer from the other ranks in {:g} s: a rank is dead, "
                                      "stopped or cut off (the limit is --rank-timeout)",
                                      world_rank_, what, timeout_s_));
      }
      if (waited < std::chrono::microseconds(50)) continue;
      nap = std::min(std::chrono::microseconds(1000), std::max(std::chrono::microseconds(10), nap * 2));
      std::this_thread::sleep_for(nap);
    }
  }

  ncclComm_t comm_;
  Communicator& bootstrap_;
  int world_rank_;
  int rank_ = 0, size_ = 1;
  cudaStream_t stream_ = nullptr;
  void* device_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace

bool nccl_available() { return true; }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
    fail("--comm nccl: rank {} sees no CUDA device", bootstrap.rank());
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  check_cuda(cudaSetDevice((local ? std::atoi(local) : bootstrap.rank()) % devices), "cudaSetDevice");
  ncclUniqueId id;
  if (bootstrap.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  bootstrap.broadcast(&id, sizeof id, 0);
  ncclComm_t comm;
  check_nccl(ncclCommInitRank(&comm, bootstrap.size(), id, bootstrap.rank()), "ncclCommInitRank");
  auto out = std::make_unique<NcclCommunicator>(comm, bootstrap, bootstrap.rank());
  out->set_timeout(bootstrap.timeout());
  return out;
}

}  // namespace llmesh::dist

#else  // built without NCCL

namespace llmesh::dist {

bool nccl_available() { return false; }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator&) {
  fail("--comm nccl: this llmesh was built without NCCL (CMake found no CUDA toolkit with nccl.h and libnccl; "
       "see docs/parallel.md)");
}

}  // namespace llmesh::dist

#endif
