"""Train the lexical judge's combiner and report in-source and cross-source accuracy.

    python training/train_lexical.py [--data ../shared/data] [--train wice,begin,halueval]
                                     [--write]   # write src/noisegauge/judges/lexical/weights.json
                                     [--embed]   # experiment: add WordLlama features (report only)

Every item (see bench/judge_accuracy.py) becomes one feature vector: for a claim with
several chunks, the chunk the judge would pick (no hard mismatch, best window coverage).
Sources: wice, begin (cmu, tc, wow), halueval (one- and multi-turn, deduplicated). The
model is class- and source-balanced gradient boosting (shallow trees, exported to JSON); its
decision threshold is chosen on the training data only and stored with the weights.
Needs the dev extra (scikit-learn); inference reads the JSON in pure Python.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import StratifiedKFold

ROOT = Path(__file__).resolve().parents[1]
LEXICAL = ROOT / "src" / "noisegauge" / "judges" / "lexical"

_spec = importlib.util.spec_from_file_location("judge_accuracy", ROOT / "bench" / "judge_accuracy.py")
assert _spec and _spec.loader
bench: Any = importlib.util.module_from_spec(_spec)
sys.modules["judge_accuracy"] = bench
_spec.loader.exec_module(bench)

from noisegauge.judges.lexical.features import FEATURES, MONOTONE, align, analyse  # noqa: E402 (after the bench module is registered)
from noisegauge.judges.lexical.judge import answer_part  # noqa: E402 (after the bench module is registered)
from noisegauge.judges.lexical.model import WEIGHTS_FILE  # noqa: E402 (after the bench module is registered)
from noisegauge.judges.lexical.split import extract_spans  # noqa: E402 (after the bench module is registered)

#: What the model is trained on: the plain features, or (``--embed``) with the embedding ones.
SPEC: dict[str, Any] = {"features": FEATURES, "monotone": MONOTONE, "embedder": None,
                        "file": WEIGHTS_FILE}


def use_embed() -> None:
    """Experiment (training/embed_features.py): the WordLlama features after the plain ones."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from embed_features import EMBED_FEATURES, EMBED_MONOTONE, load_embedder

    SPEC.update(features=FEATURES + EMBED_FEATURES, monotone=MONOTONE + EMBED_MONOTONE,
                embedder=load_embedder(), file="weights_embed.json")

#: Sets that only measure: WiCE's per-chunk items carry the label of the whole evidence, so a
#: chunk that holds half the claim is "supported" there; as pair labels they teach leniency.
#: The same claims against the joined evidence (wice_doc) are the WiCE training pairs.
EVAL_ONLY = frozenset(["wice"])

SOURCE_OF = {"wice": "wice", "wice_doc": "wice", "begin_cmu": "begin", "begin_tc": "begin",
             "begin_wow": "begin",
             "halueval": "halueval"}


def item_features(item: Any) -> tuple[list[float], bool]:
    """Features of the judge's chosen (premise, claim) pair, and whether a hard cue fired.

    With several claims (extracted answers) the weakest claim stands for the item."""
    claims = [c.text for c in extract_spans(item.text, item.question)] or [item.text]
    worst: tuple[tuple[float, float], list[float], bool] | None = None
    for claim in claims:
        text = answer_part(claim)
        cl = analyse(text)
        best: tuple[tuple[float, float], list[float], bool] | None = None
        for premise in item.premises:
            prem = analyse(premise)
            a = align(prem, cl)
            feats, cues = a.features, a.cues
            if SPEC["embedder"] is not None:
                feats = feats + SPEC["embedder"].features(premise, text, prem, a.window, a.missing)
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
    """Boosted shallow trees, monotone in each feature as ``MONOTONE`` says (more coverage
    never lowers p(entailed), a cue never raises it), and a threshold chosen on the training
    data only."""
    clf = HistGradientBoostingClassifier(max_iter=150, max_depth=3, learning_rate=0.06,
                                         min_samples_leaf=20, l2_regularization=1.0,
                                         monotonic_cst=list(SPEC["monotone"]), random_state=0)
    clf.fit(X, y, sample_weight=weights_for(y, groups))
    trees = []
    for (pred,) in clf._predictors:
        nodes = pred.nodes
        leaf = nodes["is_leaf"].astype(bool)
        trees.append({"feature": [int(f) for f in nodes["feature_idx"]],
                      "threshold": [float(v) for v in nodes["num_threshold"]],
                      "left": [-1 if lf else int(v) for v, lf in zip(nodes["left"], leaf, strict=True)],
                      "right": [-1 if lf else int(v) for v, lf in zip(nodes["right"], leaf, strict=True)],
                      "value": [round(float(v), 6) for v in nodes["value"]]})
    # Leaf values already include the learning rate; the constant term is the baseline.
    model: dict[str, Any] = {"features": list(SPEC["features"]),
                             "init": float(np.ravel(clf._baseline_prediction)[0]),
                             "learning_rate": 1.0, "trees": trees, "threshold": 0.5}
    p = probabilities(model, X)
    assert np.allclose(p, clf.predict_proba(X)[:, 1], atol=1e-3), "tree export disagrees"
    best_t, best_s = 0.5, -1.0
    for t in np.linspace(0.2, 0.8, 61):
        ok = ((p >= t) | verbatim(X)) & ~m
        s = np.mean([bal_acc(y[groups == g], ok[groups == g])
                     for g in np.unique(groups)])
        if s > best_s:
            best_t, best_s = float(t), float(s)
    model["threshold"] = round(best_t, 3)
    return model


