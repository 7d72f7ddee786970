"""The seed article's Ragas batch example, run by noisegauge with only its imports changed.

Below the marked block the code is the article's, line for line, with two exceptions it
needed anyway: its commented-out last lines are switched on (with the test cases, distractor
pool and chain the article leaves to the reader, defined at the end), and the printed column
is ``user_input``, the name Ragas itself has used since 0.2 (its ``evaluate()`` renames
``question``, so the article's ``results_df[["question", ...]]`` fails under Ragas too).

It calls the model behind ``ChatOpenAI(model="gpt-4o-mini")``: set ``OPENAI_API_KEY`` (and
``OPENAI_BASE_URL`` for another OpenAI-compatible server). ``tests/test_ragas_dropin.py``
runs it against the local fake server. Needs ``pip install '.[langchain,hf]'``.

Run: ``python examples/ragas_dropin.py``
"""

# --- the imports: the only lines changed ------------------------------------------------------
import random

from datasets import Dataset
from langchain_openai import ChatOpenAI

from noisegauge import ContextPrecision, Faithfulness, NoiseSensitivity, evaluate
from noisegauge.ragas import LangchainLLMWrapper

# --- the article's code -------------------------------------------------------------------------


def build_noisy_contexts(relevant_chunks, distractor_pool, num_distractors=2):
    """
    Simulates imperfect retrieval by mixing in distractor chunks
    that are topically close but not actually relevant.
    """
    distractors = random.sample(distractor_pool, k=num_distractors)
    mixed = relevant_chunks + distractors
    random.shuffle(mixed)
    return mixed


def run_generation(question, contexts, rag_chain):
    """
    Placeholder for your actual RAG generation call.
    Swap this out for your real chain, agent, or API call.
    """
    return rag_chain.invoke({"question": question, "contexts": contexts})


def build_eval_dataset(test_cases, distractor_pool, rag_chain):
    questions, answers, contexts_list, references = [], [], [], []

    for case in test_cases:
        noisy_contexts = build_noisy_contexts(
            case["relevant_chunks"], distractor_pool
        )
        generated_answer = run_generation(
            case["question"], noisy_contexts, rag_chain
        )

        questions.append(case["question"])
        answers.append(generated_answer)
        contexts_list.append(noisy_contexts)
        references.append(case["reference_answer"])

    return Dataset.from_dict({
        "question": questions,
        "answer": answers,
        "contexts": contexts_list,
        "reference": references,
    })


# --- what the article leaves to the reader --------------------------------------------------------

test_cases = [
    {"question": "What is the cancellation policy for the Pro plan?",
     "relevant_chunks": ["Pro plan subscriptions can be cancelled anytime with a 30-day notice period."],
     "reference_answer": "Pro plan subscriptions can be cancelled anytime with a 30-day notice period."},
    {"question": "How much does the Pro plan cost per month?",
     "relevant_chunks": ["The Pro plan costs 49 dollars per month."],
     "reference_answer": "The Pro plan costs 49 dollars per month."},
]
distractor_pool = [
    "Enterprise plan subscriptions require a 90-day notice period and a signed offboarding form.",
    "The Enterprise plan costs 499 dollars per month.",
    "Annual billing gives a discount on every plan.",
]


class FirstTwoChunks:
    """A deliberately noise-sensitive generator: it answers with the first two chunks."""

    def invoke(self, inputs):
        return " ".join(inputs["contexts"][:2])


rag_chain = FirstTwoChunks()
random.seed(7)

# --- the article's code again (its last lines, switched on) --------------------------------------

evaluator_llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini"))

metrics = [
    NoiseSensitivity(llm=evaluator_llm),
    Faithfulness(llm=evaluator_llm),
    ContextPrecision(llm=evaluator_llm),
]

dataset = build_eval_dataset(test_cases, distractor_pool, rag_chain)
results = evaluate(dataset=dataset, metrics=metrics)
results_df = results.to_pandas()
print(results_df[["user_input", "noise_sensitivity_relevant", "faithfulness"]])
