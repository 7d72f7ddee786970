"""The ``nli:`` judge, on tiny BERT classifiers built here (random weights, word-level
vocabulary); nothing is downloaded. Where a test needs known outputs, the model's
forward is replaced by a readable rule over the tokens of each (premise, claim) pair,
so the judge's own logic (windows, batching, ordering, merging, labels) is what runs.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import FakeJudge, NoiseSensitivity, Verdict, get_judge
from noisegauge.errors import InvalidInput, JudgeUnavailable, MissingDependency
from noisegauge.judges import judge_identity, metered
from noisegauge.judges.nli.judge import NLIJudge
from noisegauge.judges.nli.support import resolve_labels, split_windows
from noisegauge.samples import Sample
from noisegauge.scoring import ascore_sample

require_extra("nli")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

E, N, C = Verdict.ENTAILED, Verdict.NEUTRAL, Verdict.CONTRADICTED
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "false", "filler", "red", "is", "."]
VOCAB = {w: i for i, w in enumerate(SPECIAL + WORDS)}
ID2TOK = {i: w for w, i in VOCAB.items()}
STD = {0: "entailment", 1: "neutral", 2: "contradiction"}
MAX_LEN = 64  # -> 3 special tokens, 16 kept for the claim, windows of 45 overlapping by 11


def build_model(path: Path, id2label: dict[int, str] = STD, seed: int = 0) -> Path:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    tok = Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", model_max_length=MAX_LEN,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"])
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=MAX_LEN, num_labels=len(id2label),
                        id2label=id2label, label2id={v: k for k, v in id2label.items()},
                        initializer_range=0.5)  # wide random weights: outputs vary by input
    model = BertForSequenceClassification(config)
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model(tmp_path_factory.mktemp("nli-std"))


def load(path: Path, **kwargs: Any) -> NLIJudge:
    kwargs.setdefault("device", "cpu")
    kwargs.setdefault("extractor", "fake")
    judge = get_judge(f"nli:{path}", **kwargs)
    assert isinstance(judge, NLIJudge)
    return judge


def word_rule(premise: list[str], claim: list[str]) -> Verdict:
    """Entailed when every claim word is in the window; contradicted by the word 'false'."""
    words = [w for w in claim if w != "."]
    if words and set(words) <= set(premise):
        return E
    return C if "false" in premise else N


def script(monkeypatch: pytest.MonkeyPatch, judge: NLIJudge,
           rule: Callable[[list[str], list[str]], Verdict] = word_rule,
           delay: float = 0.0) -> dict[str, Any]:
    """Replace the model's forward by ``rule``; returns what it saw (threads, concurrency)."""
    seen: dict[str, Any] = {"threads": set(), "active": 0, "max_active": 0, "rows": 0}
    lock = threading.Lock()

    def forward(input_ids: Any, attention_mask: Any, **_: Any) -> SimpleNamespace:
        with lock:
            seen["active"] += 1
            seen["max_active"] = max(seen["max_active"], seen["active"])
        seen["threads"].add(threading.current_thread().name)
        time.sleep(delay)
        rows = []
        for ids, mask in zip(input_ids.tolist(), attention_mask.tolist(), strict=True):
            toks = [ID2TOK[i] for i, m in zip(ids, mask, strict=True) if m]
            sep = toks.index("[SEP]")
            logits = [0.0] * len(judge.labels)
            logits[judge.labels.index(rule(toks[1:sep], toks[sep + 1:-1]))] = 5.0
            rows.append(logits)
        seen["rows"] += len(rows)
        with lock:
            seen["active"] -= 1
        return SimpleNamespace(logits=torch.tensor(rows))

    monkeypatch.setattr(judge._model, "forward", forward)
    return seen


# -- labels -------------------------------------------------------------------------------

@pytest.mark.parametrize("id2label, expected", [
    ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, (E, N, C)),
    ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, (C, N, E)),  # roberta-large-mnli
    ({0: "contradiction", 1: "entailment", 2: "neutral"}, (C, E, N)),  # cross-encoder/nli-*
    ({0: "entailment", 1: "not_entailment"}, (E, N)),  # 2-class: never "contradicted"
    ({0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"}, (E, C, N)),  # FEVER checkers
])
def test_labels_are_read_from_the_config(id2label: dict[int, str],
                                         expected: tuple[Verdict, ...]) -> None:
    assert resolve_labels(id2label) == expected


