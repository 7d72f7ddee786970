"""Drafting for questions whose answer takes two steps (HotpotQA-style, as in HaluEval):
the reference keeps what its sentence leans on, a second-hop chunk joins the row instead
of becoming a trap. The corpus is written here."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("bm25s", reason="noisegauge testset needs bm25s: pip install '.[testset]'")

from noisegauge.testset import Chunk, GoldenRow, build_testset

FILLER = [
    "Target Corporation is a discount retailer with its head office in Minneapolis.",
    "The Royal Spa Centre is a theatre in Leamington Spa, England, opened in 1972.",
    "Goodison Park is a football stadium in Walton, Liverpool, England.",
    "Calochone is a genus of flowering plants in the coffee family.",
    "The Quality Cafe is a defunct diner on West 7th Street in Los Angeles.",
    "Emprise Bank is a family owned community bank headquartered in Wichita, Kansas.",
]


def _row(tmp_path: Path, chunks: list[Chunk], question: str) -> GoldenRow:
    q = tmp_path / "q.txt"
    q.write_text(question + "\n", encoding="utf-8")
    (row,) = build_testset([*chunks, *(Chunk(f"f#{k}", t) for k, t in enumerate(FILLER))],
                           questions=q)
    return row


def test_the_second_hop_chunk_joins_the_row_and_is_no_trap(tmp_path: Path) -> None:
    row = _row(tmp_path, [
        Chunk("w#1", "Warren Bryant was the chief executive of Longs Drugs before the chain "
                     "was sold to CVS."),
        Chunk("l#1", "Longs Drugs runs about forty drug stores across the state of Hawaii."),
    ], "In which state are the drug stores whose chief executive was Warren Bryant?")
    assert row.status == "drafted"
    assert row.retrieved_context_ids == ("w#1", "l#1")
    assert "Warren Bryant" in row.reference and "Hawaii" in row.reference
    assert all(d.id != "l#1" for d in row.distractors)


def test_a_sentence_that_points_back_keeps_the_one_it_points_to(tmp_path: Path) -> None:
    row = _row(tmp_path, [Chunk("d#1", "Scott Derrickson (born 1966) is an American "
                                       "screenwriter and producer. He lives in Los Angeles, "
                                       "California, and directed the horror film Sinister.")],
               "Who lives in Los Angeles and directed the horror film Sinister?")
    assert row.reference is not None and "Scott Derrickson" in row.reference
    assert "Sinister" in row.reference


def test_the_next_sentence_about_a_name_the_reference_brought_in_joins_it(
        tmp_path: Path) -> None:
    row = _row(tmp_path, [Chunk("p#1", "On April 11, 2013, Polaris Industries announced that "
                                       "it had acquired Aixam-Mega. Polaris is based in "
                                       "Roseau, Minnesota.")],
               "Where is the company that acquired Aixam based?")
    assert row.reference is not None and "Roseau" in row.reference
    assert "acquired Aixam-Mega" in row.reference

