"""Generated corpora where the leak sources are known, for the ``leaks`` tests.

Each sample asks about one widget; its relevant chunk states the reference, a history chunk
is filler. One document (``INJECTED``) is slipped into every third sample's retrieval and
its sentence copied into that answer: it must rank first, with one leaked claim per sample
it was injected into. ``near_duplicates`` adds a refund FAQ and a stale copy of it that
differs in the number; answers copy the stale one.
"""

from __future__ import annotations

from typing import Any

NAMES = ("alder", "birch", "cedar", "dogwood", "elm", "fir", "ginkgo", "hazel", "ivy", "juniper",
         "kapok", "larch", "maple", "nutmeg", "oak", "pine", "quince", "rowan", "spruce", "teak",
         "umbu", "viburnum", "willow", "yew")

TEXTS: dict[str, dict[str, str]] = {
    "en": {"ref": "The {nm} widget weighs {w} kilograms.",
           "rel": "Catalogue entry {nm}. The {nm} widget weighs {w} kilograms.",
           "fill": "The {nm} widget was designed in {y} by a small team.",
           "q": "How much does the {nm} widget weigh?",
           "injected": "Every order ships from the Oslo warehouse on Mondays."},
    "ko": {"ref": "{nm} 위젯의 무게는 {w}킬로그램입니다.",
           "rel": "카탈로그 항목 {nm}. {nm} 위젯의 무게는 {w}킬로그램입니다.",
           "fill": "{nm} 위젯은 {y}년에 작은 팀이 설계했습니다.",
           "q": "{nm} 위젯의 무게는 얼마입니까?",
           "injected": "모든 주문은 월요일마다 오슬로 창고에서 발송됩니다."},
}
INJECTED_ID = "doc-oslo"


def injected(i: int) -> bool:
    """Every third sample gets the injected document."""
    return i % 3 == 0


def corpus(lang: str, *, ids: bool, n: int = len(NAMES)) -> list[dict[str, Any]]:
    """Rows in the Ragas shape; ``ids``: chunks named by ``retrieved_context_ids``."""
    t = TEXTS[lang]
    rows: list[dict[str, Any]] = []
    for i, nm in enumerate(NAMES[:n]):
        ref = t["ref"].format(nm=nm, w=3 + i)
        rel = t["rel"].format(nm=nm, w=3 + i)
        fill = t["fill"].format(nm=nm, y=1990 + i)
        contexts, chunk_ids = [rel, fill], [f"cat-{nm}", f"hist-{nm}"]
        answer = ref
        if injected(i):
            contexts.insert(1, t["injected"])
            chunk_ids.insert(1, INJECTED_ID)
            answer = f"{ref} {t['injected']}"
        row: dict[str, Any] = {"id": f"{lang}{i:02d}", "user_input": t["q"].format(nm=nm),
                               "response": answer, "reference": ref,
                               "retrieved_contexts": contexts}
        if ids:
            row["retrieved_context_ids"] = chunk_ids
        rows.append(row)
    return rows


FAQ = "Refund FAQ. Refunds for annual plans are paid back within 5 business days."
STALE_FAQ = "Refund FAQ (2023). Refunds for annual plans are paid back within 10 business days."


def near_duplicates(n: int = 9) -> list[dict[str, Any]]:
    """Refund questions retrieving the FAQ and its stale copy; answers in 2 of 3 copy the
    stale number. Each row also retrieves a chunk of its own (relevant) and one filler."""
    rows: list[dict[str, Any]] = []
    for i in range(n):
        nm = NAMES[i]
        own = f"The {nm} plan is billed once a year."
        ref = f"The {nm} plan is billed once a year. Refunds for annual plans are paid back within 5 business days."
        stale = i % 3 != 2
        answer = (f"The {nm} plan is billed once a year. Refunds for annual plans are paid back "
                  f"within {10 if stale else 5} business days.")
        rows.append({"id": f"faq{i:02d}", "user_input": f"How do refunds work for the {nm} plan?",
                     "response": answer, "reference": ref,
                     "retrieved_contexts": [FAQ, STALE_FAQ, own,
                                            f"The {nm} team meets on Fridays."],
                     "retrieved_context_ids": ["faq-refunds", "faq-refunds-2023", f"plan-{nm}",
                                               f"team-{nm}"]})
    return rows