def test_unnamed_labels_use_the_dataset_order_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="label_map"):
        assert resolve_labels({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}) == (E, N, C)
    with pytest.warns(UserWarning):
        assert resolve_labels({0: "LABEL_0", 1: "LABEL_1"}) == (E, N)


def test_unknown_labels_name_what_was_found_and_the_override() -> None:
    with pytest.raises(InvalidInput, match="label_map") as err:
        resolve_labels({0: "POSITIVE", 1: "NEGATIVE"})
    assert "POSITIVE" in str(err.value) and "NEGATIVE" in str(err.value)


def test_explicit_label_map_by_name_or_id() -> None:
    labels = {0: "POSITIVE", 1: "NEGATIVE"}
    assert resolve_labels(labels, {"positive": "ENTAILED", "NEGATIVE": "neutral"}) == (E, N)
    assert resolve_labels(labels, {0: "contradicted", 1: "entailment"}) == (C, E)
    with pytest.raises(InvalidInput, match="NEGATIVE"):  # every class must be covered
        resolve_labels(labels, {"POSITIVE": "ENTAILED"})
    with pytest.raises(InvalidInput, match="entailment"):  # something must mean entailment
        resolve_labels(labels, {"POSITIVE": "NEUTRAL", "NEGATIVE": "CONTRADICTED"})
    with pytest.raises(InvalidInput, match="unknown verdict"):
        resolve_labels(labels, {"POSITIVE": "yes", "NEGATIVE": "no"})


@pytest.mark.parametrize("id2label, verdict", [
    (STD, N),
    ({0: "contradiction", 1: "entailment", 2: "neutral"}, E),
    ({0: "not_entailment", 1: "entailment"}, E),
])
def test_the_models_label_order_decides_the_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        id2label: dict[int, str], verdict: Verdict) -> None:
    judge = load(build_model(tmp_path, id2label))

    def always_class_1(input_ids: Any, **_: Any) -> SimpleNamespace:
        logits = torch.zeros(len(input_ids), len(id2label))
        logits[:, 1] = 5.0
        return SimpleNamespace(logits=logits)

    monkeypatch.setattr(judge._model, "forward", always_class_1)
    assert asyncio.run(judge.check("the cat sat", ["a dog ran", "the cat"])) == [verdict] * 2


def test_unknown_labels_fail_at_load_and_label_map_fixes_it(tmp_path: Path) -> None:
    path = build_model(tmp_path, {0: "yes", 1: "no"})
    with pytest.raises(InvalidInput, match=r"\['yes', 'no'\]"):
        load(path)
    assert load(path, label_map={"yes": "ENTAILED", "no": "NEUTRAL"}).labels == (E, N)


# -- windows --------------------------------------------------------------------------------

def test_long_premises_are_cut_into_overlapping_windows(model_dir: Path) -> None:
    judge = load(model_dir)
    assert (judge.window_tokens, judge.window_overlap) == (45, 11)
    words = [f"w{i}" for i in range(130)]  # all [UNK], but one token per word
    windows = split_windows(judge._tokenizer, " ".join(words), 45, 11)
    pieces = [w.split() for w in windows]
    assert len(pieces) == 4 and all(len(p) <= 45 for p in pieces)
    for a, b in itertools.pairwise(pieces):
        assert a[-11:] == b[:11]  # consecutive windows share the overlap
    assert pieces[0][0] == "w0" and pieces[-1][-1] == "w129"
    assert split_windows(judge._tokenizer, "the cat sat", 45, 11) == ["the cat sat"]
    assert split_windows(judge._tokenizer, "  ", 45, 11) == []


def test_windows_without_offsets_fall_back_to_decoding(model_dir: Path) -> None:
    fast = load(model_dir)._tokenizer

    class SlowTokenizer:  # what a pure-Python tokenizer does when asked for offsets
        def __call__(self, text: str, **kwargs: Any) -> Any:
            if kwargs.get("return_offsets_mapping"):
                raise NotImplementedError("return_offset_mapping is not available")
            return fast(text, **kwargs)

        def decode(self, ids: list[int], **kwargs: Any) -> str:
            return str(fast.decode(ids, **kwargs))

    text = " ".join(["The", "cat"] * 40)
    assert split_windows(SlowTokenizer(), text, 45, 11) == split_windows(fast, text.lower(), 45, 11)


