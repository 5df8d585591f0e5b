"""A learned kernel cost model: ridge regression on log(instructions) measured under qemu.

Why ridge on logs and not gradient-boosted trees: the training sets here are a few hundred kernels
(three to six models x a handful of schedules); instruction counts span four orders of magnitude
and are close to a product of extents x instructions-per-MAC of a variant, which is linear in log
space. A linear model on log features, with the variant and family one-hot columns crossed with
log(MACs) and log(outputs), fits that shape with ~100 weights, trains in milliseconds with numpy
alone (no new dependency), is deterministic, and extrapolates to larger layers monotonically, where
trees cannot predict beyond the largest leaf they saw. The analytical estimate is one of the
features, so the model learns a correction to it rather than the whole cost.

    model = fit(feature_dicts, instructions)       # CostModel
    model.predict(feature_dicts)                   # instructions (np.ndarray)
    spearman(a, b)                                 # rank correlation (average ranks for ties)
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from .features import FAMILIES, FEATURE_NAMES, VARIANTS, vector

CROSSED = ("log_macs", "log_out_elems")
CROSS_WITH = tuple(f"variant={v}" for v in VARIANTS) + tuple(f"family={f}" for f in FAMILIES)


def design(features: list[dict]) -> np.ndarray:
    """Feature vectors plus the crossed columns (variant/family one-hot x log MACs, log outputs)."""
    rows = []
    for f in features:
        base = vector(f)
        cross = [f[a] * f[b] for a in CROSSED for b in CROSS_WITH]
        rows.append(np.concatenate([base, np.array(cross)]))
    return np.array(rows, dtype=np.float64).reshape(len(features), len(FEATURE_NAMES) + len(CROSSED) * len(CROSS_WITH))


@dataclass
class CostModel:
    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    alpha: float

    def predict(self, features: list[dict]) -> np.ndarray:
        if not features:
            return np.zeros(0)
        x = (design(features) - self.mean) / self.scale
        return np.expm1(np.maximum(x @ self.weights + self.bias, 0.0))

    def to_json(self) -> str:
        return json.dumps({"weights": self.weights.tolist(), "bias": self.bias, "mean": self.mean.tolist(),
                           "scale": self.scale.tolist(), "alpha": self.alpha,
                           "columns": len(self.weights)})

    @staticmethod
    def from_json(text: str) -> "CostModel":
        d = json.loads(text)
        return CostModel(np.array(d["weights"]), float(d["bias"]), np.array(d["mean"]), np.array(d["scale"]),
                         float(d["alpha"]))


def fit(features: list[dict], instructions, alpha: float = 1.0) -> CostModel:
    """Ridge regression of log1p(instructions) on standardized ``design`` columns (closed form)."""
    x = design(features)
    y = np.log1p(np.asarray(instructions, dtype=np.float64))
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    xs = (x - mean) / scale
    bias = float(y.mean())
    a = xs.T @ xs + alpha * np.eye(xs.shape[1])
    w = np.linalg.solve(a, xs.T @ (y - bias))
    return CostModel(w, bias, mean, scale, alpha)


def ranks(a) -> np.ndarray:
    """Ranks 0..n-1 with ties given their average rank."""
    a = np.asarray(a, dtype=np.float64)
    order = np.argsort(a, kind="stable")
    r = np.empty(len(a))
    r[order] = np.arange(len(a), dtype=np.float64)
    for v in np.unique(a):
        m = a == v
        if m.sum() > 1:
            r[m] = r[m].mean()
    return r


def spearman(a, b) -> float:
    """Spearman rank correlation of two equal-length sequences (nan for fewer than 2 items)."""
    if len(a) < 2:
        return float("nan")
    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / den) if den else float("nan")


def holdout_split(groups: list[str], fraction: float = 0.25, seed: int = 0) -> np.ndarray:
    """A boolean test mask holding out ``fraction`` of the distinct ``groups`` (a kernel's group
    signature: every schedule of a held-out kernel is unseen in training)."""
    uniq = sorted(set(groups))
    rng = np.random.default_rng(seed)
    held = set(rng.permutation(uniq)[: max(1, int(round(fraction * len(uniq))))].tolist())
    return np.array([g in held for g in groups])
