"""A local HTTP server that records every request it gets, for the tests that prove which credentials reach an
endpoint URL and which credential sources get asked.

It plays three parts on one ephemeral port, told apart by path:

- an AWS endpoint (any other path): it either forwards the request to ``upstream`` (an emulator) and returns
  its answer, or answers with ``error`` (an AWS JSON-protocol error, 400);
- the ECS/EKS container credential endpoint (``/container-credentials``), answering with ``CREDENTIALS``;
- the EC2 instance metadata service (``/latest/...``), which has no role: 404.
"""

from __future__ import annotations

import http.client
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

#: The credentials a runner really has, as a CI job would; none of them may reach an endpoint URL.
REAL_KEY_ID = "AKIAREALRUNNERKEY0001"
REAL_SECRET = "real/runner/secret/key/do/not/send"
REAL_TOKEN = "REALSESSIONTOKEN-do-not-send"
#: What the container credential endpoint hands out (as ECS and EKS Pod Identity do).
CREDENTIALS = {"AccessKeyId": REAL_KEY_ID, "SecretAccessKey": REAL_SECRET, "Token": REAL_TOKEN,
               "Expiration": "2099-01-01T00:00:00Z"}
CONTAINER_PATH = "/container-credentials"
IMDS_PREFIX = "/latest/"


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]

    @property
    def credential_endpoint(self) -> bool:
        return self.path.startswith((CONTAINER_PATH, IMDS_PREFIX))


@dataclass
class CaptureServer:
    """Started by ``start()``; ``url`` is its root; ``requests`` what it received, in order."""

    upstream: str | None = None
    error: dict[str, str] = field(default_factory=lambda: {"__type": "UnknownOperationException",
                                                           "message": "capture server"})
    requests: list[Request] = field(default_factory=list)

    def start(self) -> CaptureServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requests.append(Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
                if self.path.startswith(CONTAINER_PATH):
                    self._answer(200, {"Content-Type": "application/json"}, json.dumps(CREDENTIALS).encode())
                elif self.path.startswith(IMDS_PREFIX):
                    self._answer(404, {"Content-Type": "text/plain"}, b"no role")
                elif owner.upstream:
                    self._forward(body)
                else:
                    self._answer(400, {"Content-Type": "application/x-amz-json-1.1"}, json.dumps(owner.error).encode())

            def _forward(self, body: bytes) -> None:
                target = urlsplit(owner.upstream)
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    answer = conn.getresponse()
                    data = answer.read()
                    kept = {k: v for k, v in answer.getheaders()
                            if k.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length")}
                    self._answer(answer.status, kept, data)
                finally:
                    conn.close()

            def _answer(self, status: int, headers: dict[str, str], data: bytes) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def aws_calls(self) -> list[Request]:
        return [r for r in self.requests if not r.credential_endpoint]

    def credential_lookups(self) -> list[Request]:
        return [r for r in self.requests if r.credential_endpoint]

    def everything_sent(self) -> str:
        """Every header of every request, as one text to search for a secret."""
        return "\n".join(f"{r.method} {r.path} {r.headers}" for r in self.requests)
