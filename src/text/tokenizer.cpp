#include "text/tokenizer.h"

#include <algorithm>
#include <array>
#include <climits>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "core/error.h"
#include "core/log.h"
#include "text/byte_level.h"
#include "text/utf8.h"

namespace llmesh::text {

namespace {

std::vector<std::string> patterns_of(const BpeVocab& vocab) {
  if (!vocab.pre_tokenizer_regexes.empty()) return vocab.pre_tokenizer_regexes;
  check(!vocab.pre_tokenizer.empty(), "tokenizer: the vocabulary names no pre-tokenizer and gives no regexes");
  return PreTokenizer::patterns_for(vocab.pre_tokenizer);
}

// GGUF files name the pre-tokenizer but store neither the normalizer nor
// ignore_merges; the families' tokenizer.json files fix both, so the name implies them.
bool implies_nfc(const BpeVocab& vocab) {
  return vocab.pre_tokenizer_regexes.empty() && vocab.pre_tokenizer == "qwen2";
}
bool implies_ignore_merges(const BpeVocab& vocab) {
  return vocab.pre_tokenizer_regexes.empty() && (vocab.pre_tokenizer == "llama3" || vocab.pre_tokenizer == "llama-bpe");
}

constexpr int32_t kNoRank = INT32_MAX;
// Words up to this many bytes merge with a linear scan; longer ones use a heap.
constexpr size_t kMaxSmallWordBytes = 128;
// Pieces up to this many bytes are cached; the cache is cleared when it reaches its cap.
constexpr size_t kMaxCachedPieceBytes = 64;
constexpr size_t kMaxCachedPieces = 1 << 16;

}  // namespace

// Open-addressing index from a token's string to its id. The strings stay in
// the tokenizer's vectors (passed in as `keys`); slots hold only ids, so
// building it allocates nothing per token.
struct Tokenizer::TokenIndex {
  std::vector<int32_t> slots;  // -1 = empty
  uint64_t mask = 0;

  explicit TokenIndex(size_t num_keys) {
    size_t capacity = 16;
    while (capacity < num_keys * 2) capacity *= 2;
    slots.assign(capacity, -1);
    mask = capacity - 1;
  }
  static uint64_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

  // The slot holding `key`'s id, or the empty slot where it would go.
  int32_t& slot_of(const std::vector<std::string>& keys, std::string_view key) {
    for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (slots[i] < 0 || keys[slots[i]] == key) return slots[i];
    }
  }
  int32_t find(const std::vector<std::string>& keys, std::string_view key) const {
    for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (slots[i] < 0 || keys[slots[i]] == key) return slots[i];
    }
  }
};

// Open-addressing hash map: (left id, right id) -> (rank, merged id).
struct Tokenizer::MergeTable {
  struct Slot {
    uint64_t key = UINT64_MAX;
    int32_t rank = kNoRank;
    int32_t merged_id = -1;
  };
  std::vector<Slot> slots;
  uint64_t mask = 0;

  static uint64_t key_of(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  static uint64_t hash(uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> 17; }

  explicit MergeTable(size_t num_merges) {
    size_t capacity = 16;
    while (capacity < num_merges * 2) capacity *= 2;
    slots.resize(capacity);
    mask = capacity - 1;
  }
  // Keeps the first (lowest-rank) rule when a pair appears twice.
  void insert(int32_t left, int32_t right, int32_t rank, int32_t merged_id) {
    const uint64_t key = key_of(left, right);
    for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == key) return;
      if (slots[i].key == UINT64_MAX) {
        slots[i] = {key, rank, merged_id};
        return;
      }
    }
  }
  const Slot* find(int32_t left, int32_t right) const {
    const uint64_t key = key_of(left, right);
    for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == key) return &slots[i];
      if (slots[i].key == UINT64_MAX) return nullptr;
    }
  }
  int32_t rank(int32_t left, int32_t right) const {
    const Slot* slot = find(left, right);
    return slot ? slot->rank : kNoRank;
  }
};

// Byte trie over added-token contents for leftmost-longest matching.
struct Tokenizer::AddedTokenTrie {
  struct Node {
    int32_t token_id = -1;
    bool special = false;
    std::vector<std::pair<uint8_t, int32_t>> children;  // (byte, node index)
  };
  std::vector<Node> nodes{Node{}};
  std::array<bool, 256> is_first_byte{};

