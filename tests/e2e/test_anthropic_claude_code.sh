#!/usr/bin/env bash
# The Claude Code CLI (npm @anthropic-ai/claude-code), headless, completes a
# turn against `llmesh serve` with no bridge: its ~22K-token prompt (24 tools),
# /v1/messages?beta=true streaming, thinking, max_tokens 32000 (clamped).
source "$(dirname "$0")/serve_common.sh"
skip_on_scalar_kernels "Claude Code's ~22K-token first turn within its 150 s timeout"
source "$(dirname "$0")/claude_code_common.sh"
start_server S --ctx-size 40960
claude_say_hi "$S_URL"
echo "PASS test_anthropic_claude_code"
