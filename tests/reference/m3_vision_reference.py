#!/usr/bin/python3
"""Independent PyTorch reference for MiniMax-M3's vision encoder, and the fixtures Reel's C++
encoder is checked against (tests/vision/encoder_reference_test.cc).

Written from the public description (docs/m3-reference.md, "The vision encoder" and
"Frames and images: size") and the public model code it names (vLLM's
vllm/models/minimax_m3/common/vision_tower.py, transformers' models/minimax_m3_vl), not from
Reel's C++. Everything is computed in float64, so the goldens are the exact result for the
stored weights; the C++ computes in float32.

What it writes (deterministic; seed 1234), under tests/vision/fixtures/:
  m3_tiny_f32/config.json, model.safetensors          every weight in F32
  m3_tiny_bf16/config.json, model-0000{1,2}-of-00002.safetensors, model.safetensors.index.json
                                                      the same draw with the linear, norm and
                                                      bias weights rounded to BF16 and the patch
                                                      embedding in F32 (as the released
                                                      checkpoint stores them), in two shards
  m3_tiny_cases.safetensors                           per case: the input frames (U8,
                                                      [frames, H, W, 3]), and for each weight
                                                      set the pooled tower output
                                                      ([pairs, hidden]) and the projector's
                                                      tokens ([windows, text_hidden])
Cases: "still" (one 56x84 image: a pair of itself), "odd" (a 5-frame 56x56 video: 3 pairs, the
last frame repeated), "long" (an 11-frame 28x56 video: 6 pairs, two attention segments of 4 and
2 pairs, the time index restarting in the second).

Run with Debian's python3-torch:  /usr/bin/python3 tests/reference/m3_vision_reference.py
Options: --out DIR (default tests/vision/fixtures), --bench ... (see bench/vision_bench.cc: runs
the same model with random weights at a given size and prints the time).
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

# The tiny configuration: M3's structure at a small width. head_dim 32 gives 10 rotary dims per
# axis (30 rotated, 2 passed through: the same shape of split as M3's 78 + 2 of 80).
TINY = {
    "hidden_size": 64,
    "num_attention_heads": 2,
    "num_hidden_layers": 2,
    "intermediate_size": 128,
    "patch_size": 14,
    "num_channels": 3,
    "layer_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "vision_segment_max_frames": 4,
    "temporal_patch_size": 2,
    "spatial_merge_size": 2,
    "projector_hidden_size": 80,
    "text_hidden_size": 48,
}

# MiniMax-M3's own sizes (docs/m3-reference.md), for --bench.
FULL = {
    "hidden_size": 1280,
    "num_attention_heads": 16,
    "num_hidden_layers": 32,
    "intermediate_size": 5120,
    "patch_size": 14,
    "num_channels": 3,
    "layer_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "vision_segment_max_frames": 4,
    "temporal_patch_size": 2,
    "spatial_merge_size": 2,
    "projector_hidden_size": 6144,
    "text_hidden_size": 6144,
}

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)

VT = "vision_tower.vision_model."


def config_json(c):
    """config.json in the released checkpoint's layout."""
    return {
        "model_type": "minimax_m3_vl",
        "projector_hidden_size": c["projector_hidden_size"],
        "projector_hidden_act": "gelu",
        "multimodal_projector_bias": True,
        "text_config": {"hidden_size": c["text_hidden_size"]},
        "vision_config": {
            "model_type": "clip_vision_model",
            "hidden_size": c["hidden_size"],
            "num_attention_heads": c["num_attention_heads"],
            "num_hidden_layers": c["num_hidden_layers"],
            "intermediate_size": c["intermediate_size"],
            "patch_size": c["patch_size"],
            "num_channels": c["num_channels"],
            "layer_norm_eps": c["layer_norm_eps"],
            "rope_theta": c["rope_theta"],
            "hidden_act": "gelu",
            "vision_segment_max_frames": c["vision_segment_max_frames"],
            "img_token_compression_config": {
                "spatial_merge_size": c["spatial_merge_size"],
                "temporal_patch_size": c["temporal_patch_size"],
            },
        },
    }


# --- Weights ------------------------------------------------------------------------------------

