#!/usr/bin/env python3
"""Independent reference for Reel's sampling and resize arithmetic.

Written from the rules in docs/m3-reference.md (SGLang's _compute_sampled_frame_indices and the
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


def fps_times(times_us, fps, keep_last=True, eps=1e-4):
    """M3's greedy rule on presentation times (Reel's `fps_timeline: time`).

    times_us: ascending presentation times in microseconds (a 1/1000000 time base). Each time is
    computed as Reel does: (pts - first_pts) * 1 / 1000000, in doubles."""
    times = [(t - times_us[0]) * 1 / 1000000 for t in times_us]
    interval = 1.0 / fps
    kept = [0]
    prev = 0.0
    while True:
        target_ts = prev + interval - eps
        target = next((i for i in range(kept[-1] + 1, len(times)) if times[i] >= target_ts), None)
        if target is None:
            break
        kept.append(target)
        prev = times[target]
    last = len(times) - 1
    if keep_last and kept[-1] != last and times[last] - prev > eps:
        kept.append(last)
    return kept


def constant_rate(times_us, avg_fps):
    """Reel's constant-rate test: every frame within max(1/avg_fps, 1% of i/avg_fps) (plus 1 us of
    rounding slack) of i/avg_fps."""
    if len(times_us) <= 1:
        return True
    period = 1.0 / avg_fps
    for i in range(1, len(times_us)):
        t = (times_us[i] - times_us[0]) * 1 / 1000000
        grid = i * period
        if abs(t - grid) > max(period, 0.01 * grid) + 1e-6:
            return False
    return True


def _times(seconds):
    return [round(t * 1000000) for t in seconds]


# Variable-rate streams for the time rule: (name, times in us, avg_fps, fps, keep_last).
_TREE_SLOTS = [0, 11, 17, 24, 31, 37, 43, 49, 56, 61, 67, 72, 78, 84, 89, 95, 105, 111, 117, 123,
               129, 136, 141, 147, 153, 160, 165, 171, 177, 184]
_STILL = [i / 10 for i in range(20)] + [8 + i / 10 for i in range(20)]
_JITTER = [i / 30 + (0.004 if i % 3 == 1 else 0.0) for i in range(90)]
_BURSTS = [0.0, 0.05, 0.1, 0.15, 2.5, 2.55, 2.6, 3.9, 4.0, 6.7, 6.75, 9.99]
TIME_CASES = [
    ("tree_avi_slots", [s * 66667 for s in _TREE_SLOTS], 1000000 / 66667, 1.0, True),
    ("tree_avi_slots_2fps", [s * 66667 for s in _TREE_SLOTS], 1000000 / 66667, 2.0, True),
    ("still_stretch", _times(_STILL), 4.0, 1.0, True),
    ("still_stretch_no_last", _times(_STILL), 4.0, 1.0, False),
    ("still_stretch_half_fps", _times(_STILL), 4.0, 0.5, True),
    ("jittered_30fps", _times(_JITTER), 30.0, 1.0, True),
    ("bursts", _times(_BURSTS), 1.2, 1.0, True),
    ("bursts_3fps", _times(_BURSTS), 1.2, 3.0, True),
    ("cfr_25fps", _times([i / 25 for i in range(101)]), 25.0, 1.0, True),
    ("one_frame", [0], 25.0, 1.0, True),
    ("two_frames_close", [0, 40], 25.0, 1.0, True),
]

def grid_times(frames, num, den, dropped=()):
    """Frames i = 0..frames-1 at a true rate of num/den fps, in whole microseconds (floor), with
    the frames in `dropped` left out. Integer arithmetic, so C++ reproduces it exactly."""
    return [i * 1000000 * den // num for i in range(frames) if i not in dropped]


# Constant-rate cases on grids: (name, frames, num, den, dropped, avg_fps). The stream's stated
# average rate avg_fps may differ from its true rate num/den.
GRID_RATE_CASES = [
    ("cfr_30", 300, 30, 1, (), 30.0),
    ("cfr_ntsc", 600, 30000, 1001, (), 30000 / 1001),
    ("one_dropped_frame", 300, 30, 1, (150,), 30.0),
    ("two_dropped_frames", 300, 30, 1, (10, 11), 30.0),
    ("slow_drift_half_percent", 300, 2985, 100, (), 30.0),
    ("fast_drift_3_percent", 300, 291, 10, (), 30.0),
    ("stated_rate_too_high", 100, 24, 1, (), 30.0),
    ("one_frame", 1, 30, 1, (), 30.0),
]
# Constant-rate cases on explicit times: (name, times in us, avg_fps).
LIST_RATE_CASES = [
    ("tree_avi", [s * 66667 for s in _TREE_SLOTS], 1000000 / 66667),
    ("still_stretch", _times(_STILL), 4.0),
    ("still_stretch_stated_10", _times(_STILL), 10.0),
    ("jittered_30fps", _times(_JITTER), 30.0),
]


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
    # On evenly spaced frames the time rule is the index rule.
    for total, vfps in ((101, 25.0), (300, 30.0), (333, 12.5)):
        times = [i * 1000000 * 2 // round(2 * vfps) for i in range(total)]
        for fps in (1.0, 2.0, 0.3):
            assert fps_times(times, fps) == fps_indices(total, vfps, fps), (total, vfps, fps)
    print("// fps cases: total, src_fps, fps, max_frames (0 = none), expected indices")
    for total, vfps, fps, mf in FPS_CASES:
        idx = fps_indices(total, vfps, fps, mf)
        print("{%d, %r, %r, %d, {%s}}," % (total, vfps, fps, mf or 0, ", ".join(map(str, idx))))
    print("// fps time-rule cases: name, times (us), avg_fps, fps, keep_last, expected indices")
    for name, times, avg, fps, keep_last in TIME_CASES:
        idx = fps_times(times, fps, keep_last)
        print('{"%s", {%s}, %r, %r, %s, {%s}},' % (name, ", ".join(map(str, times)), avg, fps,
                                                  "true" if keep_last else "false",
                                                  ", ".join(map(str, idx))))
    print("// constant-rate cases on grids: name, frames, num, den, dropped, avg_fps, expected")
    for name, frames, num, den, dropped, avg in GRID_RATE_CASES:
        times = grid_times(frames, num, den, dropped)
        print('{"%s", %d, %d, %d, {%s}, %r, %s},' % (
            name, frames, num, den, ", ".join(map(str, dropped)), avg,
            "true" if constant_rate(times, avg) else "false"))
    print("// constant-rate cases on lists: name, times (us), avg_fps, expected")
    for name, times, avg in LIST_RATE_CASES:
        print('{"%s", {%s}, %r, %s},' % (name, ", ".join(map(str, times)), avg,
                                        "true" if constant_rate(times, avg) else "false"))
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