def probabilities(model: dict[str, Any], X: np.ndarray) -> np.ndarray:
    """The same arithmetic as the package's pure-Python ``Combiner``, vectorised."""
    z = np.full(len(X), model["init"])
    rows = np.arange(len(X))
    for t in model["trees"]:
        left, right = np.array(t["left"]), np.array(t["right"])
        feat, thr, val = np.array(t["feature"]), np.array(t["threshold"]), np.array(t["value"])
        node = np.zeros(len(X), int)
        while (left[node] != -1).any():
            inner = left[node] != -1
            go_left = X[rows, feat[node]] <= thr[node]
            node = np.where(inner, np.where(go_left, left[node], right[node]), node)
        z += model["learning_rate"] * val[node]
    return 1 / (1 + np.exp(-z))


VERBATIM = FEATURES.index("lcs")
OPERATORS = FEATURES.index("op_miss")


def verbatim(X: np.ndarray) -> np.ndarray:
    """The judge's override: content words verbatim and in order, no unstated operator word."""
    return (X[:, VERBATIM] >= 1.0) & (X[:, OPERATORS] == 0)


def predict(model: dict[str, Any], X: np.ndarray, m: np.ndarray) -> np.ndarray:
    """As the judge decides: no hard mismatch, and the claim stands verbatim in the premise or
    the combiner's probability reaches the threshold."""
    return ((probabilities(model, X) >= model["threshold"]) | verbatim(X)) & ~m


def bal_acc(y: np.ndarray, pred: np.ndarray) -> float:
    tpr = (pred & y).sum() / max(1, y.sum())
    tnr = (~pred & ~y).sum() / max(1, (~y).sum())
    return float((tpr + tnr) / 2)


Sets = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def stack(sets: Sets, names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """X, y, groups (source names) and mismatch flags of the named sets, stacked."""
    X = np.vstack([sets[n][0] for n in names])
    y = np.concatenate([sets[n][1] for n in names])
    m = np.concatenate([sets[n][2] for n in names])
    g = np.concatenate([[SOURCE_OF[n]] * len(sets[n][1]) for n in names])
    return X, y, g, m


def report(sets: Sets, train: list[str]) -> None:
    """Balanced accuracy per set: in-source 5-fold CV; trained on the other sources only;
    pooled 5-fold CV (trained on the other folds of every source, like the shipped model);
    and the shipped model itself (in-sample)."""
    names = list(sets)
    used = [n for n in names if SOURCE_OF[n] in train and n not in EVAL_ONLY]
    folds = {n: list(StratifiedKFold(5, shuffle=True, random_state=0).split(*sets[n][:2]))
             for n in names}
    pooled = {n: np.zeros(len(sets[n][1]), bool) for n in names}
    for k in range(5):
        part: Sets = {n: (sets[n][0][folds[n][k][0]], sets[n][1][folds[n][k][0]],
                          sets[n][2][folds[n][k][0]]) for n in used}
        model = fit(*stack(part, used))
        for n in names:
            te = folds[n][k][1]
            pooled[n][te] = predict(model, sets[n][0][te], sets[n][2][te])
    shipped = fit(*stack(sets, used))
    print(f"{'set':<12}{'in-source CV':>14}{'other sources':>15}{'pooled CV':>11}{'shipped':>9}")
    for name in names:
        X, y, m = sets[name]
        pred = np.zeros(len(y), bool)
        for tr, te in folds[name]:
            pred[te] = predict(fit(X[tr], y[tr], np.array(["s"] * len(tr)), m[tr]), X[te], m[te])
        others = [n for n in used if SOURCE_OF[n] != SOURCE_OF[name]]
        cross = bal_acc(y, predict(fit(*stack(sets, others)), X, m)) if others else float("nan")
        print(f"{name:<12}{bal_acc(y, pred):>14.3f}{cross:>15.3f}"
              f"{bal_acc(y, pooled[name]):>11.3f}{bal_acc(y, predict(shipped, X, m)):>9.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=bench.DEFAULT_DATA)
    ap.add_argument("--train", default="wice,begin,halueval", help="sources the shipped model uses")
    ap.add_argument("--write", action="store_true", help="write the shipped weights JSON")
    ap.add_argument("--no-report", action="store_true", help="skip the cross-validation table")
    ap.add_argument("--embed", action="store_true",
                    help="experiment: add the WordLlama features (needs wordllama); report only")
    args = ap.parse_args()
    if args.embed:
        if args.write:
            ap.error("--embed is an experiment: no judge reads its weights, so --write is refused")
        use_embed()
    train = args.train.split(",")
    sets = build(args.data)
    if not args.no_report:
        report(sets, train)
    model = fit(*stack(sets, [n for n in sets if SOURCE_OF[n] in train and n not in EVAL_ONLY]))
    body = json.dumps(model, sort_keys=True)
    model = {"version": "gbt-" + hashlib.sha256(body.encode()).hexdigest()[:10],
             "trained_on": train, **model}
    print(f"{len(model['trees'])} trees, threshold {model['threshold']}, {model['version']}")
    if args.write:
        out = LEXICAL / SPEC["file"]
        out.write_text(json.dumps(model, separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)} ({model['version']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