def random_weights(c, gen, dtype=torch.float32):
    """A random checkpoint with the released tensor names. Linear weights are [out, in]."""
    d, f, L = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    p, t = c["projector_hidden_size"], c["text_hidden_size"]
    m2 = c["spatial_merge_size"] ** 2
    pv = c["num_channels"] * c["temporal_patch_size"] * c["patch_size"] ** 2

    def normal(*shape, std):
        return (torch.randn(*shape, generator=gen, dtype=torch.float32) * std).to(dtype)

    w = {}
    w[VT + "embeddings.patch_embedding.weight"] = normal(
        d, c["num_channels"], c["temporal_patch_size"], c["patch_size"], c["patch_size"],
        std=1.0 / math.sqrt(pv))
    w[VT + "pre_layrnorm.weight"] = 1 + normal(d, std=0.1)
    w[VT + "pre_layrnorm.bias"] = normal(d, std=0.1)
    for i in range(L):
        pre = VT + f"encoder.layers.{i}."
        for norm in ("layer_norm1", "layer_norm2"):
            w[pre + norm + ".weight"] = 1 + normal(d, std=0.1)
            w[pre + norm + ".bias"] = normal(d, std=0.1)
        # Queries and keys a little larger than unit scale, so attention is far from uniform.
        for proj, std in (("q_proj", 2.0), ("k_proj", 2.0), ("v_proj", 1.0), ("out_proj", 1.0)):
            w[pre + f"self_attn.{proj}.weight"] = normal(d, d, std=std / math.sqrt(d))
            w[pre + f"self_attn.{proj}.bias"] = normal(d, std=0.1)
        w[pre + "mlp.fc1.weight"] = normal(f, d, std=1.0 / math.sqrt(d))
        w[pre + "mlp.fc1.bias"] = normal(f, std=0.1)
        w[pre + "mlp.fc2.weight"] = normal(d, f, std=1.0 / math.sqrt(f))
        w[pre + "mlp.fc2.bias"] = normal(d, std=0.1)
    w["multi_modal_projector.linear_1.weight"] = normal(p, d, std=1.0 / math.sqrt(d))
    w["multi_modal_projector.linear_1.bias"] = normal(p, std=0.1)
    w["multi_modal_projector.linear_2.weight"] = normal(t, p, std=1.0 / math.sqrt(p))
    w["multi_modal_projector.linear_2.bias"] = normal(t, std=0.1)
    w["patch_merge_mlp.linear_1.weight"] = normal(p, m2 * t, std=1.0 / math.sqrt(m2 * t))
    w["patch_merge_mlp.linear_1.bias"] = normal(p, std=0.1)
    w["patch_merge_mlp.linear_2.weight"] = normal(t, p, std=1.0 / math.sqrt(p))
    w["patch_merge_mlp.linear_2.bias"] = normal(t, std=0.1)
    return w


def as_released(weights):
    """Every tensor rounded to BF16 except the patch embedding, which stays F32."""
    out = {}
    for name, t in weights.items():
        out[name] = t if name.endswith("patch_embedding.weight") else t.to(torch.bfloat16)
    return out


# --- Safetensors (written here, independently of Reel's writer) ---------------------------------

_DTYPES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16", torch.uint8: "U8"}


def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def write_safetensors(path, tensors, metadata=None):
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    blobs = []
    for name in sorted(tensors):
        t = tensors[name]
        data = tensor_bytes(t)
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


# --- Preprocessing ------------------------------------------------------------------------------

