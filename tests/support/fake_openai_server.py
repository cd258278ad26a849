#!/usr/bin/env python3
"""A fake OpenAI-compatible model server for Reel's tests.

A test double for the process outside Reel (vLLM, SGLang or a hosted service): it is never part of
the product. Tests start it on loopback (port 0: the chosen port is printed as "PORT <n>"), and it
answers as the named server does: model cards, field names, reasoning fields, error shapes.

It checks the shape of every request it gets (fields, types, message parts, base64 media, the
dialect's forbidden fields, the API key) and records problems in its log instead of guessing.

Token counting (deterministic, so tests can compute it): each whitespace-separated word of text is
one token, each image part --image-tokens tokens, each video part --video-tokens tokens, plus
--message-overhead tokens per message and --prompt-overhead per request.

Behaviour is scripted through a control endpoint, one entry per coming chat request:
  POST /_fake/script  [{"kind": ..., "times": 1, "match": "text in the body"}, ...]
                      ("match" may be a list: every text in it must be in the body)
  POST /_fake/reset   clears the script, the log, the prefix cache and "down"
  GET  /_fake/log     what each request looked like (big base64 strings shortened)
Kinds: ok, content (content/reasoning/finish_reason; seconds: a wait before it), status (status,
headers, body), malformed, empty_choices, stall (seconds), cut (half a body, then close), reset
(close, no answer), too_long (shape vllm | sglang | sglang_total, prompt_tokens, limit), slow
(seconds before the answer), stream_cut (some chunks, then close), stream_error (an error event),
slow_stream (chunk_delay), stream_done_then_cut (the whole stream, then the connection ends
without the chunked terminator), down (seconds, status: every request in that window fails),
echo_key (a 401 whose message repeats the Authorization header), endless_stream (valid content
deltas of chunk_bytes each, every chunk_delay seconds, never [DONE]; until the client hangs up),
trickle (a complete answer, one byte every `interval` seconds), ignore_stream (a stream: true
request answered with one whole JSON completion, as servers that ignore `stream` do).

Whole-server faults: --redirect-to URL answers every request with a 302 to URL + the path (an
http -> https redirect, say); --auth-only-chat asks for the API key on chat requests only (the
model list is open).

Speech: POST /v1/audio/transcriptions (OpenAI's multipart form, as a Whisper server takes it).
Every upload is checked: a multipart body with the fields file (a valid 16-bit PCM mono WAV),
model (--model), response_format=verbose_json, timestamp_granularities[] = segment and word, and
language when given (two letters); problems go into the log and get a 400. The "transcription" is
of tones, not words: each burst of a steady tone in the WAV becomes a segment "tone <Hz>" (its
frequency rounded to 10 Hz) with the burst's start and end relative to the chunk, and two words.
--transcribe-shape openai (words at the top level, the default) | whispercpp (words inside the
segments, with probability) | text (only {"text": ...}); --no-word-timestamps answers a request
for word times with a 400 naming timestamp_granularities; --no-verbose-json answers verbose_json
with a 400 (as older vLLM) and takes response_format=json. Scripted behaviours (status, reset,
stall, cut, malformed, slow, down) apply to uploads as to chat requests ("match" can name a
chunk's file name, e.g. "chunk-00002.wav").

Long answers: --answer-words N ends every default prose answer (not scripted content, not JSON)
with N more words ("word1 word2 ... wordN"), for tests whose answers must fill a context;
--log-text keeps long texts whole in the log.

Batch mode (as `vllm run-batch`): --batch-input IN --batch-output OUT answers every line of an
OpenAI Batch input file with the same answers the server would give, and exits.
"""

import argparse
import base64
import binascii
import json
import re
import socket
import struct
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
SCRIPT = []
LOG = []
CACHE = []  # recent prompts as token lists (prefix cache)
DOWN = {"until": 0.0, "status": 503, "reset": False}

CHAT_FIELDS = {
    "model", "messages", "max_completion_tokens", "max_tokens", "temperature", "top_p", "top_k",
    "seed", "stream", "stream_options", "chat_template_kwargs", "response_format", "n", "stop",
    "user", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs",
}
ROLES = {"system", "developer", "user", "assistant", "tool"}
THINKING = {"enabled", "disabled", "adaptive"}


# ----------------------------------------------------------------------------- request checks

def check_media_url(url, kind, problems, counts):
    if not isinstance(url, str) or not url:
        problems.append(f"{kind}: url must be a non-empty string")
        return
    if url.startswith("data:"):
        head, sep, payload = url.partition(",")
        if not sep or ";base64" not in head:
            problems.append(f"{kind}: data URL without ;base64")
            return
        for piece in payload.split(","):  # video: several frames, comma separated
            try:
                raw = base64.b64decode(piece, validate=True)
            except (binascii.Error, ValueError):
                problems.append(f"{kind}: invalid base64")
                return
            counts["media_bytes"] += len(raw)
            if raw[:2] == b"\xff\xd8":
                counts["jpeg"] += 1
    elif not url.startswith(("http://", "https://", "file://")):
        problems.append(f"{kind}: unsupported URL scheme")


