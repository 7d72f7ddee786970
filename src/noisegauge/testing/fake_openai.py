"""A scriptable OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks.

It speaks enough of ``POST /v1/chat/completions`` for the official SDK: choices (``n``),
``finish_reason``, token usage, ``response_format`` (json_schema / json_object, either of
which it can refuse with HTTP 400), ``max_tokens`` (longer answers are cut and marked
``finish_reason="length"``), bearer-key checks, latency, and injected faults.

    with FakeOpenAIServer(latency=0.1) as server:
        judge = get_judge("openai:fake", base_url=server.url, api_key="sk-test")
        ...
        server.requests            # every request, in arrival order, for assertions

Token counts use one documented approximation everywhere: ``ceil(chars / 4)`` of every
message's content (plus the JSON Schema, when one is sent) for the prompt, and of each
answer for the completion.

The default responder (``judge_responder``) answers noisegauge's own judge prompts the way
a simple model would: claims are the sentences of the text; a claim is entailed by a
premise when most of its words occur in it. Other chats get the first sentence of the last
user message. Pass ``responder=`` for anything else: ``(request, choice_index) -> str``.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..textkit.sentences import content_words, sentences

__all__ = [
    "FakeOpenAIServer",
    "FakeRequest",
    "Fault",
    "Responder",
    "count_tokens",
    "drop_ids",
    "judge_responder",
]


def count_tokens(text: str) -> int:
    """The token approximation used by the server: ceil(chars / 4)."""
    return -(-len(text) // 4)


@dataclass
class FakeRequest:
    """One request as the server saw it."""

    seq: int
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    #: HTTP status the server answered with (filled in when it replies).
    status: int = 0
    #: The fault applied to it, if any.
    fault: Fault | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def first_user(self) -> str:
        """The first user message (the task; later ones are follow-ups)."""
        return next((str(m.get("content", "")) for m in self.messages if m.get("role") == "user"), "")

    @property
    def last_user(self) -> str:
        return next((str(m.get("content", "")) for m in reversed(self.messages)
                     if m.get("role") == "user"), "")

    @property
    def mode(self) -> str:
        """``json_schema``, ``json_object`` or ``text`` (no response_format)."""
        fmt = self.body.get("response_format") or {}
        return str(fmt.get("type", "text")) if isinstance(fmt, dict) else "text"

    @property
    def schema(self) -> dict[str, Any] | None:
        fmt = self.body.get("response_format") or {}
        return fmt.get("json_schema", {}).get("schema") if self.mode == "json_schema" else None

    @property
    def prompt_tokens(self) -> int:
        text = "".join(str(m.get("content", "")) for m in self.messages)
        schema = self.schema
        return count_tokens(text) + (count_tokens(json.dumps(schema)) if schema else 0)


#: (request, choice index) -> answer text
Responder = Callable[[FakeRequest, int], str]


@dataclass
class Fault:
    """A scripted misbehaviour for the next matching request(s).

    ``status`` answers with that HTTP error (``retry_after`` seconds goes into Retry-After
    and retry-after-ms); ``delay`` stalls before answering (for timeouts); ``content``
    replaces the answer; ``transform`` rewrites it; ``finish_reason`` overrides it.
    ``when`` limits the fault to matching requests; it applies ``times`` times.
    """

    status: int | None = None
    retry_after: float | None = None
    delay: float = 0.0
    content: str | None = None
    transform: Callable[[str], str] | None = None
    finish_reason: str | None = None
    when: Callable[[FakeRequest], bool] | None = None
    times: int = 1
    body: dict[str, Any] | None = None  #: error body to send with ``status``
    drop: bool = False  #: close the connection without an answer (a crash mid-request)


def drop_ids(*ids: str) -> Callable[[str], str]:
    """A ``Fault.transform`` that removes the given keys at any depth of a JSON answer."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ids}
        return value

    return lambda text: json.dumps(strip(json.loads(text)))


_BLOCK = re.compile(r"<([pt]\d+)>\n(.*?)\n</\1>", re.DOTALL)
_CLAIM = re.compile(r"^(c\d+): (.*)$", re.MULTILINE)
_PAIRS = re.compile(r"^(p\d+): (.*)$", re.MULTILINE)
_ASKED = re.compile(r"^Ask: (.*)$", re.MULTILINE)


