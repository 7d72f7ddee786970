"""Build ``golden_siblings.jsonl`` from the bundled example (run from the repository root).

Each row is a question of ``examples/golden_support.jsonl`` in the GOLDEN shape of
``noisegauge testset`` (id, user_input, reference, retrieved_contexts, retrieved_context_ids,
distractors, draft, status, reason, conflicts, metadata; see docs/reference/golden.md), its traps taken from ``examples/distractor_pool.jsonl`` by hand: the
look-alike chunks about another plan or product, the archived chunks that state another value
for the same thing (conflicting) and the chunks on the same topic that do not answer (topical).

    python tests/data/golden/make_golden_siblings.py
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = Path(__file__).with_name("golden_siblings.jsonl")

#: question id -> [(pool chunk id, kind, what differs)], in no particular order (stress sorts).
TRAPS: dict[str, list[tuple[str, str, str]]] = {
    "refund-pro-monthly": [
        ("kb/returns#gift-cards", "topical", "non-refundable items, not the Pro window"),
        ("kb/archive/refunds-2022", "conflicting", "30 days (until March 2023) vs 14 days"),
        ("kb/refunds#team-monthly", "look-alike", "Team vs Pro: 7 days vs 14 days"),
        ("kb/refunds#starter", "look-alike", "Starter vs Pro: not refundable vs 14 days")],
    "price-pro": [
        ("kb/pricing#team-annual", "look-alike", "Team vs Pro: $240 per user per year vs $290"),
        ("kb/archive/pricing-2022", "conflicting", "$24/$240 (before 2023) vs $29/$290"),
        ("kb/pricing#starter", "look-alike", "Starter vs Pro: $9 vs $29 per month"),
        ("kb/discounts#nonprofits", "topical", "a Team discount, not the Pro price")],
    "cancel-pro": [
        ("kb/cancellation#enterprise", "look-alike", "Enterprise vs Pro: 90 days' notice vs any time"),
        ("kb/cancellation#team", "look-alike", "Team vs Pro: owner only, immediate vs end of period"),
        ("kb/billing#failed-payments", "topical", "paused after failed payments, not cancelled")],
    "retention-pro": [
        ("kb/data-retention#enterprise", "look-alike", "Enterprise vs Pro: 90 days vs 30 days"),
        ("kb/cancellation#team", "topical", "who may cancel, not how long data is kept")],
    "api-limit-pro": [
        ("kb/limits#api-team", "look-alike", "Team vs Pro: 5,000 vs 1,000 requests per minute"),
        ("kb/archive/api-v1", "conflicting", "600 (v1 API) vs 1,000 requests per minute"),
        ("kb/limits#api-starter", "look-alike", "Starter vs Pro: 100 vs 1,000 requests per minute")],
    "storage-starter": [
        ("kb/limits#storage-pro", "look-alike", "Pro vs Starter: 100 GB vs 5 GB"),
        ("kb/archive/storage-2021", "conflicting", "2 GB (2021) vs 5 GB"),
        ("kb/limits#storage-team", "look-alike", "Team vs Starter: 1 TB vs 5 GB")],
    "seats-team": [
        ("kb/archive/team-seats-2022", "conflicting", "5 seats, $20 (until 2023) vs 3 seats, $25"),
        ("kb/pricing#enterprise", "look-alike", "Enterprise vs Team: 50 seats vs 3 seats"),
        ("kb/pricing#team-annual", "topical", "annual Team price, not the seat minimum")],
    "sla-enterprise": [
        ("kb/sla#self-serve", "look-alike", "Starter/Pro/Team vs Enterprise: no SLA vs 99.9%"),
        ("kb/enterprise#support", "topical", "support response times, not uptime")],
    "return-kb2041": [
        ("kb/archive/returns-2022", "conflicting", "14 days, 10% fee (until 2023) vs 30 days, 15%"),
        ("kb/sku/DK-310-refurb", "look-alike", "refurbished dock vs KB-2041: 14 days vs 30 days"),
        ("kb/returns#gift-cards", "topical", "non-refundable items, not keyboard returns")],
    "displays-dk310": [
        ("kb/sku/DK-300", "look-alike", "DK-300 vs DK-310: one display at 30 Hz vs two at 60 Hz")],
    "price-kb2041": [
        ("kb/sku/KB-2040", "look-alike", "KB-2040 vs KB-2041: $89 vs $129"),
        ("kb/archive/kb2041-launch", "conflicting", "$149 (at launch in 2022) vs $129"),
        ("kb/sku/KB-2041-tkl", "look-alike", "KB-2041T vs KB-2041: $119 vs $129")],
    "warranty-kb2041": [
        ("kb/warranty#refurbished", "look-alike", "refurbished hardware vs KB-2041: 6 months vs 2 years"),
        ("kb/sku/MS-115", "topical", "the mouse's price and warranty, not the keyboard's")],
    "shipping-standard": [
        ("kb/shipping#express", "look-alike", "express vs standard: 1 to 2 vs 3 to 5 business days"),
        ("kb/archive/shipping-2022", "conflicting", "5 to 7 days, over $75 (2022) vs 3 to 5, over $50"),
        ("kb/shipping#international", "look-alike", "international vs standard: 7 to 14 vs 3 to 5 days")],
    "discount-students": [
        ("kb/discounts#nonprofits", "look-alike", "non-profits, Team vs students, Pro: 30% vs 50%"),
        ("kb/archive/students-2022", "conflicting", "30% (formerly) vs 50%")],
    "password-reset": [
        ("kb/account#email-verification", "look-alike", "verification link vs reset link: 24 hours vs 1 hour"),
        ("kb/archive/password-reset-v1", "conflicting", "24 hours (old sign-in) vs 1 hour"),
        ("kb/account#invites", "look-alike", "invitation link vs reset link: 7 days vs 1 hour")],
    "2fa-team": [
        ("kb/security#sso", "look-alike", "SAML SSO vs two-factor authentication on Team"),
        ("kb/security#2fa-recovery", "topical", "recovery codes, not who must use two-factor")],
    "price-change-notice": [
        ("kb/archive/price-changes-2022", "conflicting", "14 days (before 2023) vs 30 days")],
    "invoices": [
        ("kb/billing#receipts", "topical", "hardware receipts are not under Invoices")],
    "ko-refund-pro-monthly": [
        ("ko/kb/archive/refunds-2022", "conflicting", "30일 (2023년 3월 이전) vs 14일"),
        ("ko/kb/refunds#team-monthly", "look-alike", "Team vs Pro: 7일 vs 14일")],
    "ko-displays-dk310": [
        ("ko/kb/sku/DK-300", "look-alike", "DK-300 vs DK-310: 30Hz 1대 vs 60Hz 2대")],
    "ko-shipping-standard": [
        ("ko/kb/shipping#express", "look-alike", "특급 vs 일반: 1~2일 vs 3~5일")],
    "ko-seats-team": [
        ("ko/kb/pricing#enterprise", "look-alike", "Enterprise vs Team: 50석 vs 3석"),
        ("ko/kb/archive/team-seats-2022", "conflicting", "5석 (2023년 이전) vs 3석")],
}


def main() -> None:
    golden = [json.loads(x) for x in (ROOT / "examples" / "golden_support.jsonl").open(encoding="utf-8")]
    pool = {r["id"]: r["text"] for r in map(json.loads, (ROOT / "examples" / "distractor_pool.jsonl")
                                            .open(encoding="utf-8"))}
    with OUT.open("w", encoding="utf-8") as out:
        for row in golden:
            if row["id"] not in TRAPS:
                continue
            chunks = row["retrieved_contexts"]
            record = {
                "id": row["id"], "user_input": row["user_input"], "reference": row["reference"],
                "retrieved_contexts": [c["text"] for c in chunks],
                "retrieved_context_ids": [c["doc_id"] for c in chunks],
                "distractors": [{"id": i, "text": pool[i], "kind": k, "differs": d}
                                for i, k, d in TRAPS[row["id"]]],
                # written and checked by hand: a reviewed row, its conflicts settled
                "draft": {"method": "extractive", "question": "given", "confidence": 1.0,
                          "judge": "lexical", "reviewed": True},
                "status": "drafted", "reason": None, "conflicts": [],
                "metadata": {"source": "questions", **row.get("metadata", {})},
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