def count_and_check(body, mode):
    """Returns (prompt token list, problems, counts)."""
    problems = []
    counts = {"media_bytes": 0, "jpeg": 0, "images": 0, "videos": 0}
    tokens = []
    if not isinstance(body, dict):
        return tokens, ["body is not a JSON object"], counts
    for key in body:
        if key not in CHAT_FIELDS:
            problems.append(f"unknown field '{key}'")
    if body.get("model") != ARGS.model:
        problems.append(f"model is {body.get('model')!r}, expected {ARGS.model!r}")
    mct = body.get("max_completion_tokens")
    if not isinstance(mct, int) or isinstance(mct, bool) or mct < 1:
        problems.append("max_completion_tokens must be an integer >= 1")
    for key, kind in (("temperature", (int, float)), ("top_p", (int, float)), ("seed", int),
                      ("top_k", int), ("stream", bool)):
        if key in body and not isinstance(body[key], kind):
            problems.append(f"{key} has the wrong type")
    if mode == "openai":
        for key in ("chat_template_kwargs", "top_k"):
            if key in body:
                problems.append(f"'{key}' is not accepted by an OpenAI-compatible service")
    ctk = body.get("chat_template_kwargs")
    if ctk is not None:
        if not isinstance(ctk, dict):
            problems.append("chat_template_kwargs must be an object")
        elif "thinking_mode" in ctk and ctk["thinking_mode"] not in THINKING:
            problems.append("chat_template_kwargs.thinking_mode is not enabled|disabled|adaptive")
    rf = body.get("response_format")
    if rf is not None:
        if not isinstance(rf, dict) or rf.get("type") not in ("text", "json_object", "json_schema"):
            problems.append("response_format.type is wrong")
        elif rf.get("type") == "json_schema":
            js = rf.get("json_schema")
            if not isinstance(js, dict) or not isinstance(js.get("name"), str) or \
                    not isinstance(js.get("schema"), (dict, bool)):
                problems.append("response_format.json_schema needs name and schema")
    so = body.get("stream_options")
    if so is not None and (not isinstance(so, dict) or not body.get("stream")):
        problems.append("stream_options without stream")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        problems.append("messages must be a non-empty list")
        return tokens, problems, counts
    tokens += ["<bos>"] * ARGS.prompt_overhead
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            problems.append(f"messages[{i}] needs a known role")
            continue
        tokens += [f"<{m['role']}>"] * ARGS.message_overhead
        content = m.get("content")
        if isinstance(content, str):
            tokens += content.split()
            continue
        if not isinstance(content, list):
            problems.append(f"messages[{i}].content must be a string or a list of parts")
            continue
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            where = f"messages[{i}].content[{j}]"
            if kind == "text":
                if not isinstance(part.get("text"), str):
                    problems.append(f"{where}.text must be a string")
                else:
                    tokens += part["text"].split()
            elif kind in ("image_url", "video_url"):
                inner = part.get(kind)
                if not isinstance(inner, dict):
                    problems.append(f"{where}.{kind} must be an object")
                    continue
                check_media_url(inner.get("url"), where, problems, counts)
                if kind == "image_url":
                    counts["images"] += 1
                    tag = f"<img:{hash(inner.get('url'))}>"
                    tokens += [tag] * ARGS.image_tokens
                else:
                    counts["videos"] += 1
                    tag = f"<vid:{hash(inner.get('url'))}>"
                    tokens += [tag] * ARGS.video_tokens
            else:
                problems.append(f"{where}: unknown part type {kind!r}")
    return tokens, problems, counts


def check_auth(headers, raw_body, path):
    """Problems with the API key: wrong or missing, or present anywhere but the header."""
    problems = []
    if ARGS.api_key:
        if ARGS.auth_only_chat and not path.endswith("/chat/completions"):
            return problems
        if headers.get("authorization") != f"Bearer {ARGS.api_key}":
            problems.append("auth")
        key = ARGS.api_key.encode()
        if key in raw_body or ARGS.api_key in path:
            problems.append("the API key appears outside the Authorization header")
        for name, value in headers.items():
            if name != "authorization" and ARGS.api_key in value:
                problems.append(f"the API key appears in header {name}")
    return problems


# ----------------------------------------------------------------------------- answers

def error_body(message, status, err_type="BadRequestError", param=None, mode=None):
    mode = mode or ARGS.mode
    if mode == "sglang":
        return {"object": "error", "message": message, "type": err_type, "param": param,
                "code": status}
    return {"error": {"message": message, "type": err_type, "param": param, "code": status}}


