"""Logistic regression for the judge fits, batched over rows of bootstrap weights.

`fit_logistic` is the maximum-likelihood fit (Newton / IRLS) with fractional outcomes
(ties count ½); `fit_l1` the same objective with an L1 penalty λ·|θ|₁ (proximal Newton),
which can put a coefficient at exactly 0 — AlpacaEval's penalised GLM. Both take a
(R, U) matrix of weights, one row per resample, so R bootstrap fits cost one batched
solve per iteration. `merge_units` turns pairs into distinct kinds with counts, so a fit
costs by the number of distinct rows rather than of pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

__all__ = ["Design", "Units", "fit_l1", "fit_logistic", "fit_with_draws", "log_loss", "merge_units", "sigmoid"]


def sigmoid(z: Array | float) -> Array:
    return np.asarray(1.0 / (1.0 + np.exp(-np.asarray(z, dtype=float))))


def fit_logistic(
    x: Array, y: Array, w: Array, ridge: float = 0.0, iters: int = 100, separation_ridge: float = 1e-3
) -> Array:
    """Maximise Σ w·[y log μ + (1−y) log(1−μ)] − ridge/2·|θ|², μ = σ(xθ), by Newton's method
    (IRLS), for each row of weights at once. x (U, p), y (U,) in [0, 1], w (R, U) -> θ (R, p).

    With ridge = 0 this is the maximum-likelihood fit, iterated until every Newton step is
    below 1e-11 (relative). A row whose fit does not converge — a separated resample, whose
    MLE is at infinity — is refitted with `separation_ridge`, which holds it at a large
    finite value.
    """
    theta, done = _newton(x, y, w, ridge, iters)
    if not done.all() and separation_ridge > ridge:
        theta[~done] = _newton(x, y, w[~done], separation_ridge, iters)[0]
    return theta


def _newton(x: Array, y: Array, w: Array, ridge: float, iters: int) -> tuple[Array, BoolArray]:
    r, p = w.shape[0], x.shape[1]
    theta = np.zeros((r, p))
    done = np.zeros(r, dtype=bool)
    xx = (x[:, :, None] * x[:, None, :]).reshape(x.shape[0], p * p)  # outer products, one row per unit
    # ridge enters the gradient; the tiny jitter only keeps the Newton system solvable (a column
    # absent from a resample) and leaves the fixed point — the maximum — where it is
    eye = np.eye(p) * (ridge + 1e-12)
    for _ in range(iters):
        act = np.flatnonzero(~done)
        if act.size == 0:
            break
        th, wa = theta[act], w[act]
        mu = sigmoid(th @ x.T)
        grad = (wa * (y - mu)) @ x - ridge * th
        hess = ((wa * mu * (1.0 - mu)) @ xx).reshape(act.size, p, p) + eye
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        step = np.clip(step, -5.0, 5.0)  # a separated resample must not jump to infinity in one go
        theta[act] = th + step
        done[act] = (np.abs(step) <= 1e-11 * (1.0 + np.abs(theta[act]))).all(axis=1)
    return theta, done


def log_loss(x: Array, y: Array, w: Array, theta: Array) -> Array:
    """−Σ w·[y log μ + (1−y) log(1−μ)] for each row of (w, θ): (R, U), (R, p) -> (R,)."""
    z = theta @ x.T
    return np.asarray((w * (y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z))).sum(axis=1))


def fit_l1(x: Array, y: Array, w: Array, lam: float | Array, iters: int = 200, sweeps: int = 30) -> Array:
    """Minimise −Σ w·[y log μ + (1−y) log(1−μ)] + lam·|θ|₁ for each row of weights at once.

    Proximal Newton: a quadratic model of the log-loss at θ, its L1 sub-problem solved by
    coordinate descent (soft-thresholding gives exact zeros), then a backtracking step on the
    true objective. Every coefficient is penalised (there is no separate intercept), as in
    scikit-learn's liblinear with fit_intercept=False. lam = 1/C in scikit-learn's terms; a
    vector gives each row of weights its own λ.
    """
    r, p = w.shape[0], x.shape[1]
    lam_r = np.broadcast_to(np.asarray(lam, dtype=float), (r,))
    theta = np.zeros((r, p))
    xx = (x[:, :, None] * x[:, None, :]).reshape(x.shape[0], p * p)

    def objective(th: Array) -> Array:
        return log_loss(x, y, w, th) + lam_r * np.abs(th).sum(axis=1)

    obj = objective(theta)
    for _ in range(iters):
        mu = sigmoid(theta @ x.T)
        g = -(w * (y - mu)) @ x
        h = ((w * mu * (1.0 - mu)) @ xx).reshape(r, p, p) + np.eye(p) * 1e-12
        z = theta.copy()
        for _ in range(sweeps):
            for j in range(p):
                c = g[:, j] + np.einsum("rk,rk->r", h[:, j, :], z - theta) - h[:, j, j] * (z[:, j] - theta[:, j])
                u = theta[:, j] - c / h[:, j, j]
                z[:, j] = np.sign(u) * np.maximum(np.abs(u) - lam_r / h[:, j, j], 0.0)
        d = z - theta
        decrease = np.einsum("rp,rp->r", g, d) + lam_r * (np.abs(z).sum(axis=1) - np.abs(theta).sum(axis=1))
        t = np.ones(r)
        new = objective(theta + d)
        for _ in range(40):  # halve the step where the objective did not fall enough
            bad = new > obj + 0.25 * t * decrease + 1e-12 * np.abs(obj)
            if not bad.any():
                break
            t = np.where(bad, t / 2, t)
            new = np.where(bad, objective(theta + t[:, None] * d), new)
        step = t[:, None] * d
        theta, obj = theta + step, new
        if (np.abs(step) <= 1e-11 * (1.0 + np.abs(theta))).all():
            break
    return theta


@dataclass(frozen=True, eq=False)
class Design:
    """The regression a fit solves: rows x (n, p) with outcomes y in [0, 1] (ties ½), the
    column names, and the resampling unit (the pair) each row belongs to."""

    columns: tuple[str, ...]
    x: Array
    y: Array
    unit: IntArray


@dataclass(frozen=True)
class Units:
    """Distinct units (each owning `m` rows of a regression) with how often each occurs."""

    x: Array  # (K·m, p) rows, unit by unit
    y: Array  # (K·m,)
    rep: IntArray  # row -> distinct unit
    counts: Array  # (K,)


def merge_units(x: Array, y: Array, unit: IntArray) -> Units:
    """Merge identical units, so a bootstrap costs by distinct units rather than by pairs."""
    per = np.bincount(unit)
    m = int(per[0])
    if not np.all(per == m):
        raise ValueError("every unit must own the same number of rows")
    order = np.argsort(unit, kind="stable")
    p = x.shape[1]
    sig = np.concatenate([x[order], y[order, None]], axis=1).reshape(per.size, m * (p + 1))
    kinds, counts = np.unique(sig, axis=0, return_counts=True)
    rows = kinds.reshape(len(kinds) * m, p + 1)
    return Units(rows[:, :p], rows[:, p], np.repeat(np.arange(len(kinds)), m), counts.astype(float))


def fit_with_draws(u: Units, draws: Array, lam: float = 0.0) -> tuple[Array, Array]:
    """θ at the data and θ for each bootstrap row of unit counts (L1 strength `lam`, 0 = none)."""

    def fit(w: Array) -> Array:
        return fit_l1(u.x, u.y, w, lam) if lam > 0 else fit_logistic(u.x, u.y, w)

    point = fit(u.counts[None, u.rep])[0]
    chunk = max(1, 4_000_000 // max(1, u.y.size))  # bound the (resamples, rows) working arrays
    boot = (
        np.concatenate([fit(draws[i : i + chunk, u.rep]) for i in range(0, draws.shape[0], chunk)])
        if draws.size
        else draws
    )
    return point, boot
