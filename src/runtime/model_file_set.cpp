#include "runtime/model_file_set.h"

#include "core/error.h"
#include "text/gguf_tokenizer.h"

namespace llmesh::runtime {

ModelFileSet ModelFileSet::open(const std::string& path, const model::ConfigOverrides& overrides) {
  ModelFileSet set;
  set.files = model::open_model(path, overrides);
  if (set.files.gguf) {
    set.tokenizer = text::tokenizer_from_gguf(*set.files.gguf);
    set.files.gguf.reset();  // kept by open_model only for this read
  } else {
    set.tokenizer = text::open_hf_tokenizer(path);
  }
  // Token ids index the embedding rows.
  const size_t num_tokens = set.tokenizer.vocab.tokens.size();
  const int64_t vocab_size = set.files.config.vocab_size;
  if (set.files.format == "gguf") {
    check(num_tokens <= size_t(vocab_size), "{}: the tokenizer has {} tokens but the model's vocabulary has {} rows",
          path, num_tokens, vocab_size);
  } else {
    check(num_tokens <= size_t(vocab_size), "{}: tokenizer.json has {} tokens but config.json's vocab_size is {}", path,
          num_tokens, vocab_size);
  }
  return set;
}

std::vector<int32_t> ModelFileSet::eos_token_ids() const {
  return files.generation.eos_token_ids.empty() ? tokenizer.eos_token_ids : files.generation.eos_token_ids;
}

}  // namespace llmesh::runtime
