#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for tests/remote_inputs.rs, on 127.0.0.1 only.

Forwards each GET to --upstream (host:port) and answers one request per connection
(Connection: close), misbehaving as --mode says:
  pass            forward unchanged
  drop-once       the first data request (206, 1 KiB or more) sends half its body, then closes
  drop-always     every such data request sends half its body, then closes
  fail-then-ok:N  the first N requests get 500, later ones are forwarded
  status:CODE     every request gets CODE
  delay:SECONDS   wait that long before answering each data request
  latency:SECONDS wait that long before answering every request (benches/remote.sh)
  link:SECONDS    a link of that round trip: a new connection waits one (the TCP handshake),
                  every request one more, and connections stay open for the next request
                  (keep-alive, as servers and S3 keep them), so reusing one saves a round trip
  link:SECONDS:MBPS  the same, each connection's bodies paced to MBPS megabytes a second: one
                  TCP stream over a long round trip moves at most its window a round trip, and
                  object stores cap a connection (S3 and GCS at about 50-100 MB/s), which is
                  why clients fetch ranges over several connections at once
  no-range        drop the Range header: the upstream answers 200 with the whole file
  rotate-keys:N:PATH  at the Nth request, move PATH.next over PATH (a credential helper
                  rewriting ~/.aws/credentials); from then on a request signed with the key
                  the first request used gets S3's 400 ExpiredToken
Prints its port on the first line of stdout, then serves until killed or --lifetime seconds
(default 300) pass, so it never outlives a test run.
"""
import argparse
import http.client
import os
import re
import socket
import sys
import threading
import time


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", required=True)
    p.add_argument("--mode", default="pass")
    p.add_argument("--lifetime", type=float, default=300.0)
    return p.parse_args()


class State:
    def __init__(self, mode):
        self.mode, _, arg = mode.partition(":")
        self.arg = arg
        self.requests = 0
        self.drops = 0
        self.first_key = None
        self.rotated = False
        self.lock = threading.Lock()

    def next_request(self):
        with self.lock:
            self.requests += 1
            return self.requests

    def expired_key(self, number, path):
        """rotate-keys: whether this request's key has expired (rotating at request N)."""
        key = re.search(r"X-Amz-Credential=([^%/&]+)", path)
        key = key.group(1) if key else None
        limit, _, credentials = self.arg.partition(":")
        with self.lock:
            if self.first_key is None:
                self.first_key = key
            if number >= int(limit) and not self.rotated:
                os.replace(credentials + ".next", credentials)
                self.rotated = True
            return self.rotated and key == self.first_key

    def should_drop(self):
        with self.lock:
            if self.mode == "drop-always":
                return True
            if self.mode == "drop-once" and self.drops == 0:
                self.drops += 1
                return True
            return False


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
        if len(data) > 1 << 20:
            return None
    return data.split(b"\r\n\r\n", 1)[0].decode("latin-1")


def read_request(conn):
    """The next request's method, path and headers; None when the client has closed."""
    head = read_head(conn)
    if head is None:
        return None
    request_line, *header_lines = head.split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers = [tuple(h.split(":", 1)) for h in header_lines if ":" in h]
    return method, path, [(k.strip(), v.strip()) for k, v in headers]


def reply(conn, status, reason, headers, body):
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers]
    lines.append("Connection: close")
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)


def stream(conn, up, resp, headers):
    try:
        send_streamed(conn, resp, headers)
    finally:
        up.close()


def send_streamed(conn, resp, headers, close=True, rate=None):
    """Forwards the answer; `rate` (bytes a second) paces its body."""
    lines = [f"HTTP/1.1 {resp.status} {resp.reason}"]
    lines += [f"{k}: {v}" for k, v in headers]
    if close:
        lines.append("Connection: close")
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    start, sent = time.monotonic(), 0
    while True:
        chunk = resp.read(1 << 16)
        if not chunk:
            return
        conn.sendall(chunk)
        sent += len(chunk)
        if rate:
            ahead = start + sent / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)