def patchify(frames, c):
    """frames: uint8 [T, H, W, 3], H and W multiples of patch * merge.
    Returns (patches [N, C*Tp*P*P] float64, (t, gh, gw)) with patches in merge-window order:
    for each pair, each merge window row-major, the window's patches row-major; each patch's
    values ordered (channel, frame of the pair, row, column) like the Conv3d weight."""
    P, Tp, M = c["patch_size"], c["temporal_patch_size"], c["spatial_merge_size"]
    x = torch.from_numpy(frames).to(torch.float64) / 255.0
    mean = torch.tensor(CLIP_MEAN, dtype=torch.float64)
    std = torch.tensor(CLIP_STD, dtype=torch.float64)
    x = (x - mean) / std                      # [T, H, W, C]
    if x.shape[0] % Tp:
        x = torch.cat([x, x[-1:].expand(Tp - x.shape[0] % Tp, -1, -1, -1)], 0)
    T, H, W, C = x.shape
    t, gh, gw = T // Tp, H // P, W // P
    x = x.reshape(t, Tp, gh // M, M, P, gw // M, M, P, C)
    # -> [t, window row, window col, row in window, col in window, C, Tp, P, P]
    x = x.permute(0, 2, 5, 3, 6, 8, 1, 4, 7)
    return x.reshape(t * gh * gw, C * Tp * P * P), (t, gh, gw)


# --- The model ----------------------------------------------------------------------------------

def layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def rope_angles(t, gh, gw, c):
    """[t*gh*gw, half] angles for patches in merge-window order: time (pair index in its
    segment), row and column, each with its own 1/theta^(2i/axis) frequencies, concatenated."""
    head_dim = c["hidden_size"] // c["num_attention_heads"]
    axis = 2 * ((2 * (head_dim // 2) // 3) // 2)
    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, axis, 2, dtype=torch.float64) / axis))
    M = c["spatial_merge_size"]
    rows = torch.arange(gh).reshape(gh // M, M, 1, 1).expand(gh // M, M, gw // M, M)
    cols = torch.arange(gw).reshape(1, 1, gw // M, M).expand(gh // M, M, gw // M, M)
    rows = rows.permute(0, 2, 1, 3).reshape(-1)
    cols = cols.permute(0, 2, 1, 3).reshape(-1)
    times = torch.arange(t).repeat_interleave(gh * gw)
    rows, cols = rows.repeat(t), cols.repeat(t)
    return torch.cat([times[:, None] * inv, rows[:, None] * inv, cols[:, None] * inv], dim=1)


def rotate(x, angles):
    """x: [N, heads, head_dim]; dims i and i+half rotate together; the tail passes."""
    half = angles.shape[1]
    cos, sin = angles.cos()[:, None, :], angles.sin()[:, None, :]
    x1, x2, rest = x[..., :half], x[..., half:2 * half], x[..., 2 * half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], dim=-1)


def encode(weights, c, inputs, dtype=torch.float64):
    """inputs: list of (patches, (t, gh, gw)). Returns (tower [N, hidden], pooled list, tokens)."""
    W = {k: v.to(dtype) for k, v in weights.items()}
    d, heads = c["hidden_size"], c["num_attention_heads"]
    hd = d // heads
    eps = c["layer_norm_eps"]
    seg_max = c["vision_segment_max_frames"]

    patches = torch.cat([p for p, _ in inputs]).to(dtype)
    # The Conv3d with stride == kernel is one product per patch; checked against conv3d below.
    pe = W[VT + "embeddings.patch_embedding.weight"]
    h = patches @ pe.reshape(d, -1).T
    h = layer_norm(h, W[VT + "pre_layrnorm.weight"], W[VT + "pre_layrnorm.bias"], eps)

    # Segments: each input's pairs cut into runs of at most seg_max; time restarts per run.
    segments, angles = [], []
    start = 0
    for _, (t, gh, gw) in inputs:
        for t0 in range(0, t, seg_max):
            ts = min(seg_max, t - t0)
            n = ts * gh * gw
            segments.append((start, start + n))
            angles.append(rope_angles(ts, gh, gw, c))
            start += n
    ang = torch.cat(angles).to(dtype)

    for i in range(c["num_hidden_layers"]):
        pre = VT + f"encoder.layers.{i}."
        x = layer_norm(h, W[pre + "layer_norm1.weight"], W[pre + "layer_norm1.bias"], eps)
        q = (x @ W[pre + "self_attn.q_proj.weight"].T + W[pre + "self_attn.q_proj.bias"])
        k = (x @ W[pre + "self_attn.k_proj.weight"].T + W[pre + "self_attn.k_proj.bias"])
        v = (x @ W[pre + "self_attn.v_proj.weight"].T + W[pre + "self_attn.v_proj.bias"])
        q = rotate(q.reshape(-1, heads, hd), ang)
        k = rotate(k.reshape(-1, heads, hd), ang)
        v = v.reshape(-1, heads, hd)
        out = torch.empty_like(q)
        for s0, s1 in segments:
            qs, ks, vs = (a[s0:s1].transpose(0, 1) for a in (q, k, v))  # [heads, n, hd]
            scores = qs @ ks.transpose(1, 2) / math.sqrt(hd)
            out[s0:s1] = (torch.softmax(scores, dim=-1) @ vs).transpose(0, 1)
        out = out.reshape(-1, d)
        h = h + out @ W[pre + "self_attn.out_proj.weight"].T + W[pre + "self_attn.out_proj.bias"]
        x = layer_norm(h, W[pre + "layer_norm2.weight"], W[pre + "layer_norm2.bias"], eps)
        x = gelu(x @ W[pre + "mlp.fc1.weight"].T + W[pre + "mlp.fc1.bias"])
        h = h + x @ W[pre + "mlp.fc2.weight"].T + W[pre + "mlp.fc2.bias"]

    # Pooled: the mean of the tower's patches of each pair.
    pooled = []
    start = 0
    for _, (t, gh, gw) in inputs:
        n = gh * gw
        pooled.append(torch.stack([h[start + j * n:start + (j + 1) * n].mean(0) for j in range(t)]))
        start += t * n

    y = gelu(h @ W["multi_modal_projector.linear_1.weight"].T
             + W["multi_modal_projector.linear_1.bias"])
    y = y @ W["multi_modal_projector.linear_2.weight"].T + W["multi_modal_projector.linear_2.bias"]
    y = y.reshape(-1, c["spatial_merge_size"] ** 2 * c["text_hidden_size"])
    y = gelu(y @ W["patch_merge_mlp.linear_1.weight"].T + W["patch_merge_mlp.linear_1.bias"])
    tokens = y @ W["patch_merge_mlp.linear_2.weight"].T + W["patch_merge_mlp.linear_2.bias"]
    return h, pooled, tokens


def check_patch_embedding(weights, c, patches, grid, frames):
    """The GEMM over patches equals PyTorch's Conv3d over the normalised frames."""
    P, Tp = c["patch_size"], c["temporal_patch_size"]
    pe = weights[VT + "embeddings.patch_embedding.weight"].to(torch.float64)
    x = torch.from_numpy(frames).to(torch.float64) / 255.0
    x = (x - torch.tensor(CLIP_MEAN, dtype=torch.float64)) / torch.tensor(CLIP_STD,
                                                                           dtype=torch.float64)
    if x.shape[0] % Tp:
        x = torch.cat([x, x[-1:].expand(Tp - x.shape[0] % Tp, -1, -1, -1)], 0)
    x = x.permute(3, 0, 1, 2)[None]  # [1, C, T, H, W]
    conv = torch.nn.functional.conv3d(x, pe, stride=(Tp, P, P))[0]  # [d, t, gh, gw]
    t, gh, gw = grid
    M = c["spatial_merge_size"]
    conv = conv.reshape(-1, t, gh // M, M, gw // M, M).permute(1, 2, 4, 3, 5, 0)
    gemm = patches @ pe.reshape(pe.shape[0], -1).T
    err = (conv.reshape(-1, pe.shape[0]) - gemm).abs().max().item()
    assert err < 1e-10, f"patch embedding: conv3d and GEMM differ by {err}"


def make_frames(n, h, w, seed):
    """Smooth colour fields with a moving square and noise, so patches differ."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    frames = np.empty((n, h, w, 3), np.uint8)
    for i in range(n):
        img = np.stack([(xx * 255 / max(w - 1, 1)), (yy * 255 / max(h - 1, 1)),
                        np.full((h, w), 40.0 * i % 256)], -1)
        s = 10
        y0, x0 = (3 * i) % (h - s), (5 * i) % (w - s)
        img[y0:y0 + s, x0:x0 + s] = [255 - 20 * i % 256, 30, 200]
        img = img + rng.normal(0, 12, img.shape)
        frames[i] = np.clip(img, 0, 255).astype(np.uint8)
    return frames


CASES = [("still", 1, 56, 84, True), ("odd", 5, 56, 56, False), ("long", 11, 28, 56, False)]


def write_fixtures(out):
    c = TINY
    gen = torch.Generator().manual_seed(1234)
    f32 = random_weights(c, gen)
    bf16 = as_released(f32)

    d32 = os.path.join(out, "m3_tiny_f32")
    d16 = os.path.join(out, "m3_tiny_bf16")
    os.makedirs(d32, exist_ok=True)
    os.makedirs(d16, exist_ok=True)
    for d in (d32, d16):
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config_json(c), f, indent=2)
            f.write("\n")
    write_safetensors(os.path.join(d32, "model.safetensors"), f32, {"format": "pt"})
    # Two shards and an index, the way the released checkpoint is laid out.
    shard1 = {k: v for k, v in bf16.items() if k.startswith(VT)}
    shard2 = {k: v for k, v in bf16.items() if not k.startswith(VT)}
    names = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    write_safetensors(os.path.join(d16, names[0]), shard1, {"format": "pt"})
    write_safetensors(os.path.join(d16, names[1]), shard2, {"format": "pt"})
    index = {"metadata": {"total_size": sum(len(tensor_bytes(v)) for v in bf16.values())},
             "weight_map": {**{k: names[0] for k in shard1}, **{k: names[1] for k in shard2}}}
    with open(os.path.join(d16, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2, sort_keys=True)
        f.write("\n")

    cases = {}
    for name, n, h, w, still in CASES:
        frames = make_frames(n, h, w, seed=len(name) * 7 + n)
        if still:  # a still image is a pair of itself
            frames_in = np.concatenate([frames, frames])
        else:
            frames_in = frames
        patches, grid = patchify(frames_in, c)
        check_patch_embedding(f32, c, patches, grid, frames_in)
        cases[f"{name}.frames"] = torch.from_numpy(frames)
        for label, weights in (("f32", f32), ("bf16", bf16)):
            _, pooled, tokens = encode(weights, c, [(patches, grid)])
            cases[f"{name}.{label}.pooled"] = pooled[0].to(torch.float32)
            cases[f"{name}.{label}.tokens"] = tokens.to(torch.float32)
        print(f"{name}: {n} frame(s) {h}x{w} -> grid {grid}, pooled "
              f"{list(cases[f'{name}.f32.pooled'].shape)}, tokens "
              f"{list(cases[f'{name}.f32.tokens'].shape)}")
    # Encoding all three in one batch gives the same results as one by one.
    batch = []
    for name, n, h, w, still in CASES:
        frames = cases[f"{name}.frames"].numpy()
        batch.append(patchify(np.concatenate([frames, frames]) if still else frames, c))
    _, pooled, tokens = encode(f32, c, batch)
    expect = torch.cat([cases[f"{name}.f32.tokens"] for name, *_ in CASES])
    assert (tokens.to(torch.float32) - expect).abs().max() < 1e-5
    write_safetensors(os.path.join(out, "m3_tiny_cases.safetensors"), cases,
                      {"generator": "tests/reference/m3_vision_reference.py", "seed": "1234"})


def bench(args):
    """The same model in PyTorch (float32) on random weights: prints seconds per run."""
    torch.set_num_threads(args.threads)
    c = dict(FULL if args.config == "full" else TINY)
    gen = torch.Generator().manual_seed(1)
    weights = random_weights(c, gen)  # float32 before timing: PyTorch has no mixed bf16 GEMM
    frames = make_frames(2, args.height, args.width, seed=5)
    patches, grid = patchify(frames, c)
    patches = patches.to(torch.float32)
    info = {"threads": torch.get_num_threads(), "torch": torch.__version__,
            "patches": patches.shape[0]}

    def run_once():
        t0 = time.perf_counter()
        with torch.no_grad():
            encode(weights, c, [(patches, grid)], dtype=torch.float32)
        return time.perf_counter() - t0

    if args.serve:  # one run per "run" line on stdin, one JSON line each, until EOF
        print(json.dumps(dict(info, ready=True)), flush=True)
        for line in sys.stdin:
            if line.strip() == "run":
                print(json.dumps({"seconds": run_once()}), flush=True)
        return
    times = [run_once() for _ in range(args.runs)]
    print(json.dumps(dict(info, seconds=times)))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "vision",
                                                      "fixtures"))
    parser.add_argument("--bench", action="store_true", help="time the model instead")
    parser.add_argument("--config", choices=("tiny", "full"), default="full")
    parser.add_argument("--height", type=int, default=560)
    parser.add_argument("--width", type=int, default=1008)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--serve", action="store_true",
                        help="with --bench: load once, then time one run per 'run' line on stdin")
    args = parser.parse_args()
    if args.bench:
        bench(args)
    else:
        write_fixtures(os.path.normpath(args.out))


if __name__ == "__main__":
    sys.exit(main())
