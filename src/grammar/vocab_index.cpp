#include "grammar/vocab_index.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "core/error.h"

namespace llmesh::grammar {

VocabIndex::VocabIndex(const text::Tokenizer& tokenizer) : vocab_size(tokenizer.vocab_size()) {
  std::vector<std::pair<std::string, int32_t>> tokens;  // (bytes, id)
  tokens.reserve(size_t(vocab_size));
  token_bytes.resize(size_t(vocab_size));
  for (int32_t id = 0; id < vocab_size; ++id) {
    if (tokenizer.is_special(id)) continue;
    std::string bytes = tokenizer.token_bytes(id);
    if (bytes.empty() || bytes.size() > 0xffff) continue;
    token_bytes[size_t(id)] = bytes;
    tokens.emplace_back(std::move(bytes), id);
  }
  std::sort(tokens.begin(), tokens.end());
  // Sorted order is preorder: each token shares its longest common prefix with
  // the previous one, so only the nodes below that prefix are new.
  std::vector<int32_t> open;  // open[d] = node at depth d+1 on the current path
  const std::string* previous = nullptr;
  for (const auto& [bytes, id] : tokens) {
    size_t common = 0;
    if (previous) {
      const size_t limit = std::min(previous->size(), bytes.size());
      while (common < limit && (*previous)[common] == bytes[common]) ++common;
    }
    for (size_t d = common; d < open.size(); ++d) nodes[size_t(open[d])].skip = num_nodes();
    open.resize(common);
    for (size_t d = common; d < bytes.size(); ++d) {
      open.push_back(num_nodes());
      nodes.push_back(Node{-1, -1, uint16_t(d + 1), uint8_t(bytes[d])});
    }
    int32_t& slot = nodes[size_t(open.back())].token;
    if (slot < 0)
      slot = id;
    else
      duplicate_tokens.emplace_back(open.back(), id);
    max_depth = std::max(max_depth, int32_t(bytes.size()));
    previous = &bytes;
  }
  for (int32_t node : open) nodes[size_t(node)].skip = num_nodes();
}

std::shared_ptr<const VocabIndex> VocabIndex::for_tokenizer(const text::Tokenizer& tokenizer) {
  static std::mutex mu;
  static std::map<const text::Tokenizer*, std::shared_ptr<const VocabIndex>> cache;
  std::lock_guard lock(mu);
  auto& slot = cache[&tokenizer];
  if (!slot || slot->vocab_size != tokenizer.vocab_size()) slot = std::make_shared<const VocabIndex>(tokenizer);
  return slot;
}

}  // namespace llmesh::grammar
