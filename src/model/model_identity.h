// The content identity of a model's weights: what its cached K/V depend on.
//
// A 64-bit XXH3 digest (16 hex digits) of the tensor index (names, dtypes,
// shapes, in file order) and a sample of the bytes of every tensor (all of a
// tensor up to 64 KiB; 16 evenly spaced 4 KiB windows of a larger one). A
// file replaced in place gets a new identity; the same file under another
// path (or on another host, which a router can predict) keeps it. Cost: at
// most ~64 KiB read per tensor, computed once at load. A RoPE scaling, when
// there is one, is hashed too: it changes every cached K; so is a sliding
// window, which changes the K/V cached past it.
#pragma once

#include <string>

namespace llmesh::model {

class WeightStore;
struct ModelConfig;

std::string model_identity(const WeightStore& weights, const ModelConfig& config);

}  // namespace llmesh::model
