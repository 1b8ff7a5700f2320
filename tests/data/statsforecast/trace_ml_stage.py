"""Why statsforecast's ARIMA fits stop short where the series is differenced (docs/covariates.md,
"Regression with ARIMA errors"): traces each scipy.optimize.minimize call of the seven fixed-order
fits that make_arima_fixture.py records, and shows that the Gaussian likelihood statsforecast's ML
stage minimises depends on the calls before it.

    /tmp/sfenv/bin/python tests/data/statsforecast/trace_ml_stage.py   (statsforecast==2.1.1)

statsforecast.arima.arima builds the state-space model once per fit and each likelihood
evaluation writes its final state covariance back into that model (arima_like is handed views of
mod["P"] and mod["Pn"]); upARIMA then resets only the ARMA block, so from the second evaluation on
the differenced states start with the variance the previous evaluation ended with (about 1e-21)
instead of the diffuse 1e6. Without differences there is no such block and nothing carries over.
"""
import os
import warnings

import numpy as np
from statsforecast import arima as A

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
source = open(os.path.join(HERE, "make_arima_fixture.py")).read()
exec(source[: source.index("def fixed(")])  # the data loaders and window(), nothing run

calls = []
plain_minimize = A.minimize


def traced(fun, x0, args=(), **kw):
    r = plain_minimize(fun, x0, args=args, **kw)
    calls.append((fun.__name__, int(r.status), int(r.nit), float(r.fun)))
    return r


A.minimize = traced
fixed = [
    ("seatbelts drivers (1,0,0)(0,1,1)[12] + petrol, law", seatbelts(), 180, 12, (1, 0, 0), (0, 1, 1), True, False),
    ("airquality ozone (1,0,1) + mean, temp, wind", airquality(), 139, 7, (1, 0, 1), (0, 0, 0), True, False),
    ("seatbelts rear (1,1,0) + drift, petrol", rear(), 150, 1, (1, 1, 0), (0, 0, 0), True, True),
    ("AirPassengers (0,1,1)(0,1,1)[12]", plain("air_passengers.csv"), 132, 12, (0, 1, 1), (0, 1, 1), True, False),
    ("LakeHuron (2,0,1) + mean", plain("lake_huron.csv"), 88, 1, (2, 0, 1), (0, 0, 0), True, False),
    ("AirPassengers (0,0,0)(0,1,1)[12]", plain("air_passengers.csv"), 132, 12, (0, 0, 0), (0, 1, 1), True, False),
    ("airquality ozone (0,1,0)(0,0,1)[7] + temp, wind", airquality(), 139, 7, (0, 1, 0), (0, 0, 1), True, False),
]
for name, data, cut, m, order, seasonal, mean, drift in fixed:
    c, y, x, _ = window(name, data, cut, 1, m)
    calls.clear()
    A.Arima(y, order=order, seasonal={"order": seasonal, "period": m}, xreg=x, include_mean=mean,
            include_drift=drift, method="CSS-ML")
    stages = "; ".join(f"{f}: status {s}, {n} iterations" for f, s, n, _ in calls)
    print(f"{name} (d + D = {order[1] + seasonal[1]}): {stages}")

# The same likelihood evaluated twice at one point, with another point between.
y = np.asarray(airquality()[0], dtype=float)[:139]
y = np.where(np.isnan(y), np.nanmean(y), y)
mod = A.make_arima(np.array([0.5]), np.array([-0.9]), np.array([1.0]), kappa=1e6)


def likelihood(phi, theta):
    mod["phi"], mod["theta"] = phi, theta
    mod["T"][: len(phi), 0] = phi
    mod["Pn"][:2, :2] = A.getQ0(phi, theta)
    mod["a"][:] = 0
    ssq, sumlog, nu, _ = A.arima_like(y, mod["phi"], mod["theta"], mod["delta"], mod["a"], mod["P"], mod["Pn"], 0, False)
    return 0.5 * (np.log(ssq / nu) + sumlog / nu)


first = likelihood(np.array([0.5]), np.array([-0.9]))
print(f"ARIMA(1,1,1) objective at (0.5, -0.9): first evaluation {first:.6f}, "
      f"the differenced state's start variance after it {mod['Pn'][2, 2]:.3g}")
likelihood(np.array([0.3]), np.array([-0.5]))
print(f"the same point after another evaluation: {likelihood(np.array([0.5]), np.array([-0.9])):.6f}")