def test_verdict_in_a_late_window_is_kept(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = load(model_dir)
    script(monkeypatch, judge)
    filler = "filler " * 120
    premises = [filler + "the cat sat on the mat",      # support only in the last window
                "false " + filler + "the cat sat",      # a contradicting window + a supporting one
                "false " + filler,                      # only a contradicting window
                filler]                                 # nothing either way
    scores = judge.predict(premises, ["the cat sat"])
    assert [row[0].verdict for row in scores] == [E, E, C, N]
    assert scores[0][0].window >= 2 and scores[2][0].window == 0


def test_overlap_keeps_a_fact_that_straddles_a_window_boundary(
        model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    premise = " ".join(["filler"] * 44 + ["cat", "dog"] + ["filler"] * 30)  # cut at 45
    verdicts = {}
    for overlap in (0, 11):
        judge = load(model_dir, window_overlap=overlap)
        script(monkeypatch, judge)
        verdicts[overlap] = asyncio.run(judge.check(premise, ["cat dog"]))
    assert verdicts == {0: [N], 11: [E]}


# -- batching, order, threads -------------------------------------------------------------

PREMISES = ["the cat sat on the mat .", "a dog ran", "false " * 3 + "red", "the mat is red",
            ("filler " * 60) + "a dog sat on the mat"]
CLAIMS = ["the cat sat", "a dog ran", "the mat is red", "a cat ran .", "dog sat on mat"]


def test_real_model_gives_the_same_answers_for_any_batch_size(model_dir: Path) -> None:
    one, eight = load(model_dir, batch_size=1), load(model_dir, batch_size=8)
    with metered() as usage:
        a = one.predict(PREMISES, CLAIMS)
    b = eight.predict(PREMISES, CLAIMS)
    assert [[s.verdict for s in row] for row in a] == [[s.verdict for s in row] for row in b]
    assert len({s.verdict for row in a for s in row}) > 1  # the outputs really vary
    for ra, rb in zip(a, b, strict=True):
        for sa, sb in zip(ra, rb, strict=True):
            assert sa.window == sb.window and math.isclose(sa.probability, sb.probability,
                                                           abs_tol=1e-4)
    n_pairs = sum(len(split_windows(one._tokenizer, p, 45, 11)) for p in PREMISES) * len(CLAIMS)
    assert n_pairs == 30 and usage.calls == n_pairs  # one call per forward batch of 1
    with metered() as usage8:
        asyncio.run(eight.check_many(PREMISES, CLAIMS))
    assert (usage8.calls, usage8.prompt_tokens, usage8.cost_usd) == (math.ceil(30 / 8), 0, 0.0)


def test_results_come_back_in_input_order(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = load(model_dir, batch_size=3)  # length sorting shuffles pairs across batches
    seen = script(monkeypatch, judge)
    got = asyncio.run(judge.check_many(PREMISES, CLAIMS))

    def words(text: str) -> list[str]:
        return text.lower().replace(".", " . ").split()

    expected = [[word_rule(words(p), words(c)) for c in CLAIMS] for p in PREMISES[:4]]
    assert got[:4] == expected
    assert got[4] == [N, N, N, N, E]
    assert seen["rows"] == 30  # every window x claim pair of the call, and no more


def test_empty_inputs_make_no_model_call(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = load(model_dir)
    seen = script(monkeypatch, judge)
    with metered() as usage:
        assert asyncio.run(judge.check_many(["", "the cat"], ["the cat"])) == [[N], [E]]
        assert asyncio.run(judge.check_many(["the cat"], [])) == [[]]
    assert seen["rows"] == 1 and usage.calls == 1


def test_inference_runs_off_the_event_loop_one_batch_at_a_time(
        model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = load(model_dir, batch_size=2)
    seen = script(monkeypatch, judge, delay=0.03)  # 3 calls x 2 batches x 30 ms
    rows_when_ticker_done = -1

    async def ticker() -> None:
        nonlocal rows_when_ticker_done
        for _ in range(5):
            await asyncio.sleep(0.005)
        rows_when_ticker_done = seen["rows"]

    async def main() -> list[list[list[Verdict]]]:
        *results, _ = await asyncio.gather(*(judge.check_many(PREMISES[:2], CLAIMS[:2])
                                             for _ in range(3)), ticker())
        return results

    results = asyncio.run(main())
    assert results == [[[E, N], [N, E]]] * 3
    assert 0 <= rows_when_ticker_done < seen["rows"] == 12  # the loop ran during inference
    assert seen["max_active"] == 1  # never two forwards at once
    assert threading.main_thread().name not in seen["threads"]


# -- identity, loading, errors --------------------------------------------------------------

def test_identity_names_what_changes_answers(model_dir: Path, tmp_path: Path) -> None:
    ident = load(model_dir).identity()
    assert ident["model"] == str(model_dir) and ident["judge"] == "nli"
    assert (ident["max_length"], ident["window_tokens"], ident["window_overlap"]) == (64, 45, 11)
    assert ident["labels"] == {"entailment": "entailed", "neutral": "neutral",
                               "contradiction": "contradicted"}
    assert ident["extractor"] == judge_identity(FakeJudge())
    assert load(model_dir, batch_size=1).identity() == ident  # batch size changes nothing
    assert load(model_dir, window_overlap=5).identity() != ident
    other = load(build_model(tmp_path, {0: "contradiction", 1: "neutral", 2: "entailment"}))
    assert other.identity()["fingerprint"] != ident["fingerprint"]


def test_claims_come_from_the_extractor(model_dir: Path) -> None:
    fake = FakeJudge(claims={"The cat sat. It ran.": ["the cat sat", "the cat ran"]})
    judge = load(model_dir, extractor=fake)
    assert asyncio.run(judge.extract("The cat sat. It ran.")) == ["the cat sat", "the cat ran"]
    assert fake.calls == [("extract", "The cat sat. It ran.")]


def test_missing_backend_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingDependency, match=r"pip install '\.\[nli\]'"):
        get_judge("nli:some/model")


def test_load_errors_are_clear(model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="needs a model"):
        get_judge("nli:")
    with pytest.raises(InvalidInput, match="does not exist"):
        get_judge(f"nli:{tmp_path}/no/such/model")
    with pytest.raises(InvalidInput, match="save_pretrained"):
        get_judge(f"nli:{tmp_path}")  # a directory, but not a model
    with pytest.raises(JudgeUnavailable, match="offline"):
        get_judge("nli:noisegauge-tests/not-a-model", local_files_only=True)
    with pytest.raises(InvalidInput, match="window_overlap"):
        load(model_dir, window_overlap=45)
    with pytest.raises(InvalidInput, match="max_length"):
        load(model_dir, max_length=128)
    if not torch.cuda.is_available():
        with pytest.raises(InvalidInput, match="device 'cuda'"):
            load(model_dir, device="cuda")


# -- end to end -------------------------------------------------------------------------------

def test_noise_sensitivity_end_to_end(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = load(model_dir)  # claims: the fake judge's sentences
    seen = script(monkeypatch, judge)
    sample = Sample.from_record({
        "user_input": "Where did the cat sit?",
        "response": "The cat sat on the mat. A dog ran. The mat is red.",
        "reference": "The cat sat on the mat.",
        "retrieved_contexts": ["the cat sat on the mat . a dog ran",  # relevant, with noise
                               "the mat is red"],                      # irrelevant
    })
    relevant = asyncio.run(NoiseSensitivity(judge=judge, mode="relevant").ascore(sample))
    irrelevant = asyncio.run(NoiseSensitivity(judge=judge, mode="irrelevant").ascore(sample))
    # 3 response claims: 1 correct, "a dog ran" from the relevant chunk, "red" from the other.
    assert (relevant.status, relevant.value) == ("ok", pytest.approx(1 / 3))
    assert (irrelevant.status, irrelevant.value) == ("ok", pytest.approx(1 / 3))
    result = asyncio.run(ascore_sample(sample, judge))
    assert result.value("precision") == pytest.approx(1 / 3)
    assert result.value("context_precision") == pytest.approx(1 / 2)
    assert result.usage.calls == 2 + 2  # 2 fake extractions + 2 NLI batches (one per check_many)
    assert seen["rows"] > 0


def test_conversational_extraction_is_the_extractors(model_dir: Path) -> None:
    from noisegauge.judges.base import ConversationalExtractor
    from noisegauge.samples import Turn

    history = (Turn("user", "How long can annual plans be refunded?"), Turn("assistant", "30 days."))
    lexical = load(model_dir, extractor="lexical")
    assert isinstance(lexical, ConversationalExtractor)
    assert lexical.conversation_version == get_judge("lexical").conversation_version  # type: ignore[attr-defined]
    assert asyncio.run(lexical.extract_in_conversation(
        "Seven days.", "And for monthly plans?", history)) == [
        "How long can monthly plans be refunded? Seven days for monthly plans."]
    # An extractor that reads no history gives its plain claims.
    fake = load(model_dir)
    assert asyncio.run(fake.extract_in_conversation("Seven days.", "And for monthly plans?",
                                                    history)) == \
        asyncio.run(fake.extract("Seven days.", "And for monthly plans?"))