  void insert(const std::string& content, int32_t token_id, bool special) {
    int32_t node = 0;
    for (char c : content) {
      const auto byte = static_cast<uint8_t>(c);
      int32_t child = child_of(node, byte);
      if (child < 0) {
        child = static_cast<int32_t>(nodes.size());
        nodes[node].children.emplace_back(byte, child);
        nodes.emplace_back();
      }
      node = child;
    }
    nodes[node].token_id = token_id;
    nodes[node].special = special;
    is_first_byte[static_cast<uint8_t>(content[0])] = true;
  }
  int32_t child_of(int32_t node, uint8_t byte) const {
    for (const auto& [b, child] : nodes[node].children) {
      if (b == byte) return child;
    }
    return -1;
  }
  // The longest allowed added token starting at text[pos]: (id, length) or (-1, 0).
  std::pair<int32_t, size_t> longest_match(std::string_view text, size_t pos, bool allow_special) const {
    std::pair<int32_t, size_t> best{-1, 0};
    int32_t node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      node = child_of(node, static_cast<uint8_t>(text[i]));
      if (node < 0) break;
      const Node& n = nodes[node];
      if (n.token_id >= 0 && (allow_special || !n.special)) best = {n.token_id, i + 1 - pos};
    }
    return best;
  }
};

struct Tokenizer::WordCache {
  struct Hash {
    using is_transparent = void;  // lets find() take a string_view without allocating
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> ids_of_piece;
};

Tokenizer::Tokenizer(BpeVocab vocab)
    : merges_(std::make_unique<MergeTable>(vocab.merges.size())),
      added_trie_(std::make_unique<AddedTokenTrie>()),
      cache_(std::make_unique<WordCache>()),
      pre_tokenizer_(patterns_of(vocab)),
      normalize_nfc_(vocab.normalize_nfc || implies_nfc(vocab)),
      ignore_merges_(vocab.ignore_merges || implies_ignore_merges(vocab)),
      bos_token_id_(vocab.bos_token_id),
      eos_token_id_(vocab.eos_token_id),
      add_bos_token_(vocab.add_bos_token) {
  const auto vocab_size = static_cast<int32_t>(vocab.tokens.size());
  check(vocab_size > 0, "tokenizer: the vocabulary is empty");
  pre_tokenizer_name_ = vocab.pre_tokenizer.empty() ? PreTokenizer::name_of(pre_tokenizer_.patterns())
                                                    : vocab.pre_tokenizer;
  token_strings_ = std::move(vocab.tokens);
  added_kind_.assign(vocab_size, 0);

  for (const AddedToken& added : vocab.added_tokens) {
    check(added.id >= 0 && added.id < vocab_size, "tokenizer: added token '{}' has id {} outside the vocabulary (size {})",
          added.content, added.id, vocab_size);
    check(!added.content.empty(), "tokenizer: added token {} has empty content", added.id);
    added_kind_[added.id] = added.special ? 2 : 1;
    token_strings_[added.id] = added.content;
    added_trie_->insert(added.content, added.id, added.special);
  }

  // Raw bytes of each token; normal tokens are byte-level text, added tokens are literal.
  token_bytes_.resize(vocab_size);
  std::fill(std::begin(byte_token_id_), std::end(byte_token_id_), -1);
  id_of_token_string_ = std::make_unique<TokenIndex>(vocab_size);
  id_of_bytes_ = std::make_unique<TokenIndex>(vocab_size);
  for (int32_t id = 0; id < vocab_size; ++id) {
    const std::string& token = token_strings_[id];
    if (token.empty()) continue;  // an unused id (a hole in the vocabulary)
    if (added_kind_[id] != 0) {
      token_bytes_[id] = token;
    } else {
      std::optional<std::string> bytes = byte_level::decode(token);
      token_bytes_[id] = bytes ? std::move(*bytes) : token;
      int32_t& bytes_slot = id_of_bytes_->slot_of(token_bytes_, token_bytes_[id]);
      if (bytes_slot < 0) bytes_slot = id;
      if (bytes && token_bytes_[id].size() == 1) {
        int32_t& slot = byte_token_id_[static_cast<uint8_t>(token_bytes_[id][0])];
        if (slot < 0) slot = id;
      }
    }
    // A normal token wins over an added token with the same string (merges refer to normal ones).
    int32_t& slot = id_of_token_string_->slot_of(token_strings_, token);
    if (slot < 0 || (added_kind_[slot] != 0 && added_kind_[id] == 0)) slot = id;
  }
  for (int byte = 0; byte < 256; ++byte) {
    check(byte_token_id_[byte] >= 0, "tokenizer: the vocabulary has no byte-level token for byte 0x{:02X}", byte);
  }

  size_t num_skipped_merges = 0;
  std::string merged;
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const auto& [left, right] = vocab.merges[rank];
    merged.assign(left).append(right);
    const int32_t left_id = id_of_token_string_->find(token_strings_, left);
    const int32_t right_id = id_of_token_string_->find(token_strings_, right);
    const int32_t merged_id = id_of_token_string_->find(token_strings_, merged);
    if (left_id < 0 || right_id < 0 || merged_id < 0) {
      ++num_skipped_merges;
      continue;
    }
    merges_->insert(left_id, right_id, static_cast<int32_t>(rank), merged_id);
  }
  if (num_skipped_merges > 0) {
    log_warn("tokenizer: skipped {} of {} merges whose tokens are not in the vocabulary", num_skipped_merges,
             vocab.merges.size());
  }

