"""A TCP relay in front of the fake LLM server that keeps every byte the client sent: a test reads from it which
key (Authorization header) reached "the file's server" (the fake server itself never keeps a key)."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from urllib.parse import urlsplit


class RecordingProxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, upstream: str):
        split = urlsplit(upstream)
        self.upstream = (split.hostname or "127.0.0.1", split.port or 80)
        self.path = split.path
        self.sent = bytearray()
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Relay)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{self.path}"

    @property
    def requests(self) -> int:
        with self.lock:
            return self.sent.count(b"POST ")

    def saw(self, secret: str) -> bool:
        with self.lock:
            return secret.encode() in self.sent

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _Relay(socketserver.BaseRequestHandler):
    server: RecordingProxy

    def handle(self) -> None:
        upstream = socket.create_connection(self.server.upstream)
        back = threading.Thread(target=self._pump, args=(upstream, self.request, False), daemon=True)
        back.start()
        self._pump(self.request, upstream, True)
        back.join(timeout=5)
        upstream.close()

    def _pump(self, source: socket.socket, target: socket.socket, record: bool) -> None:
        with contextlib.suppress(OSError):  # either side closed: the relay ends
            while chunk := source.recv(65536):
                if record:
                    with self.server.lock:
                        self.server.sent.extend(chunk)
                target.sendall(chunk)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)
