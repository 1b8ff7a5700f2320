"""Writes arima.json: statsforecast's ARIMA fits and forecasts that tests/test_arima.cpp checks
ours against.

    python3 -m venv /tmp/sfenv && /tmp/sfenv/bin/pip install statsforecast==2.1.1
    /tmp/sfenv/bin/python tests/data/statsforecast/make_arima_fixture.py

Two kinds of case, each carrying its own data (history, covariates, their horizon values):
  - "fixed": statsforecast.arima.Arima with a given order, CSS-ML, regressors as xreg: the
    coefficients, sigma2 and log-likelihood the C++ fit must reach, and forecast_arima's mean and
    80% interval;
  - "auto": the AutoARIMA model (season_length=m, its defaults) fitted with and without the
    covariates as exogenous regressors, as StatsForecast calls it: the order it chose and its
    forecast with level=[80].
  - "stl": statsmodels' STL as statsforecast's mstl() calls it for the seasonal-difference test
    (seasonal window 11, seasonal degree 0): the seasonal and trend components.
The series are R's datasets bundled in assets/data: Seatbelts (drivers on the petrol price and
the February 1983 seat-belt law), airquality (ozone on temperature and wind, gaps forward-filled),
Seatbelts' rear-seat casualties on the petrol price, AirPassengers and LakeHuron.
"""
import json
import os

import numpy as np
import pandas as pd
from statsforecast.arima import Arima, forecast_arima
from statsforecast.models import AutoARIMA

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def table(name):
    return pd.read_csv(os.path.join(ROOT, "assets", "data", name))


def floats(a):
    return [float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def seatbelts():
    t = table("seatbelts.csv")
    law = (np.arange(len(t)) >= 14 * 12 + 1).astype(np.float64)  # from February 1983
    return t["drivers"].to_numpy(np.float64), np.column_stack([t["PetrolPrice"].to_numpy(np.float64), law])


def airquality():
    t = table("airquality.csv").ffill()
    return t["ozone"].to_numpy(np.float64), t[["temp", "wind"]].to_numpy(np.float64)


def rear():
    t = table("seatbelts.csv")
    return t["rear"].to_numpy(np.float64), t[["PetrolPrice"]].to_numpy(np.float64)


def plain(name):
    return table(name)["value"].to_numpy(np.float64), None


def december():
    y = plain("air_passengers.csv")[0]
    return y, (np.arange(len(y)) % 12 == 11).astype(np.float64).reshape(-1, 1)  # a dummy of period 12


def window(name, data, cut, h, m):
    y, x = data
    c = {"name": name, "season": m, "horizon": h, "history": floats(y[:cut])}
    if x is not None:
        c["covariates"] = [floats(x[:cut, j]) for j in range(x.shape[1])]
        c["future"] = [floats(x[cut:cut + h, j]) for j in range(x.shape[1])]
    return c, y[:cut], (None if x is None else x[:cut]), (None if x is None else x[cut:cut + h])


def fixed(name, data, cut, h, m, order, seasonal, mean=True, drift=False):
    c, y, x, xf = window(name, data, cut, h, m)
    fit = Arima(y, order=order, seasonal={"order": seasonal, "period": m}, xreg=x, include_mean=mean,
                include_drift=drift, method="CSS-ML")
    f = forecast_arima(fit, h=h, xreg=xf, level=[80])
    c.update(order=list(order), seasonal=list(seasonal), mean=mean, drift=drift,
             coef={k: float(v) for k, v in fit["coef"].items()}, sigma2=float(fit["sigma2"]),
             loglik=float(fit["loglik"]), aic=float(fit["aic"]),
             forecast={"mean": floats(f["mean"]), "lo": floats(f["lower"]), "hi": floats(f["upper"])})
    return c


def auto(name, data, cut, h, m):
    c, y, x, xf = window(name, data, cut, h, m)
    runs = {"without": (None, None)} if x is None else {"with": (x, xf), "without": (None, None)}
    for key, (xx, ff) in runs.items():
        model = AutoARIMA(season_length=m)
        model.fit(y, xx)
        f = model.predict(h, X=ff, level=[80])
        arma = model.model_["arma"]  # p, q, P, Q, m, d, D
        c[key] = {"order": [arma[0], arma[5], arma[1]], "seasonal": [arma[2], arma[6], arma[3]],
                  "coef": {k: float(v) for k, v in model.model_["coef"].items()},
                  "mean": floats(f["mean"]), "lo": floats(f["lo-80"]), "hi": floats(f["hi-80"])}
    return c


cases = [
    fixed("seatbelts drivers (1,0,0)(0,1,1)[12] + petrol, law", seatbelts(), 180, 12, 12, (1, 0, 0), (0, 1, 1)),
    fixed("airquality ozone (1,0,1) + mean, temp, wind", airquality(), 139, 14, 7, (1, 0, 1), (0, 0, 0)),
    fixed("seatbelts rear (1,1,0) + drift, petrol", rear(), 150, 12, 1, (1, 1, 0), (0, 0, 0), drift=True),
    fixed("AirPassengers (0,1,1)(0,1,1)[12]", plain("air_passengers.csv"), 132, 12, 12, (0, 1, 1), (0, 1, 1)),
    fixed("LakeHuron (2,0,1) + mean", plain("lake_huron.csv"), 88, 10, 1, (2, 0, 1), (0, 0, 0)),
    fixed("AirPassengers (0,0,0)(0,1,1)[12]", plain("air_passengers.csv"), 132, 12, 12, (0, 0, 0), (0, 1, 1)),
    fixed("airquality ozone (0,1,0)(0,0,1)[7] + temp, wind", airquality(), 139, 14, 7, (0, 1, 0), (0, 0, 1)),
    auto("seatbelts drivers, cut 180", seatbelts(), 180, 12, 12),
    auto("seatbelts drivers, cut 174", seatbelts(), 174, 12, 12),
    auto("airquality ozone, cut 139", airquality(), 139, 14, 7),
    auto("airquality ozone, cut 125", airquality(), 125, 14, 7),
    auto("seatbelts rear, no season, cut 150", rear(), 150, 12, 1),
    auto("AirPassengers, cut 132", plain("air_passengers.csv"), 132, 12, 12),
    auto("LakeHuron, cut 88", plain("lake_huron.csv"), 88, 10, 1),
    auto("Nile, cut 90", plain("nile.csv"), 90, 10, 1),
    auto("AirPassengers with a December dummy, cut 132", december(), 132, 12, 12),
]
def stl_case(name, y, m):
    import statsmodels.api as sm
    f = sm.tsa.STL(y, period=m, seasonal=11, seasonal_deg=0).fit()
    return {"name": name, "season": m, "stl_input": floats(y), "seasonal": floats(f.seasonal), "trend": floats(f.trend)}


cases += [
    stl_case("AirPassengers", plain("air_passengers.csv")[0], 12),
    stl_case("nottem", plain("nottem.csv")[0], 12),
    stl_case("airquality ozone", airquality()[0], 7),
    stl_case("AirPassengers, 30 steps, m = 4", plain("air_passengers.csv")[0][:30], 4),
]
import statsforecast
with open(os.path.join(HERE, "arima.json"), "w") as f:
    json.dump({"statsforecast": statsforecast.__version__, "cases": cases}, f, indent=1)
print("wrote", len(cases), "cases")
