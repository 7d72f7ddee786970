"""The review app over real HTTP: uvicorn on a loopback socket, no mocks. The token guards
every path, writes must come from the page's own origin, only 127.0.0.1 is bound, and every
accepted click is in LABELS at once."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra

require_extra("review")

from noisegauge.people.labels import LabelFile, read_labels  # noqa: E402
from noisegauge.testing.children import spawn, stop  # noqa: E402
from people_helpers import example_rows, review_server  # noqa: E402
from report_helpers import ROOT, write_jsonl  # noqa: E402


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return example_rows()


def _request(url: str, *, data: Any = None, headers: dict[str, str] | None = None,
             method: str | None = None) -> tuple[int, bytes]:
    body = None if data is None else json.dumps(data).encode()
    req = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _first_event(state: Any) -> dict[str, Any]:
    s = json.loads(_request(state.url + "api/state")[1])["samples"][0]
    return {"kind": "chunk", "id": s["id"], "digest": s["digest"], "chunk": 0, "relevant": True}


def test_token_guards_every_path(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    with review_server(rows, tmp_path / "l.jsonl", n=5) as state:
        root = f"http://127.0.0.1:{state.port}/"
        assert _request(state.url)[0] == 200
        for path in ("", "api/state", "x/", "x/api/state", state.token[:-1] + "/api/state",
                     state.token + "x/api/state"):
            assert _request(root + path)[0] == 404, path
        status, _ = _request(root + "wrong/api/label", data=_first_event(state),
                             headers={"Content-Type": "application/json",
                                      "Origin": root.rstrip("/")})
        assert status == 404
        assert not (tmp_path / "l.jsonl").read_text().count('"kind": "chunk"')


def test_writes_need_the_pages_origin(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    with review_server(rows, tmp_path / "l.jsonl", n=5) as state:
        event = _first_event(state)
        own = f"http://127.0.0.1:{state.port}"
        post = state.url + "api/label"
        json_type = {"Content-Type": "application/json"}
        assert _request(post, data=event, headers={**json_type, "Origin": "http://evil.test"})[0] == 403
        assert _request(post, data=event, headers={**json_type, "Origin": f"http://127.0.0.1:{state.port + 1}"})[0] == 403
        assert _request(post, data=event, headers=json_type)[0] == 403  # no Origin, no fetch metadata
        assert _request(post, data=event, headers={**json_type, "Sec-Fetch-Site": "cross-site"})[0] == 403
        assert _request(post, data=event, headers={"Content-Type": "text/plain", "Origin": own})[0] == 415
        assert _request(state.url, headers={"Host": "evil.test"})[0] == 403  # DNS rebinding
        assert read_labels(tmp_path / "l.jsonl").samples == {}
        status, body = _request(post, data=event, headers={**json_type, "Origin": own})
        assert status == 200, body
        assert json.loads(body)["labels"]["chunks"] == {"0": True}
        lab = read_labels(tmp_path / "l.jsonl")  # on disk before the answer came back
        assert lab.current(event["id"], event["digest"]).chunks == {0: True}
        same_site = {**json_type, "Sec-Fetch-Site": "same-origin"}
        assert _request(post, data={**event, "relevant": False}, headers=same_site)[0] == 200


def test_bad_events_are_refused_with_the_reason(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    with review_server(rows, tmp_path / "l.jsonl", n=5) as state:
        event = _first_event(state)
        headers = {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{state.port}"}
        post = state.url + "api/label"
        for bad, reason in (({**event, "digest": "0" * 16}, "changed since the page loaded"),
                            ({**event, "chunk": 99}, "out of range"),
                            ({**event, "id": "not-in-the-sample"}, "unknown sample"),
                            ({**event, "kind": "claim", "claim": 0, "label": "maybe"}, "label"),
                            ({**event, "kind": "claim", "claim": 0, "label": "wrong",
                              "chunks": [42]}, "chunk index")):
            status, body = _request(post, data=bad, headers=headers)
            assert status == 400 and reason in json.loads(body)["error"], (bad, body)
        events, _ = LabelFile(tmp_path / "l.jsonl").read()
        assert [e["kind"] for e in events] == ["session"]


def test_order_is_seeded_uniform_and_resumed(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    labels = tmp_path / "l.jsonl"
    with review_server(rows, labels, n=6, seed=11) as state:
        first = [s["id"] for s in json.loads(_request(state.url + "api/state")[1])["samples"]]
    from noisegauge.people.app import open_state

    again, _ = open_state(rows, labels, None, None)  # no --seed/--n: LABELS's session
    assert again.order == first and len(first) == 6 and again.seed == 11
    other, _ = open_state(rows, tmp_path / "m.jsonl", 6, 12)
    assert other.order != first
    ok_ids = {r["id"] for r in rows if r["status"] != "error"}
    assert set(first) <= ok_ids


def _listening(port: int) -> list[str]:
    """Local addresses listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, _, hexport = local.partition(":")
            if state == "0A" and int(hexport, 16) == port:
                found.append(addr)
    return found


def test_cli_prints_a_loopback_url_and_binds_loopback_only(rows: list[dict[str, Any]],
                                                           tmp_path: Path) -> None:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs /proc/net/tcp (Linux) to read the listening address")
    results = write_jsonl(tmp_path / "results.jsonl", rows)
    proc = spawn([sys.executable, "-m", "noisegauge", "review", str(results), "--labels",
                  str(tmp_path / "l.jsonl"), "--n", "4", "--seed", "3", "--no-browser"],
                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            m = re.search(r"open: (http://127\.0\.0\.1:(\d+)/[A-Za-z0-9_-]{20,}/)", line)
            url = m and m.group(1)
        assert url, proc.stderr.read() if proc.poll() is not None else "no URL printed"
        port = int(url.split(":")[2].split("/")[0])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _request(url)[0] != 200:
            time.sleep(0.1)
        assert _listening(port) == ["0100007F"]  # 127.0.0.1, nothing else
        other = [a for a in _own_addresses() if not a.startswith("127.")]
        for addr in other:
            with pytest.raises(OSError), socket.create_connection((addr, port), timeout=2):
                pass
    finally:
        stop(proc, grace=20)


def _own_addresses() -> list[str]:
    try:
        return list({info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None,
                                                                socket.AF_INET)})
    except OSError:
        return []


def test_missing_extra_names_the_install_line(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", rows)
    code = ("import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None; "
            "from noisegauge.cli.main import main; "
            f"main(['review', {str(results)!r}, '--labels', {str(tmp_path / 'l.jsonl')!r}, "
            "'--no-browser'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 2
    assert "pip install '.[review]'" in out.stderr
    assert not (tmp_path / "l.jsonl").exists()
