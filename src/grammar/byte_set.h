// A set of bytes (0..255): the terminal of a byte-level grammar. Grammars
// work on bytes, not characters, because byte-level BPE tokens may cut a
// UTF-8 character anywhere.
#pragma once

#include <array>
#include <cstdint>

namespace llmesh::grammar {

struct ByteSet {
  std::array<uint64_t, 4> words{};  // bit b of words[b / 64] set: byte b is in the set

  static ByteSet single(uint8_t byte) {
    ByteSet s;
    s.add(byte);
    return s;
  }
  static ByteSet range(uint8_t first, uint8_t last) {  // inclusive
    ByteSet s;
    s.add_range(first, last);
    return s;
  }
  static ByteSet all() { return range(0, 255); }

  void add(uint8_t byte) { words[byte >> 6] |= uint64_t(1) << (byte & 63); }
  void add_range(uint8_t first, uint8_t last) {
    for (int b = first; b <= last; ++b) add(uint8_t(b));
  }
  void remove(uint8_t byte) { words[byte >> 6] &= ~(uint64_t(1) << (byte & 63)); }
  bool contains(uint8_t byte) const { return (words[byte >> 6] >> (byte & 63)) & 1; }
  bool empty() const { return (words[0] | words[1] | words[2] | words[3]) == 0; }
  int count() const {
    return __builtin_popcountll(words[0]) + __builtin_popcountll(words[1]) + __builtin_popcountll(words[2]) +
           __builtin_popcountll(words[3]);
  }
  ByteSet operator|(const ByteSet& o) const {
    ByteSet s;
    for (int i = 0; i < 4; ++i) s.words[size_t(i)] = words[size_t(i)] | o.words[size_t(i)];
    return s;
  }
  bool operator==(const ByteSet&) const = default;
};

}  // namespace llmesh::grammar
