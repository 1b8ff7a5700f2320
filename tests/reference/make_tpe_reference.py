"""Golden values for Orrery's TPE sampler from Optuna 4.6 itself (tests/test_search.cpp).

Writes tests/data/tpe-reference.json: the gamma and weights tables, the Parzen estimators'
kernels (means, bandwidths, mixture weights, categorical rows) and their log densities at fixed
points for every kind of dimension, univariate and multivariate, and the split of complete,
pruned and running trials into "below" and "above", and whole studies under the median,
percentile and successive-halving pruners (where each trial was pruned), and the band of Optuna's
best-so-far curves on Branin over 30 seeds. Run with Optuna 4.6.0 installed:

    python3 -m venv /tmp/optuna && /tmp/optuna/bin/pip install optuna==4.6.0
    /tmp/optuna/bin/python tests/reference/make_tpe_reference.py
"""
import json
import math
import os

import numpy as np
import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers._tpe import sampler as tpe_sampler
from optuna.samplers._tpe.parzen_estimator import _ParzenEstimator, _ParzenEstimatorParameters
from optuna.samplers._tpe.probability_distributions import (
    _BatchedCategoricalDistributions, _BatchedDiscreteTruncNormDistributions)
from optuna.trial import TrialState, create_trial

assert optuna.__version__ == "4.6.0", optuna.__version__
optuna.logging.set_verbosity(optuna.logging.WARNING)


def dist_json(d):
    if isinstance(d, CategoricalDistribution):
        return {"kind": "categorical", "choices": list(d.choices)}
    kind = "float" if isinstance(d, FloatDistribution) else "int"
    return {"kind": kind, "low": d.low, "high": d.high, "log": d.log, "step": d.step}


SPACE = {
    "x": FloatDistribution(-5.0, 10.0),
    "lr": FloatDistribution(1e-4, 1e-1, log=True),
    "frac": FloatDistribution(0.0, 1.0, step=0.1),
    "layers": IntDistribution(1, 10),
    "width": IntDistribution(16, 1024, log=True),
    "even": IntDistribution(0, 20, step=2),
    "norm": CategoricalDistribution(["rms", "layer", "none", "scale"]),
}