def too_long_body(shape, n, m, limit):
    if shape == "vllm":
        msg = (f"You passed {n} input tokens and requested {m} output tokens. However, the "
               f"model's context length is only {limit} tokens, resulting in a maximum input "
               f"length of {max(0, limit - m)} tokens. Please reduce the length of the input "
               f"prompt. (parameter=input_tokens, value={n})")
        return error_body(msg, 400, param="input_tokens", mode="vllm")
    if shape == "sglang":
        msg = (f"The input ({n} tokens) is longer than the model's context length "
               f"({limit} tokens).")
        return error_body(msg, 400, mode="sglang")
    msg = (f"Requested token count exceeds the model's maximum context length of {limit} tokens. "
           f"You requested a total of {n + m} tokens: {n} tokens from the input messages and "
           f"{m} tokens for the completion. Please reduce the number of tokens in the input "
           f"messages or the completion to fit within the limit.")
    return error_body(msg, 400, mode="sglang")


def example_for(schema, root, depth=0):
    """A value that matches a (simple) JSON schema, as guided decoding would produce."""
    if depth > 20 or not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        ref = schema["$ref"]
        target = root
        for key in ref.lstrip("#/").split("/"):
            if key:
                target = target.get(key, {})
        return example_for(target, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return example_for(schema[key][0], root, depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = [x for x in t if x != "null"][0] if any(x != "null" for x in t) else "null"
    if t == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: example_for(v, root, depth + 1) for k, v in props.items()}
    if t == "array":
        n = max(1, schema.get("minItems", 1))
        return [example_for(schema.get("items", {}), root, depth + 1) for _ in range(n)]
    if t == "integer":
        return int(schema.get("minimum", 1))
    if t == "number":
        return float(schema.get("minimum", 0.5))
    if t == "boolean":
        return True
    if t == "null":
        return None
    return "text"


def last_user_text(body):
    for m in reversed(body.get("messages", [])):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):
                texts = [p.get("text", "") for p in c if isinstance(p, dict) and
                         p.get("type") == "text"]
                return texts[-1] if texts else ""
    return ""


def make_answer(body, behaviour):
    """(content, reasoning, finish_reason) for a request."""
    thinking = (body.get("chat_template_kwargs") or {}).get("thinking_mode", "adaptive")
    reasoning = "" if thinking == "disabled" else "Let me look at the frames first."
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        schema = rf["json_schema"]["schema"]
        content = json.dumps(example_for(schema, schema))
    else:
        content = "Answer to: " + last_user_text(body)[:80]
        if ARGS.answer_words > 0:
            content += " " + " ".join(f"word{i + 1}" for i in range(ARGS.answer_words))
    finish = "stop"
    if behaviour.get("kind") == "content":
        content = behaviour.get("content", content)
        reasoning = behaviour.get("reasoning", reasoning)
        finish = behaviour.get("finish_reason", finish)
    return content, reasoning, finish


def cached_prefix(tokens):
    best = 0
    for old in CACHE:
        n = 0
        for a, b in zip(old, tokens):
            if a != b:
                break
            n += 1
        best = max(best, n)
    CACHE.append(tokens)
    del CACHE[:-64]
    return best // ARGS.block_size * ARGS.block_size


def completion(body, tokens, behaviour, request_id):
    content, reasoning, finish = make_answer(body, behaviour)
    message = {"role": "assistant", "content": content, "tool_calls": []}
    if reasoning:
        if ARGS.inline_reasoning:
            message["content"] = f"<mm:think>{reasoning}</mm:think>\n\n{content}"
        elif ARGS.mode == "sglang":
            message["reasoning_content"] = reasoning
        else:
            message["reasoning"] = reasoning
    with LOCK:
        cached = cached_prefix(tokens)
    completion_tokens = len(content.split()) + len(reasoning.split())
    usage = {"prompt_tokens": len(tokens), "completion_tokens": completion_tokens,
             "total_tokens": len(tokens) + completion_tokens,
             "prompt_tokens_details": {"cached_tokens": cached}}
    return {"id": request_id, "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": finish}],
            "usage": usage}


def pieces(text, size=7):
    return [text[i:i + size] for i in range(0, len(text), size)] if text else []


def stream_events(body, tokens, behaviour, request_id):
    """The SSE events (as dicts, then "[DONE]") for a streamed answer."""
    full = completion(body, tokens, behaviour, request_id)
    msg = full["choices"][0]["message"]
    created, model = full["created"], full["model"]

    def chunk(delta, finish=None):
        return {"id": request_id, "object": "chat.completion.chunk", "created": created,
                "model": model, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                             "finish_reason": finish}]}
    events = [chunk({"role": "assistant", "content": ""})]
    field = "reasoning_content" if ARGS.mode == "sglang" else "reasoning"
    for p in pieces(msg.get(field, "")):
        events.append(chunk({field: p}))
    for p in pieces(msg.get("content", "")):
        events.append(chunk({"content": p}))
    events.append(chunk({}, full["choices"][0]["finish_reason"]))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append({"id": request_id, "object": "chat.completion.chunk", "created": created,
                       "model": model, "choices": [], "usage": full["usage"]})
    events.append("[DONE]")
    return events


