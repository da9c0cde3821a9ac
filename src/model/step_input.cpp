#include "model/step_input.h"

#include <bit>
#include <cstring>

#include "core/error.h"

namespace llmesh::model {

namespace {

static_assert(std::endian::native == std::endian::little, "the step format is little-endian as stored");

constexpr char kMagic[4] = {'L', 'M', 'S', 'I'};
constexpr uint32_t kVersion = 1;

template <typename T>
void put_array(std::string& out, const std::vector<T>& values) {
  const uint64_t n = values.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof(n));
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  void read(void* dst, size_t n) {
    check(n <= bytes_.size() - pos_, "step input: truncated at byte {} (needs {} more, {} left)", pos_, n,
          bytes_.size() - pos_);
    std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
  }
  template <typename T>
  std::vector<T> array(const char* name) {
    uint64_t n = 0;
    read(&n, sizeof(n));
    check(n <= (bytes_.size() - pos_) / sizeof(T), "step input: array {} claims {} values, only {} bytes left", name,
          n, bytes_.size() - pos_);
    std::vector<T> values(n);
    read(values.data(), n * sizeof(T));
    return values;
  }
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

void validate(const StepInput& s) {
  const size_t t = s.token_ids.size();
  check(s.positions.size() == t && s.seq_index.size() == t && s.slot_mapping.size() == t,
        "step input: {} tokens but {} positions, {} sequence indices, {} slots", t, s.positions.size(),
        s.seq_index.size(), s.slot_mapping.size());
  const auto& off = s.block_table_offsets;
  check(off.empty() ? s.block_ids.empty() : off.front() == 0 && size_t(off.back()) == s.block_ids.size(),
        "step input: block table offsets do not cover the {} block ids", s.block_ids.size());
  for (size_t i = 1; i < off.size(); ++i) check(off[i - 1] <= off[i], "step input: block table offsets decrease");
  for (int32_t q : s.seq_index)
    check(q >= 0 && q < s.num_sequences(), "step input: sequence index {} of {} sequences", q, s.num_sequences());
  for (int32_t r : s.logits_indices)
    check(r >= 0 && size_t(r) < t, "step input: logits row {} of {} tokens", r, t);
}

}  // namespace

std::string serialize(const StepInput& input) {
  std::string out(kMagic, sizeof(kMagic));
  out.append(reinterpret_cast<const char*>(&kVersion), sizeof(kVersion));
  put_array(out, input.token_ids);
  put_array(out, input.positions);
  put_array(out, input.seq_index);
  put_array(out, input.slot_mapping);
  put_array(out, input.block_table_offsets);
  put_array(out, input.block_ids);
  put_array(out, input.logits_indices);
  return out;
}

StepInput deserialize_step_input(std::string_view bytes) {
  Reader in(bytes);
  char magic[4];
  uint32_t version = 0;
  in.read(magic, sizeof(magic));
  check(std::memcmp(magic, kMagic, sizeof(kMagic)) == 0, "step input: bad magic");
  in.read(&version, sizeof(version));
  check(version == kVersion, "step input: format version {} (this build reads {})", version, kVersion);
  StepInput s;
  s.token_ids = in.array<int32_t>("token_ids");
  s.positions = in.array<int32_t>("positions");
  s.seq_index = in.array<int32_t>("seq_index");
  s.slot_mapping = in.array<int64_t>("slot_mapping");
  s.block_table_offsets = in.array<int32_t>("block_table_offsets");
  s.block_ids = in.array<int32_t>("block_ids");
  s.logits_indices = in.array<int32_t>("logits_indices");
  check(in.at_end(), "step input: trailing bytes after the last array");
  validate(s);
  return s;
}

}  // namespace llmesh::model