def random_external(rng, d):
    """A value of d as a trial would hold it (not on a tie with another draw)."""
    if isinstance(d, CategoricalDistribution):
        return int(rng.randint(len(d.choices)))  # internal: the index
    if isinstance(d, FloatDistribution):
        if d.step is not None:
            k = rng.randint(int(round((d.high - d.low) / d.step)) + 1)
            return d.low + k * d.step
        if d.log:
            return float(math.exp(rng.uniform(math.log(d.low), math.log(d.high))))
        return float(rng.uniform(d.low, d.high))
    if d.log:
        return int(min(d.high, max(d.low, round(math.exp(rng.uniform(math.log(d.low), math.log(d.high)))))))
    k = rng.randint((d.high - d.low) // d.step + 1)
    return int(d.low + k * d.step)


def prior_mean(d):
    if d.log:
        lo, hi = (d.low - d.step / 2, d.high + d.step / 2) if isinstance(d, IntDistribution) else (d.low, d.high)
        return math.exp(0.5 * (math.log(lo) + math.log(hi)))
    return 0.5 * (d.low + d.high)


def draw_observations(rng, d, n, distinct):
    """n values of d. A univariate bandwidth sorts the means with the prior's; numpy's argsort does
    not promise an order for equal values (its SIMD sorts are not stable), so those cases have no
    ties, with each other or with the prior's mean, and Orrery's stable order is its own."""
    out = []
    while len(out) < n:
        v = random_external(rng, d)
        if distinct and not isinstance(d, CategoricalDistribution) and (v in out or v == prior_mean(d)):
            continue
        out.append(v)
    return np.array(out, dtype=float)


def estimator_case(rng, names, n_obs, multivariate, endpoints, prior_weight):
    space = {k: SPACE[k] for k in names}
    obs = {k: draw_observations(rng, space[k], n_obs, not multivariate) for k in names}
    params = _ParzenEstimatorParameters(
        prior_weight=prior_weight, consider_magic_clip=True, consider_endpoints=endpoints,
        weights=tpe_sampler.default_weights, multivariate=multivariate, categorical_distance_func={})
    mpe = _ParzenEstimator(obs, space, params)
    mix = mpe._mixture_distribution
    kernels = {}
    for name, d in zip(space, mix.distributions):
        if isinstance(d, _BatchedCategoricalDistributions):
            kernels[name] = {"weights": d.weights.tolist()}
        else:
            kernels[name] = {"mu": d.mu.tolist(), "sigma": d.sigma.tolist(), "low": d.low, "high": d.high,
                             "step": d.step if isinstance(d, _BatchedDiscreteTruncNormDistributions) else 0.0}
    points = {k: [random_external(rng, space[k]) for _ in range(7)] for k in names}
    log_pdf = mpe.log_pdf({k: np.array(v, dtype=float) for k, v in points.items()})
    return {"space": {k: dist_json(space[k]) for k in names}, "observations": {k: v.tolist() for k, v in obs.items()},
            "multivariate": multivariate, "consider_endpoints": endpoints, "prior_weight": prior_weight,
            "mixture_weights": mix.weights.tolist(), "kernels": kernels, "points": points,
            "log_pdf": log_pdf.tolist()}


def estimators():
    rng = np.random.RandomState(20251030)
    cases = []
    for name in SPACE:
        few = name in ("frac", "layers", "even")  # 10 or 11 values: at most 9 distinct draws
        for n in (0, 1, 2, 5, 9 if few else 30):
            for endpoints in (False, True):
                cases.append(estimator_case(rng, [name], n, False, endpoints, 1.0))
        cases.append(estimator_case(rng, [name], 8, False, False, 2.5))
    for n in (0, 1, 8, 40):
        cases.append(estimator_case(rng, sorted(SPACE), n, True, False, 1.0))
        cases.append(estimator_case(rng, ["lr", "x"], n, True, False, 1.0))
    return cases


def split_cases():
    """Trials in every state, split as TPE's _sample does: n = the non-running count."""
    rng = np.random.RandomState(7)
    dist = {"x": FloatDistribution(0, 1)}
    cases = []
    for n_complete, n_pruned, n_running, direction in ((12, 0, 0, "minimize"), (30, 6, 3, "minimize"),
                                                      (5, 9, 4, "maximize"), (0, 4, 2, "minimize"),
                                                      (260, 20, 8, "minimize")):
        study = optuna.create_study(direction=direction)
        trials_json = []
        states = ["complete"] * n_complete + ["pruned"] * n_pruned + ["running"] * n_running
        rng.shuffle(states)
        for state in states:
            x = float(rng.uniform())
            entry = {"state": state, "params": {"x": x}}
            if state == "complete":
                value = float(np.round(rng.normal(), 1))  # ties: the stable sort keeps trial order
                study.add_trial(create_trial(state=TrialState.COMPLETE, value=value, params={"x": x},
                                             distributions=dist))
                entry["value"] = value
            elif state == "pruned":
                steps = int(rng.randint(0, 4))  # some pruned trials never reported
                inter = {int(s * 10): float(rng.normal()) for s in range(steps)}
                if steps and rng.uniform() < 0.2:
                    inter[max(inter)] = float("nan")
                study.add_trial(create_trial(state=TrialState.PRUNED, params={"x": x}, distributions=dist,
                                             intermediate_values=inter))
                entry["intermediate"] = [[k, (None if math.isnan(v) else v)] for k, v in sorted(inter.items())]
            else:
                study.add_trial(create_trial(state=TrialState.RUNNING, params={"x": x}, distributions=dist))
            trials_json.append(entry)
        trials = study.get_trials(deepcopy=False)
        n = sum(t.state != TrialState.RUNNING for t in trials)
        below, above = tpe_sampler._split_trials(study, trials, tpe_sampler.default_gamma(n), False)
        cases.append({"direction": direction, "trials": trials_json, "n_below": tpe_sampler.default_gamma(n),
                      "below": [t.number for t in below], "above": [t.number for t in above]})
    return cases


def pruning_cases():
    """Whole studies run by Optuna with fixed learning curves: where each trial was pruned."""
    rng = np.random.RandomState(11)
    cases = []
    configs = [
        ("median", {}, "minimize"),
        ("median", {"n_startup_trials": 3, "n_warmup_steps": 4, "interval_steps": 3, "n_min_trials": 2}, "minimize"),
        ("median", {}, "maximize"),
        ("percentile", {"percentile": 25.0, "n_startup_trials": 2}, "minimize"),
        ("successive_halving", {}, "minimize"),
        ("successive_halving", {"min_resource": 2, "reduction_factor": 3}, "minimize"),
        ("successive_halving", {"min_resource": 1, "reduction_factor": 2, "min_early_stopping_rate": 1,
                                "bootstrap_count": 2}, "maximize"),
    ]
    for kind, options, direction in configs:
        n_trials, n_steps = 40, 30
        curves = []
        for _ in range(n_trials):
            level, speed = rng.uniform(0.5, 2.0), rng.uniform(0.02, 0.2)
            curve = [float(level * math.exp(-speed * s) + 0.05 * rng.normal()) for s in range(n_steps)]
            if rng.uniform() < 0.05:
                curve[int(rng.randint(n_steps))] = float("nan")
            curves.append(curve)
        steps = [int(s) for s in range(n_steps)]
        if kind == "median":
            pruner = optuna.pruners.MedianPruner(**options)
        elif kind == "percentile":
            pruner = optuna.pruners.PercentilePruner(**options)
        else:
            pruner = optuna.pruners.SuccessiveHalvingPruner(**options)
        study = optuna.create_study(direction=direction, pruner=pruner)
        outcome = []

        def objective(trial):
            curve = curves[trial.number]
            for step, v in zip(steps, curve):
                trial.report(v, step)
                if trial.should_prune():
                    outcome.append({"pruned_at": step})
                    raise optuna.TrialPruned()
            outcome.append({"pruned_at": None})
            return curve[-1] if not math.isnan(curve[-1]) else 1e9

        study.optimize(objective, n_trials=n_trials)
        cases.append({"pruner": kind, "options": options, "direction": direction,
                      "curves": [[None if math.isnan(v) else v for v in c] for c in curves],
                      "outcome": [o["pruned_at"] for o in outcome]})
    return cases


def branin_band():
    """Optuna's own TPE on Branin with three categorical distractors: 30 seeds x 100 trials, the
    5th, 50th and 95th percentiles over seeds of the best value so far after each trial."""
    def branin(x, y):
        b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
        return (y - b * x * x + c * x - 6) ** 2 + 10 * (1 - t) * math.cos(x) + 10

    def objective(trial):
        x = trial.suggest_float("x", -5, 10)
        y = trial.suggest_float("y", 0, 15)
        for k in ("c1", "c2", "c3"):
            trial.suggest_categorical(k, ["a", "b", "c", "d"])
        return branin(x, y)

    curves = []
    for seed in range(30):
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
        study.optimize(objective, n_trials=100)
        curves.append(np.minimum.accumulate([t.value for t in study.trials]))
    curves = np.array(curves)
    return {q: np.percentile(curves, p, axis=0).tolist() for q, p in (("p5", 5), ("p50", 50), ("p95", 95))}


def main():
    out = {
        "optuna": optuna.__version__,
        "gamma": {str(n): tpe_sampler.default_gamma(n) for n in range(0, 301)},
        "weights": {str(n): tpe_sampler.default_weights(n).tolist() for n in (0, 1, 24, 25, 26, 27, 40, 100)},
        "estimators": estimators(),
        "split": split_cases(),
        "pruning": pruning_cases(),
        "branin": branin_band(),
    }
    path = os.path.join(os.path.dirname(__file__), "..", "data", "tpe-reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.normpath(path)}: {len(out['estimators'])} estimators, {len(out['split'])} splits, "
          f"{len(out['pruning'])} pruned studies")


if __name__ == "__main__":
    main()
