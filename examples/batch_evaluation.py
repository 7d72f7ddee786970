"""A realistic batch evaluation: inject distractor chunks, generate, score (runs offline).

This is the seed article's "Building a Realistic Batch Evaluation" rewritten for noisegauge.
The differences that matter:

- both noise modes come from one judged pass: ``noise_sensitivity_relevant`` (wrong claims
  a *relevant* chunk supports) and ``noise_sensitivity_irrelevant`` (wrong claims only an
  *irrelevant* chunk supports, the "Enterprise plan leaked into a Pro plan answer" case);
- Faithfulness and ContextPrecision reuse that same pass, so four columns cost the judge
  calls of one;
- the judge is the offline default ``lexical``, so the example needs no network or key; pass
  ``main(get_judge("openai:gpt-4o-mini"))`` for an LLM judge, or ``main(FakeJudge())`` for
  the scripted one the tests use.

Needs ``pip install '.[tables]'`` (pandas, for ``results.to_pandas()``); the rest
runs on a plain ``pip install .``.

Run: ``python examples/batch_evaluation.py``
"""

from __future__ import annotations

import random
import re
from typing import Any

from noisegauge import ContextPrecision, Faithfulness, Judge, NoiseSensitivity, evaluate, get_judge

TEST_CASES = [
    {"question": "What is the cancellation policy for the Pro plan?",
     "relevant_chunks": ["Pro plan subscriptions can be cancelled anytime with a 30-day notice period."],
     "reference_answer": "Pro plan subscriptions can be cancelled anytime with a 30-day notice period."},
    {"question": "How much does the Pro plan cost per month?",
     "relevant_chunks": ["The Pro plan costs 49 dollars per month."],
     "reference_answer": "The Pro plan costs 49 dollars per month."},
    {"question": "Where is Pro plan data hosted?",
     "relevant_chunks": ["Pro plan data is hosted in the EU and US regions."],
     "reference_answer": "Pro plan data is hosted in the EU and US regions."},
    {"question": "Does the Pro plan include phone support?",
     "relevant_chunks": ["The Pro plan includes email support only."],
     "reference_answer": "The Pro plan includes email support only."},
]

DISTRACTOR_POOL = [
    "Enterprise plan subscriptions require a 90-day notice period and a signed offboarding form.",
    "The Enterprise plan costs 499 dollars per month.",
    "Free plan data is hosted in the US region only.",
    "The Enterprise plan includes phone support around the clock.",
    "Annual billing gives a discount on every plan.",
]


def build_noisy_contexts(relevant_chunks: list[str], distractor_pool: list[str],
                         num_distractors: int = 2) -> list[str]:
    """Simulate imperfect retrieval: mix in distractors that are topically close."""
    distractors = random.sample(distractor_pool, k=num_distractors)
    mixed = relevant_chunks + distractors
    random.shuffle(mixed)
    return mixed


class NaiveExtractiveChain:
    """A stand-in RAG generator that is noise-sensitive on purpose: it answers with the two
    chunks sharing the most words with the question, whichever they are."""

    def invoke(self, inputs: dict[str, Any]) -> str:
        words = set(re.findall(r"\w+", inputs["question"].lower()))
        ranked = sorted(inputs["contexts"],
                        key=lambda c: -len(words & set(re.findall(r"\w+", c.lower()))))
        return " ".join(ranked[:2])


def run_generation(question: str, contexts: list[str], rag_chain: Any) -> str:
    """Swap this for your real chain, agent or API call."""
    return str(rag_chain.invoke({"question": question, "contexts": contexts}))


def build_eval_dataset(test_cases: list[dict[str, Any]], distractor_pool: list[str],
                       rag_chain: Any) -> dict[str, list[Any]]:
    questions, answers, contexts_list, references = [], [], [], []
    for case in test_cases:
        noisy_contexts = build_noisy_contexts(case["relevant_chunks"], distractor_pool)
        questions.append(case["question"])
        answers.append(run_generation(case["question"], noisy_contexts, rag_chain))
        contexts_list.append(noisy_contexts)
        references.append(case["reference_answer"])
    # Older Ragas column names work as they are; so do lists of dicts, DataFrames,
    # datasets.Dataset objects and JSONL/CSV/Parquet files.
    return {"question": questions, "answer": answers, "contexts": contexts_list,
            "reference": references}


def main(judge: Judge | str = "lexical") -> Any:
    random.seed(7)
    judge = get_judge(judge)
    metrics = [
        NoiseSensitivity(judge=judge, mode="relevant"),
        NoiseSensitivity(judge=judge, mode="irrelevant"),
        Faithfulness(judge=judge),
        ContextPrecision(judge=judge),
    ]
    dataset = build_eval_dataset(TEST_CASES, DISTRACTOR_POOL, NaiveExtractiveChain())
    results = evaluate(dataset, metrics=metrics, cache=False, progress=False)
    results_df = results.to_pandas()
    print(results_df[["user_input", "noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
                      "faithfulness", "context_precision"]].to_string())
    print(results)
    # Why is a row noise-sensitive? Every response claim says where it came from.
    for i, result in enumerate(results.results):
        for claim in result.evidence.response_claims if result.evidence else ():
            if claim.bucket == "irrelevant_noise":
                print(f"row {i}: {claim.text!r} leaked from chunk(s) {list(claim.leaked_from)}")
    return results_df


if __name__ == "__main__":
    main()
