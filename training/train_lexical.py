"""Train the lexical judge's combiner and report in-source and cross-source accuracy.

    python training/train_lexical.py [--data ../shared/data] [--train wice,begin,halueval]
                                     [--write]   # write src/noisegauge/judges/lexical/weights.json

Every item (see bench/judge_accuracy.py) becomes one feature vector: for a claim with
several chunks, the chunk the judge would pick (no hard mismatch, best window coverage).
Sources: wice, begin (cmu, tc, wow), halueval (one- and multi-turn, deduplicated). The
model is a class- and source-balanced logistic regression on standardised features; its
decision threshold is chosen on the training data only and stored with the weights.
Needs the dev extra (scikit-learn); inference reads the JSON in pure Python.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "src" / "noisegauge" / "judges" / "lexical" / "weights.json"

_spec = importlib.util.spec_from_file_location("judge_accuracy", ROOT / "bench" / "judge_accuracy.py")
assert _spec and _spec.loader
bench: Any = importlib.util.module_from_spec(_spec)
sys.modules["judge_accuracy"] = bench
_spec.loader.exec_module(bench)

from noisegauge.judges.lexical.features import FEATURES, analyse, pair_features  # noqa: E402
from noisegauge.judges.lexical.judge import answer_part  # noqa: E402
from noisegauge.judges.lexical.split import extract_spans  # noqa: E402

SOURCE_OF = {"wice": "wice", "begin_cmu": "begin", "begin_tc": "begin", "begin_wow": "begin",
             "halueval": "halueval"}


def item_features(item: Any) -> tuple[list[float], bool]:
    """Features of the judge's chosen (premise, claim) pair, and whether a hard cue fired.

    With several claims (extracted answers) the weakest claim stands for the item."""
    claims = [c.text for c in extract_spans(item.text, item.question)] or [item.text]
    worst: tuple[tuple[float, float], list[float], bool] | None = None
    for claim in claims:
        cl = analyse(answer_part(claim))
        best: tuple[tuple[float, float], list[float], bool] | None = None
        for premise in item.premises:
            feats, cues = pair_features(analyse(premise), cl)
            key = (0.0 if cues.mismatch else 1.0, feats[FEATURES.index("cov_win")])
            if best is None or key > best[0]:
                best = (key, feats, cues.mismatch)
        assert best is not None
        if worst is None or best[0] < worst[0]:
            worst = best
    assert worst is not None
    return worst[1], worst[2]


def build(data: Path) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """set name -> (X, y, mismatch)."""
    out = {}
    seen: set[tuple[str, str, bool]] = set()
    loaded = bench.load_sets(data)
    # One- and multi-turn HaluEval share knowledge and right answers: one set, deduplicated.
    loaded["halueval"] = loaded.pop("halueval_one") + loaded.pop("halueval_multi")
    for name, items in loaded.items():
        xs, ys, ms = [], [], []
        for it in items:
            if SOURCE_OF[name] == "halueval":
                key = (it.premises[0], it.text, it.label)
                if key in seen:
                    continue
                seen.add(key)
            f, m = item_features(it)
            xs.append(f)
            ys.append(it.label)
            ms.append(m)
        out[name] = (np.array(xs, float), np.array(ys, bool), np.array(ms, bool))
    return out


def weights_for(y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each source weighs the same, and within it each class weighs the same."""
    w = np.zeros(len(y))
    sources = np.unique(groups)
    for g in sources:
        for c in (True, False):
            sel = (groups == g) & (y == c)
            if sel.any():
                w[sel] = 1.0 / (2 * len(sources) * sel.sum())
    return w * len(y)


def fit(X: np.ndarray, y: np.ndarray, groups: np.ndarray, m: np.ndarray) -> dict[str, Any]:
    mean = X.mean(0)
    scale = X.std(0)
    scale[scale < 1e-9] = 1.0
    clf = LogisticRegression(C=1.0, max_iter=2000)
    w = weights_for(y, groups)
    clf.fit((X - mean) / scale, y, sample_weight=w)
    p = clf.predict_proba((X - mean) / scale)[:, 1]
    # Threshold: best source-averaged balanced accuracy on the training data.
    best_t, best_s = 0.5, -1.0
    for t in np.linspace(0.2, 0.8, 61):
        s = np.mean([bal_acc(y[groups == g], (p >= t)[groups == g] & ~m[groups == g])
                     for g in np.unique(groups)])
        if s > best_s:
            best_t, best_s = float(t), float(s)
    return {"features": list(FEATURES), "mean": mean.tolist(), "scale": scale.tolist(),
            "coef": clf.coef_[0].tolist(), "intercept": float(clf.intercept_[0]),
            "threshold": round(best_t, 3)}


def predict(model: dict[str, Any], X: np.ndarray, m: np.ndarray) -> np.ndarray:
    z = ((X - np.array(model["mean"])) / np.array(model["scale"])) @ np.array(model["coef"])
    p = 1 / (1 + np.exp(-(z + model["intercept"])))
    return (p >= model["threshold"]) & ~m


def bal_acc(y: np.ndarray, pred: np.ndarray) -> float:
    tpr = (pred & y).sum() / max(1, y.sum())
    tnr = (~pred & ~y).sum() / max(1, (~y).sum())
    return float((tpr + tnr) / 2)


def stack(sets: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], names: list[str]) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    X = np.vstack([sets[n][0] for n in names])
    y = np.concatenate([sets[n][1] for n in names])
    m = np.concatenate([sets[n][2] for n in names])
    g = np.concatenate([[SOURCE_OF[n]] * len(sets[n][1]) for n in names])
    return X, y, m, g


def report(sets: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], train: list[str]) -> None:
    names = list(sets)
    print(f"{'set':<16}{'in-source 5-fold':>18}{'other sources':>15}{'all-train fit':>15}")
    full = fit(*_fit_args(sets, [n for n in names if SOURCE_OF[n] in train]))
    for name in names:
        X, y, m = sets[name]
        # In-source: 5-fold CV within this set alone.
        pred = np.zeros(len(y), bool)
        for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
            model = fit(X[tr], y[tr], np.array(["s"] * len(tr)), m[tr])
            pred[te] = predict(model, X[te], m[te])
        in_src = bal_acc(y, pred)
        # Cross-source: trained on the other sources only.
        others = [n for n in names if SOURCE_OF[n] != SOURCE_OF[name]]
        cross = bal_acc(y, predict(fit(*_fit_args(sets, others)), X, m))
        print(f"{name:<16}{in_src:>18.3f}{cross:>15.3f}{bal_acc(y, predict(full, X, m)):>15.3f}")


def _fit_args(sets: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], names: list[str]) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    X, y, m, g = stack(sets, names)
    return X, y, g, m


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=bench.DEFAULT_DATA)
    ap.add_argument("--train", default="wice,begin,halueval", help="sources the shipped model uses")
    ap.add_argument("--write", action="store_true", help="write the shipped weights JSON")
    args = ap.parse_args()
    train = args.train.split(",")
    sets = build(args.data)
    report(sets, train)
    model = fit(*_fit_args(sets, [n for n in sets if SOURCE_OF[n] in train]))
    body = json.dumps(model, sort_keys=True)
    model = {"version": "lr-" + hashlib.sha256(body.encode()).hexdigest()[:10],
             "trained_on": train, **model}
    print("coef:", {f: round(c, 2) for f, c in zip(FEATURES, model["coef"])},
          "threshold:", model["threshold"])
    if args.write:
        WEIGHTS.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {WEIGHTS.relative_to(ROOT)} ({model['version']})")
    return 0


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    sys.exit(main())