def shorten(value):
    """The request for the log: long strings (base64 media) replaced by their length (with
    --log-text, only data: URLs)."""
    if isinstance(value, dict):
        return {k: shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shorten(v) for v in value]
    if isinstance(value, str) and len(value) > 300:
        if ARGS.log_text and not value.startswith("data:"):
            return value
        return f"<{len(value)} chars>"
    return value


def take_behaviour(raw_text):
    with LOCK:
        if time.time() < DOWN["until"]:
            return {"kind": "down_now"}
        for i, b in enumerate(SCRIPT):
            wanted = b.get("match", [])
            if isinstance(wanted, str):
                wanted = [wanted]
            if any(w not in raw_text for w in wanted):
                continue
            b["times"] = b.get("times", 1) - 1
            if b["times"] <= 0:
                SCRIPT.pop(i)
            if b.get("kind") == "down":
                DOWN["until"] = time.time() + float(b.get("seconds", 1))
                DOWN["status"] = int(b.get("status", 503))
                DOWN["reset"] = bool(b.get("reset", False))
                return {"kind": "down_now"}
            return b
    return {"kind": "ok"}


# ----------------------------------------------------------------------------- speech

def parse_multipart(content_type, raw):
    """[(name, filename or None, content type or None, bytes)], or raises ValueError."""
    m = re.search(r'boundary="?([^";]+)"?', content_type or "")
    if not content_type or not content_type.startswith("multipart/form-data") or not m:
        raise ValueError("Content-Type is not multipart/form-data with a boundary")
    delimiter = b"--" + m.group(1).encode()
    if not raw.startswith(delimiter):
        raise ValueError("body does not start with the boundary")
    if not raw.rstrip(b"\r\n").endswith(delimiter + b"--"):
        raise ValueError("body does not end with the closing boundary")
    parts = []
    for chunk in raw.split(delimiter)[1:]:
        if chunk.startswith(b"--"):
            break
        if not chunk.startswith(b"\r\n") or not chunk.endswith(b"\r\n"):
            raise ValueError("a part is not framed by CRLF")
        head, sep, data = chunk[2:-2].partition(b"\r\n\r\n")
        if not sep:
            raise ValueError("a part has no blank line after its headers")
        headers = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        cd = headers.get("content-disposition", "")
        name = re.search(r'(?:^|;)\s*name="([^"]*)"', cd)
        filename = re.search(r'filename="([^"]*)"', cd)
        if not cd.startswith("form-data") or not name:
            raise ValueError("a part has no form-data name")
        parts.append((name.group(1), filename.group(1) if filename else None,
                      headers.get("content-type"), data))
    return parts


