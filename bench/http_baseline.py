#!/usr/bin/env python3
"""Baseline for bench/model_client_bench: the same chat requests through Python's http.client.

Keep-alive connections (one per thread), the same body bytes, each answer read and parsed as JSON
and its content taken out, as a minimal Python client would. Prints one line:
  <requests> <ok> <wall seconds> <process CPU seconds>
measured around the request loop only (not the interpreter's start).
"""
import http.client
import json
import sys
import threading
import time
from urllib.parse import urlparse


def worker(url, body, count, results):
    u = urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port)
    ok = 0
    for _ in range(count):
        conn.request("POST", u.path, body=body,
                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        if resp.status == 200 and json.loads(data)["choices"][0]["message"]["content"]:
            ok += 1
    conn.close()
    results.append(ok)


def main():
    url, body_path, total, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(body_path, "rb") as f:
        body = f.read()
    results = []
    per = total // threads
    workers = [threading.Thread(target=worker, args=(url, body, per, results))
               for _ in range(threads)]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(per * threads, sum(results), f"{wall:.6f}", f"{cpu:.6f}")


if __name__ == "__main__":
    main()
