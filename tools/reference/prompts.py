"""Golden prompts: real text tokenized by the reference JS tokenizer
(tools/reference/tokenize_prompts.mjs, @lenml/tokenizers over the same
tokenizer.json), fixed here so generation does not need node."""

QWEN_PROMPTS = [
    # "The capital of France is"
    [785, 6722, 315, 9625, 374],
    # "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
    [151644, 872, 198, 3838, 374, 220, 17, 10, 17, 30, 151645, 198, 151644, 77091, 198],
    # "In the beginning the Universe was created. This has made a lot of people very angry and been
    #  widely regarded as a bad move. Many races believe that it was created by some sort of god,
    #  though the Jatravartid people"
    [641, 279, 7167, 279, 28749, 572, 3465, 13, 1096, 702, 1865, 264, 2696, 315, 1251, 1602,
     18514, 323, 1012, 13570, 26361, 438, 264, 3873, 3271, 13, 8999, 20588, 4411, 429, 432, 572,
     3465, 553, 1045, 3378, 315, 9886, 11, 3498, 279, 619, 60978, 402, 471, 307, 1251],
]

LLAMA3_PROMPTS = [
    # <|begin_of_text|> "The capital of France is"
    [128000, 791, 6864, 315, 9822, 374],
    # <|begin_of_text|> "def fibonacci(n):\n    if n < 2:\n        return n"
    [128000, 755, 76798, 1471, 997, 262, 422, 308, 366, 220, 17, 512, 286, 471, 308],
    # <|begin_of_text|> + the same paragraph as the third Qwen prompt
    [128000, 644, 279, 7314, 279, 29849, 574, 3549, 13, 1115, 706, 1903, 264, 2763, 315, 1274,
     1633, 19021, 323, 1027, 13882, 27458, 439, 264, 3958, 3351, 13, 9176, 21234, 4510, 430, 433,
     574, 3549, 555, 1063, 3460, 315, 10087, 11, 3582, 279, 622, 62078, 402, 472, 307, 1274],
]

DEEPSEEK_V3_PROMPTS = [
    # <｜begin▁of▁sentence｜> "The capital of France is"
    [0, 671, 6102, 294, 8760, 344],
    # <｜begin▁of▁sentence｜> "<｜User｜>What is 2+2?<｜Assistant｜>" (DeepSeek V3's chat format)
    [0, 128803, 3085, 344, 223, 20, 13, 20, 33, 128804],
    # <｜begin▁of▁sentence｜> + the same paragraph as the third Qwen prompt
    [0, 1124, 270, 7407, 270, 41108, 515, 5572, 16, 1162, 769, 1960, 260, 3929, 294, 1482, 1855,
     23200, 305, 1047, 11737, 20057, 412, 260, 5763, 5002, 16, 8647, 29389, 5429, 396, 436, 515,
     5572, 513, 1093, 5803, 294, 10961, 14, 4204, 270, 552, 268, 10356, 521, 329, 1482],
]
GPTOSS_PROMPTS = [
    # "The capital of France is" (o200k_harmony adds no BOS)
    [976, 9029, 328, 10128, 382],
    # "<|start|>user<|message|>What is 2+2?<|end|><|start|>assistant" (gpt-oss's harmony format)
    [200006, 1428, 200008, 4827, 382, 220, 17, 10, 17, 30, 200007, 200006, 173781],
    # the same paragraph as the third Qwen prompt
    [637, 290, 10526, 290, 53432, 673, 5371, 13, 1328, 853, 2452, 261, 3261, 328, 1665, 1869, 36167, 326,
     1339, 20360, 42721, 472, 261, 4790, 5275, 13, 11048, 35223, 6423, 484, 480, 673, 5371, 656, 1236, 4506,
     328, 8415, 11, 5495, 290, 643, 11688, 407, 497, 315, 1665],
]
PROMPTS_BY_TOKENIZER = {"qwen3": QWEN_PROMPTS, "llama3": LLAMA3_PROMPTS, "deepseek_v3": DEEPSEEK_V3_PROMPTS,
                        "gptoss": GPTOSS_PROMPTS}


def prompts_for(spec):
    if spec.super_blocks:   # 9 variants with a 151936 x 256 embedding each: the two short prompts keep CI time down
        return QWEN_PROMPTS[:2]
    return PROMPTS_BY_TOKENIZER[spec.tokenizer]
