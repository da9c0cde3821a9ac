// llama.cpp's prefill and decode speed through node-llama-cpp's prebuilt CPU libraries, for
// CPUs the llama.cpp peer build cannot run on (it is built for AVX-512; node-llama-cpp ships one
// libggml-cpu per CPU generation and loads the best one at run time).
//
//   npm install --prefix /opt/peer-npm node-llama-cpp     # once, outside the repo
//   NODE_PATH=/opt/peer-npm/node_modules node benchmarks/llamacpp_node_bench.mjs \
//       --model M.gguf --threads 2 --prompt 512 --decode 64 --depth 0
//
// Prints one JSON object: {"prefill_tokens_per_s", "decode_tokens_per_s", "depth", ...}, measured as
// llama-bench does: prefill = one evaluation of --prompt tokens in a fresh context; decode = --decode
// single-token steps after --depth tokens of context (greedy, the depth's prefill not timed).
import {createRequire} from "node:module";
import path from "node:path";
import process from "node:process";

const args = {model: "", threads: 2, prompt: 512, decode: 64, depth: 0, batch: 512};
for (let i = 2; i < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, "");
  if (!(key in args)) throw new Error(`unknown option --${key}; known: ${Object.keys(args).join(", ")}`);
  args[key] = key === "model" ? process.argv[i + 1] : Number(process.argv[i + 1]);
}
if (!args.model) throw new Error("--model M.gguf is required");

// NODE_PATH is not used by ES module imports: resolve the package through require's search path.
const require = createRequire(path.join(process.cwd(), "noop.js"));
const {getLlama} = await import(require.resolve("node-llama-cpp"));

const llama = await getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: args.threads});
const model = await llama.loadModel({modelPath: args.model});

// Random ids in the ordinary-text range of the vocabulary (fixed seed: every run sees the same prompt).
let seed = 12345;
const random_ids = (n) => Array.from({length: n}, () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return 1000 + (seed % 99000);
});

async function fresh_sequence(context_tokens) {
  const context = await model.createContext({contextSize: Math.max(1024, context_tokens + 64), threads: args.threads,
                                             batchSize: args.batch, sequences: 1});
  return {context, sequence: context.getSequence()};
}

const result = {model: path.basename(args.model), threads: args.threads, depth: args.depth,
                peer: "node-llama-cpp", cpu_variant: llama.cpuMathCores ?? null};

if (args.prompt > 0) {
  const {context, sequence} = await fresh_sequence(args.prompt);
  const tokens = random_ids(args.prompt);
  const start = process.hrtime.bigint();
  await sequence.evaluateWithoutGeneratingNewTokens(tokens);
  result.prefill_tokens_per_s = args.prompt / (Number(process.hrtime.bigint() - start) / 1e9);
  result.prompt_tokens = args.prompt;
  await context.dispose();
}

if (args.decode > 0) {
  const {context, sequence} = await fresh_sequence(args.depth + args.decode);
  if (args.depth > 0) await sequence.evaluateWithoutGeneratingNewTokens(random_ids(args.depth));
  let generated = 0, start = 0n;
  // The first step evaluates one prompt token and samples; time the --decode steps after it.
  for await (const _ of sequence.evaluate(random_ids(1), {temperature: 0})) {
    if (generated === 0) start = process.hrtime.bigint();
    if (++generated > args.decode) break;
  }
  result.decode_tokens_per_s = args.decode / (Number(process.hrtime.bigint() - start) / 1e9);
  result.decode_tokens = args.decode;
  await context.dispose();
}

await model.dispose();
console.log(JSON.stringify(result));
