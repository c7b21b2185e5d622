"""A scripted chat-completions server for the tests of the ``llm`` agent: 127.0.0.1, an ephemeral port, a thread.

It answers ``POST /v1/chat/completions`` as an OpenAI-compatible server would, choosing the move from the
numbered legal moves of the text view it receives, as the scripted ``random`` agent would (uniformly), with
a generator seeded by the request (its messages and ``seed``), so the same request gets the same answer
from any process. Replies come in the forms a model writes (the move, its number, a sentence with the move
in backticks, an answer line); ``nonsense`` of them name no move. ``fail_first`` requests get HTTP
``fail_status``; ``delay`` holds every answer back. Use it as a context manager: it stops when the block
ends, and its thread is a daemon, so it never outlives the test run.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MOVE = re.compile(r"^(\d+)\. (\S+)", re.M)


class ScriptedChatServer:
    def __init__(self, *, nonsense: float = 0.0, delay: float = 0.0, fail_first: int = 0, fail_status: int = 503,
                 style: str = "mixed") -> None:
        self.nonsense, self.delay, self.fail_first, self.fail_status, self.style = (
            nonsense, delay, fail_first, fail_status, style)
        self.requests: list[dict[str, Any]] = []
        """Every request: ``{"path", "headers", "body"}`` (the body parsed)."""
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedChatServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with owner._lock:
                    owner.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    failing = len(owner.requests) <= owner.fail_first
                if owner.delay:
                    time.sleep(owner.delay)
                if self.path != "/v1/chat/completions" or not isinstance(body, dict):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if failing:
                    return self._send(owner.fail_status, {"error": {"message": "scripted failure"}})
                reply = owner.answer(body)
                self._send(200, {"id": "chatcmpl-test", "object": "chat.completion", "model": body.get("model"),
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": reply}}],
                                 "usage": {"prompt_tokens": 100, "completion_tokens": 3, "total_tokens": 103}})

            def _send(self, code: int, data: dict[str, Any]) -> None:
                payload = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def answer(self, body: dict[str, Any]) -> str:
        """The reply to one request: a uniformly random legal move of the last list of legal moves, written in
        one of the forms a model uses (or, ``nonsense`` of the time, no move at all)."""
        messages = body.get("messages") or []
        key = json.dumps([messages, body.get("seed")], sort_keys=True).encode()
        rng = random.Random(hashlib.sha256(key).hexdigest())
        listed = [m["content"] for m in messages if m.get("role") == "user" and MOVE.search(m.get("content", ""))]
        moves = MOVE.findall(listed[-1]) if listed else []
        if not moves or rng.random() < self.nonsense:
            return rng.choice(["I am not sure.", "Let me think about the trumps first.", "", "42", "QQ"])
        number, move = rng.choice(moves)
        style = rng.choice(["move", "number", "sentence", "answer", "line"]) if self.style == "mixed" else self.style
        return {"move": move, "number": number, "sentence": f"I would play `{move}` here.",
                "answer": f"The trump is strong.\nAnswer: {move}", "line": f"{number}. {move}"}[style]