def read_wav(data):
    """(sample_rate, channels, samples as a list of ints) of a 16-bit PCM WAV, or raises."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("file is not RIFF/WAVE")
    if struct.unpack("<I", data[4:8])[0] != len(data) - 8:
        raise ValueError("RIFF size does not match the file")
    at, fmt = 12, None
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        body = data[at + 8:at + 8 + size]
        if len(body) != size:
            raise ValueError("a chunk runs past the end")
        if cid == b"fmt ":
            fmt = struct.unpack("<HHIIHH", body[:16])
        elif cid == b"data":
            if fmt is None:
                raise ValueError("data before fmt")
            tag, channels, rate, byte_rate, align, bits = fmt
            if tag != 1 or bits != 16:
                raise ValueError("not 16-bit PCM")
            if byte_rate != rate * channels * 2 or align != channels * 2:
                raise ValueError("byte rate or block align is wrong")
            if size % align:
                raise ValueError("data is not whole frames")
            return rate, channels, list(struct.unpack("<%dh" % (size // 2), body))
        at += 8 + size + (size & 1)
    raise ValueError("no data chunk")


def tone_bursts(rate, samples):
    """[(start_s, end_s, hz)] of the steady tones in the samples."""
    import numpy
    x = numpy.asarray(samples, dtype=numpy.float64)
    frame = max(1, rate // 100)
    n = len(x) // frame
    bursts = []
    if n == 0:
        return bursts
    rms = numpy.sqrt((x[:n * frame].reshape(n, frame) ** 2).mean(axis=1))
    loud = rms > 300  # about -40 dBFS
    f = 0
    while f < n:
        if not loud[f]:
            f += 1
            continue
        g = f
        while g < n and loud[g]:
            g += 1
        if g - f >= 10:  # 100 ms or more
            seg = x[f * frame:g * frame]
            spectrum = numpy.abs(numpy.fft.rfft(seg * numpy.hanning(len(seg))))
            hz = float(numpy.argmax(spectrum)) * rate / len(seg)
            bursts.append((f * frame / rate, g * frame / rate, int(round(hz / 10.0)) * 10))
        f = g
    return bursts


def transcription_answer(rate, samples, shape, want_words):
    duration = len(samples) / float(rate)
    segments, words = [], []
    for i, (start, end, hz) in enumerate(tone_bursts(rate, samples)):
        mid = (start + end) / 2
        seg_words = [{"word": " tone", "start": round(start, 3), "end": round(mid, 3)},
                     {"word": " %d" % hz, "start": round(mid, 3), "end": round(end, 3)}]
        seg = {"id": i, "seek": 0, "start": round(start, 3), "end": round(end, 3),
               "text": " tone %d" % hz, "tokens": [1, 2], "temperature": 0.0,
               "avg_logprob": -0.1, "compression_ratio": 1.0, "no_speech_prob": 0.01}
        if shape == "whispercpp" and want_words:
            for w in seg_words:
                w["probability"] = 0.9
            seg["words"] = seg_words
        words += seg_words
        segments.append(seg)
    text = "".join(s["text"] for s in segments)
    if shape == "text":
        return {"text": text}
    out = {"task": "transcribe", "language": "english", "duration": round(duration, 3),
           "text": text, "segments": segments}
    if shape == "openai" and want_words:
        out["words"] = words
    return out


# ----------------------------------------------------------------------------- the server

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1"

    def setup(self):
        super().setup()
        # Headers and body go out in separate writes: without this, Nagle's algorithm and the
        # client's delayed ACK add 40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # quiet
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send_json(self, status, obj, extra_headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def hard_close(self):
        """Closes the connection at once (RST), with no answer."""
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close_connection = True
        try:
            self.connection.close()
        except OSError:
            pass

    def soft_close(self):
        """Ends the connection in the middle of an answer (FIN: what was sent arrives)."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def lower_headers(self):
        return {k.lower(): v for k, v in self.headers.items()}

    def record(self, entry):
        if ARGS.no_log:
            return
        with LOCK:
            LOG.append(entry)
            del LOG[:-10000]

    # --- GET
    def redirected(self):
        """--redirect-to: a 302 for everything but the control endpoints."""
        if not ARGS.redirect_to or self.path.startswith("/_fake/"):
            return False
        if self.command == "POST":
            self.read_body()
        self.record({"method": self.command, "path": self.path, "behaviour": "redirect"})
        self.send_response(302)
        self.send_header("Location", ARGS.redirect_to + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()
        return True

    def do_GET(self):
        headers = self.lower_headers()
        if self.redirected():
            return
        if self.path == "/_fake/log":
            with LOCK:
                self.send_json(200, list(LOG))
            return
        if self.path in ("/v1/models", "/models"):
            auth = check_auth(headers, b"", self.path)
            self.record({"method": "GET", "path": self.path, "headers": headers,
                         "auth_problems": auth})
            if "auth" in auth:
                self.send_json(401, error_body("Incorrect API key provided.", 401,
                                               "invalid_request_error"))
                return
            self.send_json(200, self.model_list())
            return
        if self.path == "/health":
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_json(404, error_body(f"no route {self.path}", 404, "NotFoundError"))

    def model_list(self):
        created = int(time.time())
        if ARGS.mode == "openai":
            card = {"id": ARGS.model, "name": ARGS.model, "created": created,
                    "context_length": ARGS.max_model_len,
                    "architecture": {"input_modalities": ["text", "image"]}}
        else:
            card = {"id": ARGS.model, "object": "model", "created": created,
                    "owned_by": ARGS.mode, "root": ARGS.model, "parent": None,
                    "max_model_len": ARGS.max_model_len}
            if ARGS.mode == "vllm":
                card["permission"] = [{"id": "modelperm-1", "object": "model_permission"}]
        return {"object": "list", "data": [card]}

    # --- POST
    def do_POST(self):
        if self.redirected():
            return
        if ARGS.sink_bodies and self.path == "/v1/chat/completions":
            self.sink_chat()
            return
        raw = self.read_body()
        headers = self.lower_headers()
        if self.path == "/_fake/script":
            with LOCK:
                SCRIPT.extend(json.loads(raw))
            self.send_json(200, {"ok": True})
            return
        if self.path == "/_fake/reset":
            with LOCK:
                SCRIPT.clear()
                LOG.clear()
                CACHE.clear()
                DOWN["until"] = 0.0
            self.send_json(200, {"ok": True})
            return
        if self.path in ("/tokenize", "/v1/tokenize") and ARGS.mode != "openai":
            if self.path == "/v1/tokenize" and ARGS.mode != "sglang":
                self.send_json(404, error_body("Not Found", 404, "NotFoundError"))
                return
            self.tokenize(raw, headers)
            return
        if self.path == "/v1/audio/transcriptions":
            self.transcribe(raw, headers)
            return
        if self.path != "/v1/chat/completions":
            self.send_json(404, error_body(f"no route {self.path}", 404, "NotFoundError"))
            return
        self.chat(raw, headers)

    def transcribe(self, raw, headers):
        arrived = time.time()
        auth = check_auth(headers, raw, self.path)
        behaviour = take_behaviour(raw.decode("latin-1"))
        kind = behaviour.get("kind", "ok")
        problems, fields, upload = [], {}, {}
        samples, rate = [], 16000
        try:
            for name, filename, ctype, data in parse_multipart(headers.get("content-type"), raw):
                if name == "file":
                    upload = {"filename": filename, "content_type": ctype, "bytes": len(data)}
                    try:
                        rate, channels, samples = read_wav(data)
                        upload.update({"sample_rate": rate, "channels": channels,
                                       "samples": len(samples),
                                       "duration": round(len(samples) / float(rate), 4)})
                        if channels != 1 or rate != 16000:
                            problems.append(f"audio is {channels} channels at {rate} Hz, "
                                            "not mono 16000 Hz")
                    except (ValueError, struct.error) as e:
                        problems.append(f"file: {e}")
                    if not filename or ctype not in ("audio/wav", "audio/x-wav", "audio/wave"):
                        problems.append("file needs a file name and an audio/wav type")
                else:
                    fields.setdefault(name, []).append(data.decode("utf-8", "replace"))
        except ValueError as e:
            problems.append(str(e))
        if not upload:
            problems.append("no file part")
        if fields.get("model") != [ARGS.model]:
            problems.append(f"model is {fields.get('model')!r}, expected {ARGS.model!r}")
        response_format = (fields.get("response_format") or [""])[0]
        granularities = fields.get("timestamp_granularities[]", [])
        if response_format == "verbose_json":
            if "segment" not in granularities:
                problems.append("timestamp_granularities[] lacks segment")
        elif not (response_format == "json" and ARGS.no_verbose_json):
            problems.append(f"response_format is {response_format!r}")
        if "language" in fields and not re.fullmatch(r"[a-z]{2,3}", fields["language"][0]):
            problems.append("language is not an ISO 639-1 code")
        unknown = set(fields) - {"model", "language", "response_format", "prompt",
                                 "temperature", "timestamp_granularities[]"}
        if unknown:
            problems.append(f"unknown fields {sorted(unknown)}")
        self.record({"method": "POST", "path": self.path, "headers": headers,
                     "client_port": self.client_address[1], "body_bytes": len(raw),
                     "fields": fields, "file": upload, "auth_problems": auth,
                     "shape_errors": problems, "behaviour": kind, "time": arrived})
        if "auth" in auth:
            self.send_json(401, error_body("Incorrect API key provided.", 401,
                                           "invalid_request_error"))
            return
        if kind == "down_now":
            if DOWN["reset"]:
                self.hard_close()
            else:
                self.send_json(DOWN["status"], error_body("Service Unavailable",
                                                          DOWN["status"], "ServiceUnavailable"))
            return
        if problems:
            self.send_json(400, error_body("fake server: bad upload: " + "; ".join(problems),
                                           400))
            return
        if ARGS.no_verbose_json and fields.get("response_format") == ["verbose_json"]:
            self.send_json(400, error_body("Currently only support response_format `text` or "
                                           "`json`", 400, param="response_format"))
            return
        if ARGS.no_word_timestamps and "word" in granularities:
            self.send_json(400, error_body("timestamp_granularities word is not supported by "
                                           "this model", 400, param="timestamp_granularities"))
            return
        if kind == "status":
            status = int(behaviour.get("status", 500))
            out = behaviour.get("body") or error_body(f"scripted status {status}", status,
                                                      "ServerError")
            self.send_json(status, out, behaviour.get("headers"))
            return
        if kind == "reset":
            self.hard_close()
            return
        if kind == "stall":
            time.sleep(float(behaviour.get("seconds", 30)))
            self.hard_close()
            return
        if kind == "malformed":
            data = b'{"task": "transcribe", "segments": [{"start": 0.0, "text": "unterminated'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if kind == "slow":
            time.sleep(float(behaviour.get("seconds", 1)))
        shape = "text" if response_format == "json" else ARGS.transcribe_shape
        answer = transcription_answer(rate, samples, shape, "word" in granularities)
        if kind == "cut":
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])
            self.soft_close()
            return
        self.send_json(200, answer)

    def sink_chat(self):
        """Benchmarks: reads the body in pieces and throws it away; a fixed answer."""
        left = int(self.headers.get("Content-Length") or 0)
        got = 0
        while left > 0:
            piece = self.rfile.read(min(left, 1 << 20))
            if not piece:
                return
            got += len(piece)
            left -= len(piece)
        answer = {"id": "chatcmpl-sink", "object": "chat.completion", "created": 0,
                  "model": ARGS.model,
                  "choices": [{"index": 0, "message": {"role": "assistant",
                                                       "content": f"received {got} bytes"},
                               "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": got // 200, "completion_tokens": 3,
                            "total_tokens": got // 200 + 3}}
        self.send_json(200, answer)

    def tokenize(self, raw, headers):
        auth = check_auth(headers, raw, self.path)
        try:
            body = json.loads(raw)
        except ValueError:
            self.send_json(400, error_body("body is not JSON", 400))
            return
        tokens = []
        problems = []
        if isinstance(body, dict):
            chat_like = dict(body)
            for key in ("add_generation_prompt", "add_special_tokens"):
                chat_like.pop(key, None)
            chat_like["max_completion_tokens"] = 1
            tokens, problems, _ = count_and_check(chat_like, ARGS.mode)
        self.record({"method": "POST", "path": self.path, "headers": headers,
                     "auth_problems": auth, "shape_errors": problems,
                     "prompt_tokens": len(tokens)})
        if "auth" in auth:
            self.send_json(401, error_body("Incorrect API key provided.", 401))
            return
        self.send_json(200, {"count": len(tokens), "max_model_len": ARGS.max_model_len,
                             "tokens": list(range(len(tokens)))})

    def chat(self, raw, headers):
        arrived = time.time()
        raw_text = raw.decode("utf-8", "replace")
        auth = check_auth(headers, raw, self.path)
        behaviour = take_behaviour(raw_text)
        kind = behaviour.get("kind", "ok")
        try:
            body = json.loads(raw)
            tokens, problems, counts = count_and_check(body, ARGS.mode)
        except ValueError:
            body, tokens, problems, counts = None, [], ["body is not valid JSON"], {}
        self.record({"method": "POST", "path": self.path, "headers": headers,
                     "client_port": self.client_address[1],
                     "body_bytes": len(raw), "body": shorten(body), "auth_problems": auth,
                     "shape_errors": problems, "prompt_tokens": len(tokens), "counts": counts,
                     "behaviour": kind, "time": arrived})
        if "auth" in auth:
            self.send_json(401, error_body("Incorrect API key provided.", 401,
                                           "invalid_request_error"))
            return
        if kind == "echo_key":
            self.send_json(401, error_body("Incorrect API key provided: " +
                                           headers.get("authorization", ""), 401))
            return
        if kind == "down_now":
            if DOWN["reset"]:
                self.hard_close()
            else:
                self.send_json(DOWN["status"], error_body("Service Unavailable",
                                                          DOWN["status"], "ServiceUnavailable"))
            return
        if problems:
            self.send_json(400, error_body("fake server: bad request shape: " +
                                           "; ".join(problems), 400))
            return
        request_id = headers.get("x-request-id") or ("chatcmpl-" + uuid.uuid4().hex)
        extra = {"x-request-id": request_id} if ARGS.mode == "vllm" else {}
        m = body["max_completion_tokens"]
        if kind == "too_long":
            n = int(behaviour.get("prompt_tokens", len(tokens)))
            limit = int(behaviour.get("limit", ARGS.max_model_len))
            self.send_json(400, too_long_body(behaviour.get("shape", ARGS.mode), n, m, limit))
            return
        if len(tokens) + m > ARGS.max_model_len:
            shape = "vllm" if ARGS.mode != "sglang" else (
                "sglang" if len(tokens) >= ARGS.max_model_len else "sglang_total")
            self.send_json(400, too_long_body(shape, len(tokens), m, ARGS.max_model_len))
            return
        if kind == "status":
            status = int(behaviour.get("status", 500))
            out = behaviour.get("body") or error_body(f"scripted status {status}", status,
                                                      "ServerError")
            self.send_json(status, out, behaviour.get("headers"))
            return
        if kind == "reset":
            self.hard_close()
            return
        if kind == "stall":
            time.sleep(float(behaviour.get("seconds", 30)))
            self.hard_close()
            return
        if kind == "malformed":
            data = b'{"id": "x", "choices": [{"message": {"content": "unterminated'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if kind == "empty_choices":
            self.send_json(200, {"id": request_id, "object": "chat.completion",
                                 "created": int(time.time()), "model": ARGS.model,
                                 "choices": [], "usage": {"prompt_tokens": len(tokens),
                                                          "completion_tokens": 0,
                                                          "total_tokens": len(tokens)}})
            return
        # Prefill: scripted, or from the token count.
        delay = float(behaviour.get("seconds", 0)) if kind in ("slow", "content") else 0.0
        if ARGS.prefill_tokens_per_second > 0:
            delay += len(tokens) / ARGS.prefill_tokens_per_second
        if delay > 0:
            time.sleep(delay)
        if kind == "endless_stream":
            self.endless_stream(behaviour, request_id)
            return
        if kind == "trickle":
            self.trickle(completion(body, tokens, behaviour, request_id),
                         float(behaviour.get("interval", 2)))
            return
        if body.get("stream") and kind != "ignore_stream":
            self.stream(body, tokens, behaviour, request_id, extra)
            return
        answer = completion(body, tokens, behaviour, request_id)
        if kind == "cut":
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])
            self.soft_close()
            return
        self.send_json(200, answer, extra)

    def endless_stream(self, behaviour, request_id):
        """Valid deltas without end (never finish_reason, never [DONE]) until the client leaves."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        delay = float(behaviour.get("chunk_delay", 0))
        text = "x" * int(behaviour.get("chunk_bytes", 1000))
        event = {"id": request_id, "object": "chat.completion.chunk", "created": 0,
                 "model": ARGS.model,
                 "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        data = b"data: " + json.dumps(event).encode() + b"\n\n"
        frame = b"%x\r\n%s\r\n" % (len(data), data)
        sent = 0
        try:
            while True:
                self.wfile.write(frame)
                sent += 1
                if delay:
                    self.wfile.flush()
                    time.sleep(delay)
        except OSError:
            pass
        self.close_connection = True
        with LOCK:
            LOG.append({"path": "endless_stream", "events_sent": sent})

    def trickle(self, answer, interval):
        """A complete answer, one byte at a time: never silent long enough for a read timeout."""
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            for i in range(len(data)):
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                time.sleep(interval)
        except OSError:
            pass
        self.close_connection = True

    def stream(self, body, tokens, behaviour, request_id, extra):
        kind = behaviour.get("kind")
        events = stream_events(body, tokens, behaviour, request_id)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        delay = float(behaviour.get("chunk_delay", 0)) if kind == "slow_stream" else 0.0

        def write_chunk(data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        for i, ev in enumerate(events):
            if kind == "stream_cut" and i == len(events) // 2:
                self.soft_close()
                return
            if kind == "stream_error" and i == len(events) // 2:
                err = error_body("scripted engine failure", 500, "InternalServerError",
                                 mode="vllm")
                write_chunk(b"data: " + json.dumps(err).encode() + b"\n\n")
                write_chunk(b"data: [DONE]\n\n")
                break
            text = ev if isinstance(ev, str) else json.dumps(ev)
            write_chunk(b"data: " + text.encode() + b"\n\n")
            if delay:
                time.sleep(delay)
        if kind == "stream_done_then_cut":  # every event sent, the chunked ending never
            self.soft_close()
            return
        write_chunk(b"")


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512

    def handle_error(self, request, client_address):
        pass  # a client that hangs up mid-request is part of the tests


# ----------------------------------------------------------------------------- batch mode

def run_batch(in_path, out_path):
    with open(in_path, encoding="utf-8") as fin, open(out_path, "w", encoding="utf-8") as fout:
        for n, line in enumerate(fin):
            line = line.strip()
            if not line:
                continue
            request_id = f"vllm-batch-{uuid.uuid4().hex}"
            out = {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": None,
                   "response": None, "error": None}
            try:
                req = json.loads(line)
                out["custom_id"] = req["custom_id"]
                if req.get("method") != "POST" or req.get("url") != "/v1/chat/completions":
                    raise ValueError(f"URL {req.get('url')} was used")
                body = req["body"]
                tokens, problems, _ = count_and_check(body, ARGS.mode)
                if problems:
                    raise ValueError("bad request shape: " + "; ".join(problems))
                m = body["max_completion_tokens"]
                if len(tokens) + m > ARGS.max_model_len:
                    err = too_long_body("vllm", len(tokens), m, ARGS.max_model_len)
                    out["response"] = {"status_code": 400, "request_id": request_id,
                                       "body": None}
                    out["error"] = err
                else:
                    out["response"] = {"status_code": 200, "request_id": request_id,
                                       "body": completion(body, tokens, {}, "chatcmpl-" +
                                                          uuid.uuid4().hex)}
            except (ValueError, KeyError, TypeError) as e:
                out["response"] = {"status_code": 400, "request_id": request_id, "body": None}
                out["error"] = str(e)
            fout.write(json.dumps(out) + "\n")


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--mode", choices=["vllm", "sglang", "openai"], default="vllm")
    p.add_argument("--model", default="MiniMax-M3")
    p.add_argument("--max-model-len", type=int, default=1048576)
    p.add_argument("--api-key", default="")
    p.add_argument("--image-tokens", type=int, default=720)
    p.add_argument("--video-tokens", type=int, default=1440)
    p.add_argument("--message-overhead", type=int, default=3)
    p.add_argument("--prompt-overhead", type=int, default=2)
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--prefill-tokens-per-second", type=float, default=0)
    p.add_argument("--inline-reasoning", action="store_true",
                   help="no reasoning parser: reasoning inline in the content")
    p.add_argument("--no-log", action="store_true")
    p.add_argument("--sink-bodies", action="store_true",
                   help="benchmarks: chat bodies are read and discarded, a fixed answer")
    p.add_argument("--answer-words", type=int, default=0)
    p.add_argument("--log-text", action="store_true",
                   help="long texts are logged whole (data: URLs still by their length)")
    p.add_argument("--redirect-to", default="",
                   help="answer every request with a 302 to this URL + the path")
    p.add_argument("--auth-only-chat", action="store_true",
                   help="with --api-key: only chat requests need the key")
    p.add_argument("--transcribe-shape", choices=["openai", "whispercpp", "text"],
                   default="openai")
    p.add_argument("--no-word-timestamps", action="store_true")
    p.add_argument("--no-verbose-json", action="store_true",
                   help="as older vLLM: response_format json or text only (400 otherwise)")
    p.add_argument("--batch-input")
    p.add_argument("--batch-output")
    ARGS = p.parse_args()
    if ARGS.batch_input:
        run_batch(ARGS.batch_input, ARGS.batch_output)
        return
    server = QuietServer(("127.0.0.1", ARGS.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