  check(bos_token_id_ >= -1 && bos_token_id_ < vocab_size, "tokenizer: BOS id {} is outside the vocabulary (size {})",
        bos_token_id_, vocab_size);
  check(eos_token_id_ >= -1 && eos_token_id_ < vocab_size, "tokenizer: EOS id {} is outside the vocabulary (size {})",
        eos_token_id_, vocab_size);
  check(!add_bos_token_ || bos_token_id_ >= 0, "tokenizer: add_bos_token is set but there is no BOS token");
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool parse_special) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  size_t segment_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (added_trie_->is_first_byte[static_cast<uint8_t>(text[pos])]) {
      const auto [added_id, length] = added_trie_->longest_match(text, pos, parse_special);
      if (added_id >= 0) {
        encode_segment(text.substr(segment_start, pos - segment_start), ids);
        ids.push_back(added_id);
        pos += length;
        segment_start = pos;
        continue;
      }
    }
    ++pos;
  }
  encode_segment(text.substr(segment_start), ids);
  return ids;
}

void Tokenizer::encode_segment(std::string_view segment, std::vector<int32_t>& ids) const {
  if (segment.empty()) return;
  std::string normalized;
  if (normalize_nfc_) {
    normalized = utf8::normalize_nfc(segment);
    segment = normalized;
  }
  std::vector<std::string_view> pieces;
  pre_tokenizer_.split(segment, pieces);
  for (std::string_view piece : pieces) encode_piece(piece, ids);
}

void Tokenizer::encode_piece(std::string_view piece, std::vector<int32_t>& ids) const {
  if (piece.size() == 1) {
    ids.push_back(byte_token_id_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  if (ignore_merges_) {
    const int32_t whole_id = id_of_bytes_->find(token_bytes_, piece);
    if (whole_id >= 0) {
      ids.push_back(whole_id);
      return;
    }
  }
  const bool cacheable = piece.size() <= kMaxCachedPieceBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    const auto it = cache_->ids_of_piece.find(piece);
    if (it != cache_->ids_of_piece.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }

  std::vector<int32_t> symbols(piece.size());  // [num_symbols] token ids, one per byte to start
  for (size_t i = 0; i < piece.size(); ++i) symbols[i] = byte_token_id_[static_cast<uint8_t>(piece[i])];
  if (piece.size() <= kMaxSmallWordBytes) {
    merge_small(symbols);
  } else {
    merge_large(symbols);
  }
  ids.insert(ids.end(), symbols.begin(), symbols.end());

  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->ids_of_piece.size() >= kMaxCachedPieces) cache_->ids_of_piece.clear();
    cache_->ids_of_piece.emplace(std::string(piece), std::move(symbols));
  }
}

