#!/usr/bin/env bash
# The layer rule, checked from the sources: each src/<layer>/CMakeLists.txt's
# llmesh_layer(...) line says what it links, and every '#include "<layer>/..."'
# in src/ must name the file's own layer or one it links (directly or not).
# Also pins the seams: the engine and the model see token ids only (no text
# layer below them), and `llmesh bench` speaks HTTP and loads tokenizers only
# (no model layer below it).
set -euo pipefail
src_dir=${LLMESH_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec /usr/bin/python3 - "$src_dir" <<'PY'
import os, re, sys

root = sys.argv[1]
order = re.findall(r'^add_subdirectory\(src/(\w+)\)', open(os.path.join(root, 'CMakeLists.txt')).read(), re.M)
deps = {}
for layer in order:
    text = open(os.path.join(root, 'src', layer, 'CMakeLists.txt')).read()
    m = re.search(r'llmesh_layer\(\s*%s\b([^)]*)\)' % layer, text)
    assert m, f'src/{layer}/CMakeLists.txt: no llmesh_layer({layer} ...)'
    deps[layer] = re.findall(r'\bllmesh_(\w+)', m.group(1))

def closure(layer):
    seen, todo = set(), list(deps[layer])
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo += deps.get(d, [])
    return seen

errors = []
for layer in order:
    for d in deps[layer]:
        if d not in order[:order.index(layer)]:
            errors.append(f'src/{layer}: links llmesh_{d}, which is not a layer added before it')
for layer in order:
    allowed = closure(layer) | {layer}
    for dirpath, _, files in os.walk(os.path.join(root, 'src', layer)):
        for name in files:
            if not name.endswith(('.h', '.cpp')):
                continue
            path = os.path.join(dirpath, name)
            for n, line in enumerate(open(path, encoding='utf-8'), 1):
                m = re.match(r'\s*#\s*include\s+"(\w+)/', line)
                if m and m.group(1) in order and m.group(1) not in allowed:
                    errors.append(f'{os.path.relpath(path, root)}:{n}: includes {m.group(1)}/ '
                                  f'but {layer} does not link llmesh_{m.group(1)}')

for layer, banned in [('engine', 'text'), ('model', 'text'), ('bench', 'model'), ('bench', 'engine')]:
    if banned in closure(layer):
        errors.append(f'{layer} depends on {banned} (through {", ".join(sorted(closure(layer)))})')

for e in errors:
    print('FAIL:', e)
if errors:
    sys.exit(1)
for layer in order:
    print(f'{layer:8} -> {", ".join(sorted(closure(layer), key=order.index)) or "-"}')
print('PASS: layers')
PY
