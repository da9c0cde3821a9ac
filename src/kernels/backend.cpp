#include "kernels/backend.h"

namespace llmesh::kernels {

const char* op_name(Op op) {
  switch (op) {
    case Op::Matmul: return "matmul";
    case Op::GatherRows: return "gather_rows";
    case Op::CopyRows: return "copy_rows";
    case Op::ScatterAddRows: return "scatter_add_rows";
    case Op::Fill: return "fill";
    case Op::Rmsnorm: return "rmsnorm";
    case Op::SiluMul: return "silu_mul";
    case Op::Softmax: return "softmax";
    case Op::Add: return "add";
    case Op::Rope: return "rope";
    case Op::PagedAttention: return "paged_attention";
    case Op::StoreKv: return "store_kv";
  }
  return "?";
}

}  // namespace llmesh::kernels