def _asked(task: str) -> dict[str, int]:
    """Text id -> questions wanted, from the extraction prompt's ``Ask:`` line."""
    found = _ASKED.search(task)
    pairs = (part.partition("=") for part in (found.group(1).split() if found else []))
    return {tid: int(n) for tid, _, n in pairs if n.isdigit()}


def overlap_verdict(premise: str, claim: str, threshold: float = 0.7) -> str:
    """``entailed`` when at least ``threshold`` of the claim's words occur in the premise."""
    words = content_words(claim)
    if not words:
        return "neutral"
    return "entailed" if len(words & content_words(premise)) / len(words) >= threshold else "neutral"


def judge_responder(verdict: Callable[[str, str], str] = overlap_verdict,
                    claims: Callable[[str], list[str]] = sentences) -> Responder:
    """Answers noisegauge's extraction and checking prompts like a (simple) model."""
    def respond(request: FakeRequest, choice: int) -> str:
        task = request.first_user
        blocks = dict(_BLOCK.findall(task))
        if "\nClaims:\n" in task and "\nJudge:\n" in task:
            listing, todo = task.split("\nClaims:\n", 1)[1].split("\nJudge:\n", 1)
            listed = dict(_CLAIM.findall(listing))
            return json.dumps({pid: {cid: verdict(blocks[pid], listed[cid]) for cid in cids.split()}
                               for pid, cids in _PAIRS.findall(todo)})
        if blocks and all(key.startswith("t") for key in blocks):
            asks = _asked(task)
            out: dict[str, Any] = {tid: claims(text) for tid, text in blocks.items()}
            for tid, n in asks.items():  # Answer Relevancy: questions written by rules
                from ..scoring.questions import claim_question, is_noncommittal
                out[tid] = {"claims": out[tid], "noncommittal": is_noncommittal(blocks[tid]),
                            "questions": [claim_question(c) for c in out[tid]][:n]}
            return json.dumps(out)
        found = sentences(request.last_user)
        return found[0] if found else ""
    return respond


