"""Identity from content: a changed prompt, schema, code or weight file changes the judge's
identity, hence every cache key, and never replays a stale answer."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import _identity
from noisegauge._identity import content_digest, file_digest
from noisegauge.judges import judge_identity
from noisegauge.judges.lexical import LexicalJudge
from noisegauge.judges.llm import prompts
from noisegauge.judges.llm.judge import OpenAIJudge
from noisegauge.judges.nli.support import fingerprint


class Probe:
    """Stands in for a judge: its identity() plus the content of what it lists."""

    def __init__(self, sources: tuple[Any, ...]) -> None:
        self.identity_sources = sources

    def identity(self) -> dict[str, Any]:
        return {"judge": "probe"}


def _texts(module: Any) -> list[str]:
    return [name for name, value in vars(module).items()
            if not name.startswith("__") and _identity._is_text(value)]


def test_every_prompt_text_of_the_llm_judge_is_in_its_identity(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Change any text the LLM judge sends (system prompts, verdict names...) and the identity
    changes; a prompt added later is covered without touching this test."""
    names = _texts(prompts)
    assert {"_EXTRACT_SYSTEM", "_CHECK_SYSTEM", "VERDICT_VALUES"} <= set(names)
    probe = Probe(OpenAIJudge.identity_sources)
    before = judge_identity(probe)
    for name in names:
        value = getattr(prompts, name)
        changed = value + " " if isinstance(value, str) else [*value, "x"]
        with monkeypatch.context() as m:
            m.setattr(prompts, name, changed)
            assert judge_identity(probe) != before, name
    assert judge_identity(probe) == before  # and it is a pure function of the content


def test_the_real_llm_judge_identity_carries_the_prompt_digest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    require_extra("openai")
    from noisegauge import get_judge

    judge = get_judge("openai:m", base_url="http://127.0.0.1:9/v1", api_key="sk-test-123456")
    before = judge_identity(judge)
    assert before["content"] == content_digest(*OpenAIJudge.identity_sources)
    monkeypatch.setattr(prompts, "_CHECK_SYSTEM", prompts._CHECK_SYSTEM.replace("strict", "kind"))
    assert judge_identity(judge)["content"] != before["content"]


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> Any:
    (tmp_path / "probe_prompts.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("probe_prompts", None)
    return importlib.import_module("probe_prompts")


PROMPT_MODULE = '''
def schema(ids):
    return {"type": "object", "required": list(ids), "additionalProperties": False}
'''


def test_an_edited_schema_builder_changes_the_digest(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Schemas built by functions are covered by the module's source bytes."""
    module = _module(tmp_path, monkeypatch, PROMPT_MODULE)
    before = content_digest(module)
    edited = PROMPT_MODULE.replace("False", "True ")  # same length: size alone cannot tell
    path = tmp_path / "probe_prompts.py"
    path.write_text(edited)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert content_digest(module) != before
    path.write_text(PROMPT_MODULE)
    assert content_digest(module) == before


def test_lexical_judge_identity_follows_its_code_and_weights() -> None:
    ident = judge_identity(LexicalJudge())
    assert ident["content"] == content_digest("noisegauge.judges.lexical", "noisegauge.textkit")
    assert judge_identity(LexicalJudge()) == ident


def test_nli_fingerprint_reads_weight_bytes_not_names_and_sizes(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    weights = model / "model.safetensors"
    weights.write_bytes(b"A" * 4096)
    (model / "config.json").write_text("{}")
    first = fingerprint(str(model), "{}", None)
    weights.write_bytes(b"B" * 4096)  # new weights of the same size
    os.utime(weights, ns=(0, weights.stat().st_mtime_ns + 1_000_000))
    second = fingerprint(str(model), "{}", None)
    assert second != first
    weights.write_bytes(b"A" * 4096)
    assert fingerprint(str(model), "{}", None) == first
    assert fingerprint("org/name", "{}", "abc123") != fingerprint("org/name", "{}", "abc124")


def _overwrite_keeping_stamp(path: Path, data: bytes) -> None:
    """New bytes, same size, same mtime and inode: only a re-read could notice."""
    st = path.stat()
    with path.open("r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_file_digests_are_remembered_across_processes(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      isolated_cache: Path) -> None:
    big = tmp_path / "weights.bin"
    big.write_bytes(b"\x01" * (2 << 20))
    digest = file_digest(big)
    memo = isolated_cache.parent / "file-digests.json"
    assert memo.is_file() and str(big.resolve()) in memo.read_text()
    monkeypatch.setattr(_identity, "_MEMO", {})  # a new process: only the memo file is left
    monkeypatch.setattr(_identity, "_MEMO_LOADED", set())
    _overwrite_keeping_stamp(big, b"\x02" * (2 << 20))
    assert file_digest(big) == digest  # not read again: the stamp did not change
    os.utime(big, ns=(0, big.stat().st_mtime_ns + 1_000_000))
    assert file_digest(big) != digest  # a new stamp is read


def test_no_memo_file_when_the_cache_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOISEGAUGE_CACHE", "off")
    monkeypatch.setattr(_identity, "_MEMO", {})
    monkeypatch.setattr(_identity, "_MEMO_LOADED", set())
    big = tmp_path / "w.bin"
    big.write_bytes(b"\x03" * (2 << 20))
    file_digest(big)
    assert not any(p.name == "file-digests.json" for p in tmp_path.rglob("*"))


def test_the_attribution_prompt_counts_only_where_it_is_used(
        monkeypatch: pytest.MonkeyPatch) -> None:
    require_extra("openai")
    from noisegauge import get_judge
    from noisegauge.judges.llm import attribution

    url = {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-test-123456"}
    plain, tracing = get_judge("openai:m", **url), get_judge("openai:m", misattribution="llm", **url)
    before = judge_identity(plain), judge_identity(tracing)
    monkeypatch.setattr(attribution, "_SYSTEM", attribution._SYSTEM + " ")
    assert judge_identity(plain) == before[0]  # extraction and checks keep their cache
    assert judge_identity(tracing) != before[1]
