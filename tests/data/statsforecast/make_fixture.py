"""Writes baselines.json: statsforecast's forecasts that tests/test_baselines.cpp checks ours against.

    python3 -m venv /tmp/sfenv && /tmp/sfenv/bin/pip install statsforecast
    /tmp/sfenv/bin/python tests/data/statsforecast/make_fixture.py

For each case: Naive, SeasonalNaive(m), AutoTheta(season_length=m) and AutoETS(season_length=m)
with level=[80] (the 0.1 and 0.9 quantiles), called through the models' forecast() as
StatsForecast does, on float64 data. Besides their outputs it records what the C++ test needs
to explain differences:
  - theta: the chosen model and its parameters, and the quantiles its simulated intervals tend
    to with many paths (statsforecast's own sampler, 200000 paths instead of 200);
  - ets: the chosen form, its parameters and AICc, and the 0.1 / 0.9 quantiles of 100000
    paths simulated from the fitted model (statsforecast's simulate_ets), the reference for
    forms whose analytic intervals statsforecast gets wrong (class 3, MAA).
"""
import json
import os

import numpy as np
import pandas as pd
import statsforecast
from statsforecast.ets import ets_f, simulate_ets
from statsforecast.models import AutoETS, AutoTheta, Naive, SeasonalNaive
from statsforecast.theta import auto_theta, compute_pi_samples

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
THETA_PATHS, ETS_PATHS = 200_000, 100_000


def csv(name):
    return pd.read_csv(os.path.join(ROOT, "assets", "data", name))["value"].to_numpy(np.float64)


def floats(a):
    return [float(v) for v in a]


def out(d):
    return {"mean": floats(d["mean"]), "lo": floats(d["lo-80"]), "hi": floats(d["hi-80"])}


def theta_limit(y, m, h):
    t = auto_theta(y, m)
    e = t["residuals"][3:]
    sigma = np.std(e if len(e) >= 2 else t["residuals"], ddof=1)
    s = compute_pi_samples(t["n"], h, t["states"], sigma, t["par"]["alpha"], t["par"]["theta"],
                           t["mean_y"], seed=0, n_samples=THETA_PATHS).astype(np.float64)
    lo, hi = np.quantile(s, 0.1, axis=1), np.quantile(s, 0.9, axis=1)
    if t.get("decompose", False):
        f = np.tile(t["seas_forecast"]["mean"], h)[:h]
        lo, hi = (lo * f, hi * f) if t["decomposition_type"] == "multiplicative" else (lo + f, hi + f)
    par = {k: float(v) for k, v in t["par"].items()}
    return {"model": t["modeltype"], "params": par, "limit_lo": floats(lo), "limit_hi": floats(hi)}


def ets_info(y, m, h):
    e = ets_f(y, m)
    # simulate_ets reads an undamped model's phi (NaN) as 0, which drops the slope from every
    # simulated step; give it the phi = 1 the model means.
    par = e["par"].copy()
    if np.isnan(par[3]):
        par[3] = 1.0
    sim = simulate_ets(dict(e, par=par), h, ETS_PATHS, seed=1)
    form = e["components"]  # e.g. "MAAN": error, trend, season, damped flag
    name = form[0] + form[1] + ("d" if form[3] == "D" else "") + form[2]
    par = [None if np.isnan(v) else float(v) for v in e["par"][:4]]
    return {"form": name, "aicc": float(e["aicc"]), "alpha_beta_gamma_phi": par,
            "sim_lo": floats(np.quantile(sim, 0.1, axis=0)), "sim_hi": floats(np.quantile(sim, 0.9, axis=0))}


def case(name, y, m, h, source):
    c = {"name": name, "season": m, "horizon": h, **source}
    c["naive"] = out(Naive().forecast(y=y, h=h, level=[80]))
    c["seasonal_naive"] = out(SeasonalNaive(season_length=m).forecast(y=y, h=h, level=[80]))
    c["theta"] = out(AutoTheta(season_length=m).forecast(y=y, h=h, level=[80]))
    c["theta"].update(theta_limit(y, m, h))
    c["ets"] = out(AutoETS(season_length=m).forecast(y=y, h=h, level=[80]))
    c["ets"].update(ets_info(y, m, h))
    return c


def main():
    walk = 100 + np.cumsum(np.random.default_rng(42).normal(size=100))
    cases = [
        case("AirPassengers", csv("air_passengers.csv"), 12, 12, {"csv": "assets/data/air_passengers.csv"}),
        case("AirPassengers h24", csv("air_passengers.csv"), 12, 24, {"csv": "assets/data/air_passengers.csv"}),
        case("co2", csv("co2.csv"), 12, 12, {"csv": "assets/data/co2.csv"}),
        case("nottem", csv("nottem.csv"), 12, 12, {"csv": "assets/data/nottem.csv"}),
        case("random walk", walk, 1, 12, {"values": floats(walk)}),
    ]
    doc = {
        "statsforecast": statsforecast.__version__,
        "numpy": np.__version__,
        "generator": "tests/data/statsforecast/make_fixture.py",
        "random_walk": "100 + cumsum(numpy.random.default_rng(42).normal(size=100))",
        "level": 80,
        "cases": cases,
    }
    with open(os.path.join(HERE, "baselines.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
