"""A fake server that behaves like llama-cpp-python's (``python -m llama_cpp.server``, 0.3.x)
towards noisegauge, so tests cover what a real local server does without building it.

What it copies (measured on llama-cpp-python 0.3.36 with Qwen2.5 0.5B/1.5B instruct GGUFs;
``bench/real_server.py`` runs the real one):

- ``response_format`` ``json_schema`` (or any type but ``text``/``json_object``) gets
  **HTTP 500** with the pydantic validation error the real server sends;
- ``{"type": "json_object", "schema": ...}`` is accepted and the answer follows the schema;
- ``json_object`` without a schema is valid JSON in the shape a small model drifts to: a
  flat ``{"p1": "contradicted"}`` when each premise lists one claim, else a list of
  ``{"premise", "claim", "verdict"}`` records;
- plain text is prefixed with a line of chatter ("Mark the id of each claim:");
- one slot, first come first served (the server's anyio lock): requests are answered one at
  a time (``service_time`` seconds each) and queue inside the server; a request whose
  client gave up while it was queued is dropped when its turn comes (the real server checks
  ``request.is_disconnected()`` then), while one that was already running runs to the end;
- ``GET /v1/models`` lists the GGUF path, ``owned_by: "me"``; any model name is accepted.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from typing import Any

from .children import spawn, stop
from .fake_openai import FakeOpenAIServer, FakeRequest, Responder, _Handler, _Server

__all__ = ["LlamaCppPythonServer", "RealLlamaServer", "llama_cpp_validation_error"]


def llama_cpp_validation_error(value: object) -> dict[str, Any]:
    """The body llama-cpp-python answers an unsupported ``response_format`` type with."""
    detail = (f"1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', "
              f"'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
              f"'input': {value!r}, 'ctx': {{'expected': \"'text' or 'json_object'\"}}}}\n\n"
              f"  File \"llama_cpp/server/app.py\", line 376, in create_chat_completion\n"
              f"    POST /v1/chat/completions")
    return {"error": {"message": detail, "type": "internal_server_error", "param": None,
                      "code": None}}


def _gone(connection: socket.socket | None) -> bool:
    """Whether the client closed ``connection`` (readable, and reading would give EOF)."""
    if connection is None:
        return False
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _drift(answer: str) -> str:
    """A schema-less JSON answer reshaped the way small models shape it."""
    try:
        value = json.loads(answer)
    except ValueError:
        return answer
    if not isinstance(value, dict) or not value or not all(
            k.startswith("p") and isinstance(v, dict) for k, v in value.items()):
        return answer  # not a verdict answer: claims come back as asked
    if all(len(row) == 1 for row in value.values()):
        return json.dumps({p: next(iter(row.values())) for p, row in value.items()})
    return json.dumps([{"premise": p, "claim": c, "verdict": v}
                       for p, row in value.items() for c, v in row.items()])


class LlamaCppPythonServer(FakeOpenAIServer):
    """``FakeOpenAIServer`` with llama-cpp-python's manners (module docstring)."""

    def __init__(self, responder: Responder | None = None, *, service_time: float = 0.0,
                 model_path: str = "/models/qwen2.5-1.5b-instruct-q4_k_m.gguf",
                 **options: Any) -> None:
        super().__init__(responder, **options)
        self.service_time = service_time  #: seconds the single slot spends on each request
        self.model_path = model_path
        self.served: list[tuple[int, float, float]] = []  #: (seq, start, end) per answer
        self.arrived: dict[int, float] = {}  #: seq -> when the request reached the server
        self.dropped: list[int] = []  #: requests whose client was gone when their turn came
        self._turns = threading.Condition()
        self._tickets = 0
        self._serving = 0
        self._local = threading.local()

    def start(self, port: int = 0) -> LlamaCppPythonServer:
        server = self

        class Handler(_Handler):
            owner = server

            def do_POST(self) -> None:
                server._local.connection = self.connection  # to see a client that left
                super().do_POST()

        self._httpd = _Server(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                        daemon=True, name="fake-llama-cpp")
        self._thread.start()
        return self

    def model_list(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": self.model_path, "object": "model",
                                            "owned_by": "me", "permissions": []}]}

    def _answer(self, request: FakeRequest) -> tuple[int, dict[str, Any], dict[str, str]]:
        self.arrived[request.seq] = time.monotonic()
        fmt = request.body.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind is not None and kind not in ("text", "json_object"):
            return 500, llama_cpp_validation_error(kind), {}
        with self._turns:  # one slot, in arrival order
            ticket = self._tickets
            self._tickets += 1
            self._turns.wait_for(lambda: self._serving == ticket)
        try:
            if _gone(getattr(self._local, "connection", None)):
                self.dropped.append(request.seq)
                return 400, {"detail": "Client closed request"}, {}
            start = time.monotonic()
            if self.service_time:
                time.sleep(self.service_time)
            status, body, headers = super()._answer(request)
            self.served.append((request.seq, start, time.monotonic()))
        finally:
            with self._turns:
                self._serving += 1
                self._turns.notify_all()
        if status == 200 and isinstance(fmt, dict) and "schema" in fmt:
            return status, body, headers  # the schema is enforced: the answer follows it
        for choice in body.get("choices", []):
            message = choice["message"]
            if kind == "json_object":
                message["content"] = _drift(message["content"])
            else:
                message["content"] = "Mark the id of each claim:\n" + message["content"]
        return status, body, headers


class RealLlamaServer:
    """The real llama-cpp-python server (``python -m llama_cpp.server``) on 127.0.0.1, as a
    context manager: started with ``python`` (an interpreter that has
    ``llama-cpp-python[server]``) on ``model`` (a GGUF file), stopped on exit.

    ``nice`` lowers its CPU priority (it competes with everything else on the machine).
    The server's output goes to ``log`` (a path) or is discarded.
    """

    def __init__(self, python: str, model: str, *, n_ctx: int = 4096, n_threads: int | None = None,
                 nice: int = 10, startup_timeout: float = 600.0, log: str | None = None) -> None:
        self.python = python
        self.model = model
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.nice = nice
        self.startup_timeout = startup_timeout
        self.log = log
        self.port = 0
        self._proc: Any = None
        self._out: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> RealLlamaServer:
        import os
        import shutil
        import subprocess
        import urllib.request

        with socket.socket() as sock:  # a free port
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        cmd = [self.python, "-m", "llama_cpp.server", "--model", self.model, "--host",
               "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx)]
        if self.n_threads:
            cmd += ["--n_threads", str(self.n_threads)]
        if self.nice and shutil.which("nice"):
            cmd = ["nice", "-n", str(self.nice), *cmd]
        self._out = open(self.log, "ab") if self.log else None
        out = self._out if self._out is not None else subprocess.DEVNULL
        # spawn: the server dies with this process, even when a test run is killed.
        self._proc = spawn(cmd, stdout=out, stderr=subprocess.STDOUT,
                           env={**os.environ, "NO_PROXY": "127.0.0.1"})
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self._proc.returncode} "
                                   f"(command: {' '.join(cmd)}; log: {self.log or 'discarded'})")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=5) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(1.0)
        self.__exit__()
        raise RuntimeError(f"llama_cpp.server did not answer within {self.startup_timeout:g} s")

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            stop(self._proc, grace=30)
        self._proc = None
        if self._out is not None:
            self._out.close()
            self._out = None