def serve_link(conn, upstream, rtt, rate):
    """link mode: keep-alive requests, one round trip each, after one for the handshake;
    bodies paced to `rate` bytes a second when given."""
    host, port = upstream.rsplit(":", 1)
    up = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        time.sleep(rtt)
        while True:
            request = read_request(conn)
            if request is None:
                return
            method, path, headers = request
            close = any(k.lower() == "connection" and v.lower() == "close" for k, v in headers)
            time.sleep(rtt)
            keep = [(k, v) for k, v in headers if k.lower() not in ("host", "connection")]
            up.request(method, path, headers=dict(keep))
            resp = up.getresponse()
            out = [(k, v) for k, v in resp.getheaders()
                   if k.lower() not in ("connection", "transfer-encoding", "keep-alive")]
            if resp.getheader("content-length") is None:
                close = True
            send_streamed(conn, resp, out, close, rate)
            if close:
                return
    except (OSError, ValueError, http.client.HTTPException):
        pass
    finally:
        up.close()
        conn.close()


def serve(conn, upstream, state):
    if state.mode == "link":
        rtt, _, mbps = state.arg.partition(":")
        serve_link(conn, upstream, float(rtt), float(mbps) * 1e6 if mbps else None)
        return
    try:
        request = read_request(conn)
        if request is None:
            return
        method, path, headers = request
        number = state.next_request()
        if state.mode == "status":
            reply(conn, int(state.arg), "Injected", [("Content-Length", "0")], b"")
            return
        if state.mode == "fail-then-ok" and number <= int(state.arg):
            body = b"injected failure"
            reply(conn, 500, "Internal Server Error", [("Content-Length", str(len(body)))], body)
            return
        if state.mode == "rotate-keys" and state.expired_key(number, path):
            body = (b"<?xml version=\"1.0\"?><Error><Code>ExpiredToken</Code>"
                    b"<Message>The provided token has expired.</Message></Error>")
            reply(conn, 400, "Bad Request", [("Content-Length", str(len(body)))], body)
            return
        if state.mode == "latency":
            time.sleep(float(state.arg))
        host, port = upstream.rsplit(":", 1)
        up = http.client.HTTPConnection(host, int(port), timeout=30)
        dropped = ("host", "connection") + (("range",) if state.mode == "no-range" else ())
        keep = [(k, v) for k, v in headers if k.lower() not in dropped]
        up.request(method, path, headers=dict(keep))
        resp = up.getresponse()
        out_headers = [(k, v) for k, v in resp.getheaders()
                       if k.lower() not in ("connection", "transfer-encoding", "keep-alive")]
        data_request = resp.status == 206
        if data_request and state.mode == "delay":
            time.sleep(float(state.arg))
        if not state.mode.startswith("drop"):
            # Streamed as it arrives, as a real server sends: a client that stops reading (htslib
            # reading an open-ended range up to the next seek) stops the transfer, and the bytes
            # nginx logs are those a client really pulled.
            stream(conn, up, resp, out_headers)
            return
        body = resp.read()
        # Only bodies of some size are cut: the few-byte tail asked for beside a file's opening
        # is not the transfer these modes test.
        if data_request and len(body) >= 1024 and state.should_drop():
            lines = [f"HTTP/1.1 {resp.status} {resp.reason}"]
            lines += [f"{k}: {v}" for k, v in out_headers]
            conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            conn.sendall(body[: len(body) // 2])
            conn.shutdown(socket.SHUT_RDWR)
            return
        reply(conn, resp.status, resp.reason, out_headers, body)
    except (OSError, ValueError):
        pass
    finally:
        conn.close()


def main():
    args = parse_args()
    state = State(args.mode)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.5)
    print(listener.getsockname()[1], flush=True)
    deadline = time.monotonic() + args.lifetime
    while time.monotonic() < deadline:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        conn.settimeout(60)
        # As nginx does (tcp_nodelay): without it a kept-alive answer's last small write waits
        # for the client's delayed ACK, 40 ms on Linux, a delay no real server adds.
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve, args=(conn, args.upstream, state), daemon=True).start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