class FakeOpenAIServer:
    """A threaded HTTP server; use as a context manager or call ``start()``/``stop()``."""

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0,
                 api_key: str | None = None, json_schema: bool = True, json_object: bool = True,
                 report_usage: bool = True, chatty_text: bool = False,
                 max_choices: int | None = None) -> None:
        self.responder = responder or judge_responder()
        self.latency = latency
        self.api_key = api_key          #: when set, other bearer keys get HTTP 401
        self.json_schema = json_schema  #: False: HTTP 400 for response_format json_schema
        self.json_object = json_object  #: False: HTTP 400 for response_format json_object
        self.report_usage = report_usage
        self.chatty_text = chatty_text  #: plain-text mode wraps answers in prose + a code fence
        self.max_choices = max_choices  #: answer at most this many choices, whatever ``n`` asks
        #: Fault scenarios (see ``chaos``): after this many chat requests, every later one
        #: is dropped unanswered, as by a server that died; answers and headers that echo
        #: the caller's key; the only models served (others get 404 model_not_found).
        self.die_after: int | None = None
        self.echo_key = False
        self.models: set[str] | None = None
        self._chaos: tuple[float, random.Random, float] | None = None
        self.in_flight = 0              #: chat requests being answered right now
        self.max_in_flight = 0          #: the most that were ever answered at once
        self.requests: list[FakeRequest] = []
        self.faults: list[Fault] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL to give the SDK (``http://127.0.0.1:PORT/v1``)."""
        if self._httpd is None:
            raise RuntimeError("the fake server is not running; call start()")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def add_fault(self, fault: Fault | None = None, /, **kwargs: Any) -> Fault:
        """Queue a fault: ``server.add_fault(status=429, retry_after=0.01)``."""
        fault = fault or Fault(**kwargs)
        with self._lock:
            self.faults.append(fault)
        return fault

    def chaos(self, rate: float, *, seed: int = 0, hang: float = 2.0) -> None:
        """Fail a ``rate`` share of chat requests at random (seeded), each with one of: 429
        with a short Retry-After, 500, a dropped connection, a hang of ``hang`` seconds,
        unreadable JSON, or an answer cut at half with ``finish_reason="length"``."""
        self._chaos = (rate, random.Random(seed), hang)

    def _chaos_fault(self) -> Fault | None:
        if self._chaos is None:
            return None
        rate, rng, hang = self._chaos
        if rng.random() >= rate:
            return None
        return rng.choice([
            Fault(status=429, retry_after=0.02), Fault(status=500), Fault(drop=True),
            Fault(delay=hang), Fault(content='{"t1": ["unfinished'),
            Fault(finish_reason="length", transform=lambda text: text[: len(text) // 2])])

    def model_list(self) -> dict[str, Any]:
        """The body of ``GET /v1/models``."""
        ids = sorted(self.models) if self.models is not None else ["fake"]
        return {"object": "list", "data": [{"id": m, "object": "model"} for m in ids]}

    def chat_requests(self) -> list[FakeRequest]:
        """Requests to the chat-completions route, in arrival order."""
        return [r for r in self.requests if r.path.split("?")[0].endswith("/chat/completions")]

    def start(self, port: int = 0) -> FakeOpenAIServer:
        """Serve on 127.0.0.1:``port`` (0: any free port) from a background thread."""
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = _Server(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True,
                                        name="fake-openai")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (runs in server threads) -----------------------------------

    def _take_fault(self, request: FakeRequest) -> Fault | None:
        with self._lock:
            if self.die_after is not None and len(self.chat_requests()) > self.die_after:
                return Fault(drop=True)
            for fault in self.faults:
                if fault.times > 0 and (fault.when is None or fault.when(request)):
                    fault.times -= 1
                    return fault
            return self._chaos_fault()

    def _answer(self, request: FakeRequest) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, JSON body, extra headers) for a chat request."""
        fault = request.fault
        if fault is not None and fault.status is not None:
            headers = {}
            if fault.retry_after is not None:
                headers = {"retry-after": str(fault.retry_after),
                           "retry-after-ms": str(int(fault.retry_after * 1000))}
            return fault.status, fault.body or _error(f"injected HTTP {fault.status}"), headers
        model = request.body.get("model")
        if self.models is not None and model not in self.models:
            return 404, _error(f"The model `{model}` does not exist", "model_not_found"), {}
        if not self.json_schema and request.mode == "json_schema":
            return 400, _error("response_format type 'json_schema' is not supported"), {}
        if not self.json_object and request.mode == "json_object":
            return 400, _error("response_format type 'json_object' is not supported"), {}
        n = int(request.body.get("n") or 1)
        if self.max_choices is not None:
            n = min(n, self.max_choices)
        limit = request.body.get("max_tokens") or request.body.get("max_completion_tokens")
        choices, completion = [], 0
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        for i in range(n):
            content = self.responder(request, i)
            if self.echo_key:
                content = _echo(content, key)
            finish = "stop"
            if fault is not None and fault.transform is not None:
                content = fault.transform(content)
            if fault is not None and fault.content is not None:
                content = fault.content
            if request.mode == "text" and self.chatty_text:
                content = f"Sure! Here is the result:\n```json\n{content}\n```\nHope this helps."
            if limit is not None and count_tokens(content) > int(limit):
                content, finish = content[: int(limit) * 4], "length"
            if fault is not None and fault.finish_reason is not None:
                finish = fault.finish_reason
            completion += count_tokens(content)
            choices.append({"index": i, "finish_reason": finish, "logprobs": None,
                            "message": {"role": "assistant", "content": content}})
        body: dict[str, Any] = {"id": f"chatcmpl-fake-{request.seq}", "object": "chat.completion",
                                "created": int(time.time()), "model": request.body.get("model"),
                                "choices": choices}
        if self.report_usage:
            body["usage"] = {"prompt_tokens": request.prompt_tokens,
                             "completion_tokens": completion,
                             "total_tokens": request.prompt_tokens + completion}
        return 200, body, ({"x-echo-key": key} if self.echo_key else {})


def _echo(content: str, key: str) -> str:
    """The answer with the caller's key slipped in: into every claim list of an extraction
    answer (so it would reach claims, the cache and results), else appended."""
    try:
        data = json.loads(content)
    except ValueError:
        return f"{content} (key {key})"
    if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
        return json.dumps({k: [*v, f"The API key is {key}."] for k, v in data.items()})
    return content + f" // key {key}"


def _embeddings(request: FakeRequest) -> dict[str, Any]:
    """``POST /v1/embeddings``: deterministic 64-dimension vectors of word and character
    n-grams (``HashingEmbedder``), so texts that share words are close."""
    from ..embeddings.hashing import HashingEmbedder

    raw = request.body.get("input")
    texts = [raw] if isinstance(raw, str) else [str(t) for t in raw or []]
    emb = HashingEmbedder(dim=64)
    tokens = sum(count_tokens(t) for t in texts)
    return {"object": "list", "model": request.body.get("model"),
            "data": [{"object": "embedding", "index": i, "embedding": emb.vector(t)}
                     for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _error(message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 drops bursts of concurrent connects (the client then waits
    # ~1 s to retry), which would distort every latency measurement.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client killed mid-request (the chaos tests do that) is not the server's error.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeOpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK expects
    # Headers and body go out in two writes; with Nagle's algorithm the body would wait for
    # the client's delayed ACK (~40 ms), which would swamp any latency being simulated.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/") == "/v1/models":
            self._send(200, self.owner.model_list(), {})
        else:
            self._send(404, _error(f"no route {self.path}"), {})

    def do_POST(self) -> None:
        owner = self.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with owner._lock:
            request = FakeRequest(seq=len(owner.requests), path=self.path, body=body,
                                  headers={k.lower(): v for k, v in self.headers.items()})
            owner.requests.append(request)
        # OpenAI's routes, and Azure's per-deployment ones (/openai/deployments/D/...).
        route = self.path.split("?")[0].rstrip("/")
        azure = route.startswith("/openai/deployments/")
        kind = next((k for k in ("chat/completions", "embeddings")
                     if route == f"/v1/{k}" or (azure and route.endswith(f"/{k}"))), None)
        if kind is None:
            request.status = 404
            self._send(404, _error(f"no route {self.path}"), {})
            return
        auth = self.headers.get("Authorization", "")
        azure_key = self.headers.get("api-key")  # Azure sends its key in this header
        if (owner.api_key is not None and auth != f"Bearer {owner.api_key}"
                and azure_key != owner.api_key):
            request.status = 401
            # Echo the key like some real servers do, so redaction is tested for real.
            self._send(401, _error(f"Incorrect API key provided: {auth.removeprefix('Bearer ')}",
                                   "invalid_api_key"), {})
            return
        if kind == "embeddings":
            request.status = 200
            self._send(200, _embeddings(request), {})
            return
        request.fault = owner._take_fault(request)
        if request.fault is not None and request.fault.drop:
            request.status = -1  # no answer at all: the client sees the connection close
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        with owner._lock:
            owner.in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
        try:
            delay = owner.latency + (request.fault.delay if request.fault else 0.0)
            if delay:
                time.sleep(delay)
            try:
                request.status, answer, headers = owner._answer(request)
            except Exception as exc:
                request.status, answer, headers = 500, _error(f"fake responder failed: {exc!r}"), {}
        finally:
            with owner._lock:
                owner.in_flight -= 1
        self._send(request.status, answer, headers)


def main(argv: list[str] | None = None) -> None:
    """``python -m noisegauge.testing --port 8000``: serve until interrupted."""
    import argparse

    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible chat server.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--api-key", default=None, help="require this bearer key")
    parser.add_argument("--no-json-schema", action="store_true", help="refuse json_schema")
    parser.add_argument("--no-json-object", action="store_true", help="refuse json_object")
    parser.add_argument("--chatty-text", action="store_true",
                        help="wrap plain-text answers in prose and a code fence")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency=args.latency, api_key=args.api_key,
                              json_schema=not args.no_json_schema,
                              json_object=not args.no_json_object, chatty_text=args.chatty_text)
    server.start(args.port)
    print(f"fake OpenAI-compatible server at {server.url} (Ctrl-C stops it)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
