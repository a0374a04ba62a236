#!/usr/bin/env python3
"""A minimal WebSocket client (standard library only), for the refusal tests.

Usage: wsclient.py URL ORIGIN [LINE…] — connects to ws://HOST:PORT/PATH?QUERY with
the Origin header ORIGIN, sends each LINE as a text message, and prints every text
message received, one per line, until the first reply or error, the server's close, or 5 s of silence.
Prints `HTTP <status>` and exits 3 when the upgrade is refused.
"""
import base64
import os
import socket
import struct
import sys
import urllib.parse


def handshake(url, origin):
    u = urllib.parse.urlsplit(url)
    sock = socket.create_connection((u.hostname, u.port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    path = (u.path or "/") + ("?" + u.query if u.query else "")
    request = (f"GET {path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n")
    if origin:
        request += f"Origin: {origin}\r\n"
    sock.sendall((request + "\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    rest = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
    return sock, status, rest


def send_text(sock, text):
    data = text.encode()
    mask = os.urandom(4)
    n = len(data)
    header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def messages(sock, buffer):
    """Yields text messages until close or silence."""
    def need(k):
        nonlocal buffer
        while len(buffer) < k:
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError
            buffer += chunk
        out, buffer = buffer[:k], buffer[k:]
        return out
    try:
        while True:
            b0, b1 = need(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", need(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", need(8))[0]
            payload = need(n)
            op = b0 & 0x0F
            if op == 8:
                return
            if op == 1:
                yield payload.decode()
    except (EOFError, socket.timeout, ConnectionError):
        return


def main():
    url, origin, *lines = sys.argv[1:]
    sock, status, rest = handshake(url, origin)
    if status != 101:
        print(f"HTTP {status}")
        sys.exit(3)
    for line in lines:
        send_text(sock, line)
    for m in messages(sock, rest):
        print(m.rstrip("\n"), flush=True)
        if '"id":' in m:  # a reply or an error: the exchange is over
            break


if __name__ == "__main__":
    main()
