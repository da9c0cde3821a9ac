// Tokenizes the golden prompt texts with the reference JS tokenizer
// (@lenml/tokenizers, a port of HF tokenizers) so the token ids in prompts.py
// come from an implementation independent of llmesh.
// Usage: node tools/reference/tokenize_prompts.mjs   (from the repository root)
import { readFileSync } from "node:fs";
import { TokenizerLoader } from "../../assets/node/node_modules/@lenml/tokenizers/dist/main.mjs";

const texts = [
  "The capital of France is",
  "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
  "<｜User｜>What is 2+2?<｜Assistant｜>",   // DeepSeek V3's chat format
  "<|start|>user<|message|>What is 2+2?<|end|><|start|>assistant",   // gpt-oss's harmony format
  "def fibonacci(n):\n    if n < 2:\n        return n",
  "In the beginning the Universe was created. This has made a lot of people very angry " +
    "and been widely regarded as a bad move. Many races believe that it was created by " +
    "some sort of god, though the Jatravartid people",
];

for (const name of ["tokenizer-qwen3", "tokenizer-llama3_1", "tokenizer-deepseek_v3", "tokenizer-gptoss"]) {
  const dir = `assets/npm/${name}/models`;
  const tokenizerJSON = JSON.parse(readFileSync(`${dir}/tokenizer.json`, "utf8"));
  const tokenizerConfig = JSON.parse(readFileSync(`${dir}/tokenizer_config.json`, "utf8"));
  const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
  // DeepSeek V3's post-processor adds nothing, but its tokenizer_config sets add_bos_token
  // (transformers' LlamaTokenizerFast then adds BOS): added here the same way
  const bos = tokenizerConfig.bos_token?.content ?? tokenizerConfig.bos_token;
  const bosId = tokenizerJSON.added_tokens.find((t) => t.content === bos)?.id;
  for (const text of texts) {
    const ids = tokenizer.encode(text);  // adds BOS where the tokenizer's post-processor does
    if (tokenizerConfig.add_bos_token && bosId !== undefined && ids[0] !== bosId) ids.unshift(bosId);
    console.log(JSON.stringify({ tokenizer: name, text, num_ids: ids.length, ids }));
  }
}
