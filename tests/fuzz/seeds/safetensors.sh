#!/usr/bin/env bash
# Seeds for the safetensors target: small self-made files (first byte: the target's mode; 0 = the
# whole file). F32, BF16 and F16 tensors, metadata, an empty tensor. Writes into "$1".
set -euo pipefail
out="$1"
mkdir -p "$out"
python3 - "$out" <<'PY'
import json, struct, sys
out = sys.argv[1]
def file(tensors, metadata=None):
    header, data = {}, b''
    if metadata is not None:
        header['__metadata__'] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {'dtype': dtype, 'shape': shape,
                        'data_offsets': [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b' ' * (-len(text) % 8)
    return struct.pack('<Q', len(text)) + text + data
seeds = {
    'f32': file([('w', 'F32', [2, 2], struct.pack('<4f', 1, 2, 3, 4))]),
    'mixed': file([('a', 'BF16', [3], b'\x80\x3f' * 3), ('b', 'F16', [1, 2], b'\x00\x3c' * 2),
                   ('c', 'F32', [0], b'')], {'format': 'pt'}),
    'names': file([('vision_tower.vision_model.pre_layrnorm.weight', 'BF16', [4], b'\x00' * 8),
                   ('vision_tower.vision_model.pre_layrnorm.bias', 'BF16', [4], b'\x00' * 8)]),
}
for name, data in seeds.items():
    for mode in (0, 0x40, 0x81):
        open(f'{out}/{name}-{mode:02x}', 'wb').write(bytes([mode]) + data)
PY
