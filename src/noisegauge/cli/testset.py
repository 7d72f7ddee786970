"""``noisegauge testset DOCS… --out GOLDEN.jsonl``: a golden set drafted from documents, from
given questions (``--questions``) or a production log (``--from-log``), or from questions
aimed at the corpus's look-alike pairs; every row a draft a person checks (``review``).

Exit codes: 0 written; 2 bad invocation or input (one line naming the file and the fix).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

from ..errors import NoiseGaugeError
from ..infra.outputs import replacing
from ..infra.secrets import register_secret
from .console import cli_logging, error, note, quiet_option
from .paths import refuse_clobber

__all__ = ["testset"]


@click.command(context_settings={"show_default": True})
@click.argument("docs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="GOLDEN.jsonl to write (a row a question; see docs/reference/golden.md).")
@click.option("--questions", "questions", type=click.Path(path_type=Path, dir_okay=False),
              help="Questions: a line each (.txt), or JSONL/CSV rows with user_input.")
@click.option("--from-log", "log", type=click.Path(path_type=Path, dir_okay=False),
              help="A production log: rows with user_input, response, retrieved_contexts "
                   "(optional retrieved_context_ids); a row per log row, its chunks from the log. "
                   "A chat log too: user_input a conversation, or history beside it (the row "
                   "keeps the turns).")
@click.option("--generator", "generator_spec", metavar="SPEC",
              help="A chat model that writes questions and references (openai:MODEL); "
                   "without it, an offline template writes the questions and references are "
                   "extractive.")
@click.option("--generator-base-url", help="Endpoint of the generator (else OPENAI_BASE_URL).")
@click.option("--generator-api-key", help="API key of the generator (else OPENAI_API_KEY).")
@click.option("--n", "n", type=click.IntRange(min=1), default=30,
              help="Questions to write when neither --questions nor --from-log is given.")
@click.option("--seed", type=int, default=0, help="Which look-alike pairs are asked first.")
@click.option("--judge", "judge_spec", default="lexical",
              help="Judge that checks references and traps: lexical, openai:MODEL, nli:PATH.")
@click.option("--judge-base-url", help="Endpoint of an OpenAI-compatible judge.")
@click.option("--judge-api-key", help="API key of the judge (else OPENAI_API_KEY).")
@click.option("--cache", "cache_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Judge cache file (default: $NOISEGAUGE_CACHE or the user cache directory).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the judge cache.")
@quiet_option
def testset(docs: tuple[Path, ...], out: Path, questions: Path | None, log: Path | None,
            generator_spec: str | None, generator_base_url: str | None,
            generator_api_key: str | None, n: int, seed: int, judge_spec: str,
            judge_base_url: str | None, judge_api_key: str | None, cache_path: Path | None,
            no_cache: bool, quiet: bool) -> None:
    """Draft a golden set (GOLDEN.jsonl) from DOCS: files or folders of .txt/.md/.html
    documents, or .jsonl/.json/.csv/.parquet tables of chunks with a text column.

    Each row holds the question, a reference drawn only from the chunks that hold the
    answer, and traps (look-alike, conflicting, topical chunks) that do not; a question the
    corpus does not answer gets status no_answer and no reference. Rows are drafts
    (reviewed: false): check them with `noisegauge review GOLDEN.jsonl`.
    """
    if questions is not None and log is not None:
        raise click.UsageError("--questions and --from-log contradict each other: give one")
    if not docs and log is None:
        raise click.UsageError("give DOCS (files or folders of documents), or --from-log LOG")
    if no_cache and cache_path is not None:
        raise click.UsageError("--cache and --no-cache contradict each other")
    refuse_clobber({"--out": out}, {"--questions": questions, "--from-log": log,
                                    **{f"DOCS {d}": d for d in docs if d.is_file()}})
    with cli_logging(quiet):
        try:
            rows = _build(docs, questions, log, generator_spec, generator_base_url,
                          generator_api_key, n, seed, judge_spec, judge_base_url,
                          judge_api_key, cache_path, no_cache)
            from ..testset.questions import dumps
            out.parent.mkdir(parents=True, exist_ok=True)
            with replacing(out) as tmp, open(tmp, "w", encoding="utf-8") as f:
                for r in rows:
                    f.write(dumps(r.to_record()) + "\n")
        except NoiseGaugeError as exc:
            error(str(exc))
            sys.exit(2)
        except OSError as exc:
            error(f"cannot write --out {out}: {exc.strerror or exc}")
            sys.exit(2)
    if not quiet:
        status = Counter(r.status for r in rows)
        kinds = Counter(d.kind for r in rows for d in r.distractors)
        trapped = sum(1 for r in rows if r.distractors)
        note(f"{len(rows)} rows -> {out}: {status['drafted']} drafted, {status['conflict']} "
             f"with conflicting chunks to settle, {status['no_answer']} with no answer found; "
             f"{trapped} with a trap ({kinds['look-alike']} look-alike, {kinds['conflicting']} "
             f"conflicting, {kinds['topical']} topical)")
        note(f"every row is a draft: check them with `noisegauge review {out}`")


def _build(docs: tuple[Path, ...], questions: Path | None, log: Path | None,
           generator_spec: str | None, generator_base_url: str | None,
           generator_api_key: str | None, n: int, seed: int, judge_spec: str,
           judge_base_url: str | None, judge_api_key: str | None, cache_path: Path | None,
           no_cache: bool) -> list[Any]:
    from .._async import run_sync
    from ..infra.store import resolve_cache
    from ..judges.cached import CachedJudge
    from ..judges.registry import get_judge
    from ..testset import abuild_testset
    from ..testset.generate import make_writer

    settings = {k: v for k, v in (("base_url", judge_base_url), ("api_key", judge_api_key))
                if v is not None}
    register_secret(judge_api_key)
    register_secret(generator_api_key)
    try:
        judge: Any = get_judge(judge_spec, **settings)
    except TypeError as exc:
        raise click.UsageError(f"judge {judge_spec!r} does not take --judge-base-url or "
                               f"--judge-api-key ({exc})") from exc
    store = None if no_cache else resolve_cache(cache_path if cache_path is not None else None)
    if store is not None:
        judge = CachedJudge(judge, store)
    writer = (make_writer(generator_spec, base_url=generator_base_url,
                          api_key=generator_api_key, seed=seed)
              if generator_spec else None)

    async def go() -> list[Any]:
        try:
            return await abuild_testset(list(docs), questions=questions, log=log, judge=judge,
                                        generator=writer, generator_spec=generator_spec, n=n,
                                        seed=seed, judge_name=judge_spec)
        finally:
            if writer is not None:
                await writer.aclose()
            close = getattr(judge, "aclose", None)
            if callable(close):
                await close()

    return run_sync(go())
