#!/usr/bin/env python3
"""Independent reference for Reel's sampling and resize arithmetic.

Written from the rules in M3-REFERENCE.md (SGLang's _compute_sampled_frame_indices and the
Qwen-style smart_resize) in plain Python, so Python's own float and round() semantics are the
reference. Prints C++ table rows for tests/pipeline/sampling_arith_test.cc.
Run: python3 tests/reference/m3_reference.py > /tmp/tables.inc
"""
import math


def fps_indices(total, video_fps, fps, max_frames=None):
    interval = 1.0 / fps
    eps = 1e-4
    indices = []
    prev = -float("inf")
    while True:
        if not indices:
            target = 0
        else:
            target = math.ceil((prev + interval - eps) * video_fps)
            target = max(target, indices[-1] + 1)
        if target >= total:
            break
        indices.append(target)
        prev = target / video_fps
    last = total - 1
    if indices and indices[-1] != last and last / video_fps - prev > eps:
        indices.append(last)
    if max_frames is not None and len(indices) > max_frames > 0:
        if max_frames == 1:
            return indices[:1]
        step = len(indices) / (max_frames - 1)
        indices = [indices[int(i * step)] for i in range(max_frames - 1)] + [indices[-1]]
    return indices


def smart_resize(height, width, factor=28, min_pixels=3136, max_pixels=602112):
    if max(height, width) / min(height, width) > 200:
        return None
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def long_side(height, width, factor=28, max_size=672):
    ratio = 1.0
    if max(width, height) > max_size:
        ratio = max_size / max(width, height)
    nw, nh = round(width * ratio), round(height * ratio)
    nw = nw if nw % factor == 0 else nw + (factor - nw % factor)
    nh = nh if nh % factor == 0 else nh + (factor - nh % factor)
    return max(nh, factor), max(nw, factor)


FPS_CASES = [
    (300, 30.0, 1.0, None), (300, 30.0, 2.0, None), (301, 30.0, 1.0, None),
    (250, 25.0, 1.0, None), (17, 29.97002997, 1.0, None), (9000, 30.0, 1.0, 32),
    (100, 29.97002997, 0.5, None), (60, 24000 / 1001, 3.0, None), (10, 10.0, 2.0, None),
    (1, 30.0, 1.0, None), (2, 30.0, 1.0, None), (7, 7.0, 1.0, None), (1000, 23.976, 1.0, 10),
    (500, 60.0, 7.0, 20), (91, 30.0, 1.0, 1), (91, 30.0, 1.0, 2), (333, 12.5, 0.3, None),
]

RESIZE_CASES = [
    (1080, 1920), (1920, 1080), (720, 1280), (480, 854), (240, 320), (270, 480), (180, 320),
    (2160, 3840), (1, 1), (28, 28), (14, 14), (10, 1000), (100, 5000), (577, 1025), (42, 42),
    (5000, 3), (1000, 5), (360, 640), (576, 720), (1088, 1920), (35, 35), (3000, 4000),
]

if __name__ == "__main__":
    print("// fps cases: total, src_fps, fps, max_frames (0 = none), expected indices")
    for total, vfps, fps, mf in FPS_CASES:
        idx = fps_indices(total, vfps, fps, mf)
        print("{%d, %r, %r, %d, {%s}}," % (total, vfps, fps, mf or 0, ", ".join(map(str, idx))))
    print("// smart resize cases: height, width, min_pixels, max_pixels -> height, width (0: error)")
    for h, w in RESIZE_CASES:
        for mn, mx in ((3136, 602112), (3136, 451584), (200704, 1003520)):
            r = smart_resize(h, w, 28, mn, mx)
            print("{%d, %d, %d, %d, %d, %d}," % (h, w, mn, mx, r[0] if r else 0, r[1] if r else 0))
    print("// long side cases: height, width, max_long_side -> height, width")
    for h, w in RESIZE_CASES:
        for m in (504, 672, 1008, 2016):
            r = long_side(h, w, 28, m)
            print("{%d, %d, %d, %d, %d}," % (h, w, m, r[0], r[1]))
