"""Reading a big OTLP/JSON trace export in bounded memory (#34).

    python bench/traces.py [--mb 50] [--docs 40] [--layout jsonl|document|split]

Writes an export of about ``--mb`` megabytes (RAG traces: a root CHAIN span, two RETRIEVER
spans of ``--docs`` documents each, a RERANKER, an LLM span) and reads it with
``noisegauge.io.openinference.open_traces``, turning every trace into its sample. Prints the
file size, traces, seconds, and the peak resident memory of the reading process (a fresh
child process, so the writing does not count), beside the peak of ``json.load`` of the same
file for scale (``bench/results/traces.txt``). ``jsonl``: one request per 200 traces, each on a line; ``document``: one
pretty-printed request; ``split``: as jsonl, with each trace's LLM span in a second file.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

_WORDS = ["refund", "shipping", "plan", "warranty", "invoice", "battery", "router", "cable", "account", "order", "delivery", "price", "month", "year", "customer", "support", "policy"]


def _attr(key: str, value: object) -> dict[str, object]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _trace(t: int, docs: int) -> tuple[list[dict[str, object]], dict[str, object]]:
    tid = f"{t:032x}"
    base = 1_700_000_000_000_000_000 + t * 10_000

    def span(n: int, name: str, kind: str, attrs: list[dict[str, object]],
             parent: int | None = 0) -> dict[str, object]:
        out: dict[str, object] = {"traceId": tid, "spanId": f"{t * 8 + n:016x}", "name": name,
                                  "startTimeUnixNano": str(base + n),
                                  "endTimeUnixNano": str(base + n + 5),
                                  "attributes": [_attr("openinference.span.kind", kind), *attrs]}
        if parent is not None:
            out["parentSpanId"] = f"{t * 8 + parent:016x}"
        return out

    def documents(prefix: str, start: int) -> list[dict[str, object]]:
        out = []
        for i in range(docs):
            words = " ".join(_WORDS[(start + i + k) % len(_WORDS)] for k in range(24))
            out += [_attr(f"{prefix}.{i}.document.id", f"doc-{start + i}"),
                    _attr(f"{prefix}.{i}.document.content", f"Document {start + i}: {words}.")]
        return out

    spans = [
        span(0, "rag", "CHAIN", [_attr("input.value", f"Question {t} about refunds?"),
                                 _attr("output.value", "Refunds are accepted within 30 days.")],
             parent=None),
        span(1, "retrieve", "RETRIEVER", documents("retrieval.documents", t)),
        span(2, "retrieve", "RETRIEVER", documents("retrieval.documents", t + docs // 2)),
        span(3, "rerank", "RERANKER", documents("reranker.output_documents", t)[:8]),
    ]
    llm = span(4, "llm", "LLM", [_attr("llm.input_messages.0.message.role", "user"),
                                 _attr("llm.input_messages.0.message.content", "Question?")])
    return spans, llm


def _request(spans: list[dict[str, object]]) -> dict[str, object]:
    return {"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "bench")]},
                               "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}


def write(folder: Path, mb: float, docs: int, layout: str) -> tuple[int, int]:
    """The export under ``folder``; (bytes, traces)."""
    target = int(mb * 1_000_000)
    main, second = folder / "export.jsonl", folder / "late.jsonl"
    if layout == "document":
        main = folder / "export.json"
    written = traces = 0
    with main.open("w", encoding="utf-8") as f, second.open("w", encoding="utf-8") as g:
        if layout == "document":
            f.write('{"resourceSpans": [{"scopeSpans": [{"spans": [\n')
        while written < target:
            batch, late = [], []
            for _ in range(200):
                spans, llm = _trace(traces, docs)
                traces += 1
                (late if layout == "split" else spans).append(llm)
                batch += spans
            if layout == "document":
                text = ",\n".join(json.dumps(s, indent=1) for s in batch)
                f.write(("" if written == 0 else ",\n") + text)
            else:
                text = json.dumps(_request(batch)) + "\n"
                f.write(text)
                if late:
                    g.write(json.dumps(_request(late)) + "\n")
            written += len(text)
        if layout == "document":
            f.write("\n]}]}]}\n")
    if layout != "split":
        second.unlink()
    return sum(p.stat().st_size for p in folder.iterdir()), traces


_CHILD = """
import json, resource, sys, time
from pathlib import Path
from noisegauge.io.openinference import open_traces
t0 = time.perf_counter()
if sys.argv[2] == "json.load":  # a .json file whole, a .jsonl one a line at a time
    n = sum(len(doc["resourceSpans"][0]["scopeSpans"][0]["spans"])
            for p in sorted(Path(sys.argv[1]).iterdir())
            for doc in ([json.load(p.open("rb"))] if p.suffix == ".json"
                        else map(json.loads, p.open("rb"))))
else:
    n = ok = 0
    for row in open_traces(sys.argv[1]):
        n += 1
        ok += row.sample is not None
print(json.dumps({"rows": n, "seconds": time.perf_counter() - t0,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _measure(folder: Path, how: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(folder), how], check=True,
                         capture_output=True, text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--docs", type=int, default=40)
    ap.add_argument("--layout", choices=("jsonl", "document", "split"), default="jsonl")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        size, traces = write(folder, args.mb, args.docs, args.layout)
        ours = _measure(folder, "open_traces")
        whole = _measure(folder, "json.load")
    print(f"export: {size / 1e6:.1f} MB, {traces} traces, layout {args.layout}, "
          f"{args.docs} documents per retriever")
    print(f"open_traces: {ours['rows']:.0f} rows in {ours['seconds']:.1f} s, "
          f"peak RSS {ours['peak_mb']:.0f} MB")
    if whole is not None:
        print(f"plain json (whole .json, .jsonl per line; no grouping, for scale): {whole['seconds']:.1f} s, "
              f"peak RSS {whole['peak_mb']:.0f} MB")
    print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