// Repeatedly merges the lowest-rank adjacent pair (leftmost on ties). ranks[i]
// caches the rank of (symbols[i], symbols[i+1]); only the neighbours of a merge change.
void Tokenizer::merge_small(std::vector<int32_t>& symbols) const {
  size_t num_symbols = symbols.size();
  int32_t ranks[kMaxSmallWordBytes];
  for (size_t i = 0; i + 1 < num_symbols; ++i) ranks[i] = merges_->rank(symbols[i], symbols[i + 1]);
  while (num_symbols > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < num_symbols; ++i) {
      if (ranks[i] < ranks[best]) best = i;
    }
    if (ranks[best] == kNoRank) break;
    symbols[best] = merges_->find(symbols[best], symbols[best + 1])->merged_id;
    for (size_t i = best + 1; i + 1 < num_symbols; ++i) symbols[i] = symbols[i + 1];
    for (size_t i = best + 1; i + 2 < num_symbols; ++i) ranks[i] = ranks[i + 1];
    --num_symbols;
    if (best > 0) ranks[best - 1] = merges_->rank(symbols[best - 1], symbols[best]);
    if (best + 1 < num_symbols) ranks[best] = merges_->rank(symbols[best], symbols[best + 1]);
  }
  symbols.resize(num_symbols);
}

// The same merge order for long words in O(n log n): a heap of candidate pairs
// keyed by (rank, left position) over a linked list of symbols; stale entries
// are recognised by checking the symbols they name.
void Tokenizer::merge_large(std::vector<int32_t>& symbols) const {
  const size_t num_bytes = symbols.size();
  std::vector<int32_t> next(num_bytes), prev(num_bytes);  // [num_bytes] links; -1 = none
  std::vector<bool> alive(num_bytes, true);
  for (size_t i = 0; i < num_bytes; ++i) {
    next[i] = i + 1 < num_bytes ? static_cast<int32_t>(i + 1) : -1;
    prev[i] = static_cast<int32_t>(i) - 1;
  }
  struct Candidate {
    int32_t rank;
    int32_t left;  // position of the left symbol
    int32_t left_id, right_id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push_pair = [&](int32_t left) {
    if (left < 0 || next[left] < 0) return;
    const int32_t rank = merges_->rank(symbols[left], symbols[next[left]]);
    if (rank != kNoRank) heap.push({rank, left, symbols[left], symbols[next[left]]});
  };
  for (size_t i = 0; i + 1 < num_bytes; ++i) push_pair(static_cast<int32_t>(i));

  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int32_t right = next[c.left];
    if (!alive[c.left] || right < 0 || symbols[c.left] != c.left_id || symbols[right] != c.right_id) continue;
    symbols[c.left] = merges_->find(c.left_id, c.right_id)->merged_id;
    alive[right] = false;
    next[c.left] = next[right];
    if (next[right] >= 0) prev[next[right]] = c.left;
    push_pair(prev[c.left]);
    push_pair(c.left);
  }
  size_t num_symbols = 0;
  for (int32_t i = 0; i >= 0; i = next[i]) symbols[num_symbols++] = symbols[i];
  symbols.resize(num_symbols);
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string text;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    if (skip_special && added_kind_[id] == 2) continue;
    text += token_bytes_[id];
  }
  return text;
}

std::string Tokenizer::token_bytes(int32_t id) const {
  check(id >= 0 && id < vocab_size(), "token id {} is outside the vocabulary (size {})", id, vocab_size());
  return token_bytes_[id];
}

std::string Tokenizer::token_string(int32_t id) const {
  check(id >= 0 && id < vocab_size(), "token id {} is outside the vocabulary (size {})", id, vocab_size());
  return token_strings_[id];
}

std::optional<int32_t> Tokenizer::token_id(std::string_view token_string) const {
  const int32_t id = id_of_token_string_->find(token_strings_, token_string);
  if (id < 0) return std::nullopt;
  return id;
}

bool Tokenizer::is_special(int32_t id) const { return id >= 0 && id < vocab_size() && added_kind_[id] == 2; }
bool Tokenizer::is_added(int32_t id) const { return id >= 0 && id < vocab_size() && added_kind_[id] != 0; }

}  // namespace llmesh::text
