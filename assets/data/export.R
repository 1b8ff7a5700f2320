# Exports the bundled benchmark from R's built-in `datasets` package (Debian bookworm's
# r-base-core, R 4.2.2): one CSV per data set (a `time` column, then one column per series)
# and manifest.json (frequency, source, licence, series, length). Run from this folder:
#   Rscript --vanilla export.R
# Regular `ts` objects keep R's time index (fractional years, as `time(x)` gives it);
# data frames with calendar data get ISO timestamps.
options(digits = 15)
entries <- list()

add <- function(name, frame, freq, source, what) {
  file <- paste0(name, ".csv")
  write.csv(frame, file, row.names = FALSE, na = "", quote = FALSE)
  cols <- setdiff(names(frame), "time")
  entries[[length(entries) + 1]] <<- sprintf(
    '  {"name": "%s", "file": "%s", "frequency": "%s", "series": %d, "length": %d, "source": "%s", "what": "%s"}',
    name, file, freq, length(cols), nrow(frame), source, what)
}

ts_frame <- function(x, names = NULL) {
  d <- data.frame(time = round(as.numeric(time(x)), 6), as.data.frame(as.matrix(x)), check.names = FALSE)
  if (NCOL(x) == 1) names(d)[2] <- "value"
  if (!is.null(names)) names(d)[-1] <- names
  d
}

# Yearly
add("nile", ts_frame(Nile), "A", "datasets::Nile", "annual flow of the Nile at Aswan, 1871-1970 (10^8 m^3)")
add("lynx", ts_frame(lynx), "A", "datasets::lynx", "Canadian lynx trappings, 1821-1934")
add("lake_huron", ts_frame(LakeHuron), "A", "datasets::LakeHuron", "level of Lake Huron, 1875-1972 (ft)")
add("sunspot_year", ts_frame(sunspot.year), "A", "datasets::sunspot.year", "yearly sunspot numbers, 1700-1988")
add("nhtemp", ts_frame(nhtemp), "A", "datasets::nhtemp", "mean annual temperature in New Haven, 1912-1971 (F)")
add("discoveries", ts_frame(discoveries), "A", "datasets::discoveries", "great inventions and discoveries per year, 1860-1959")
add("airmiles", ts_frame(airmiles), "A", "datasets::airmiles", "US airline passenger miles, 1937-1960")
add("treering", ts_frame(treering), "A", "datasets::treering", "normalised tree-ring widths, 6000 BC-1979")
# Quarterly
add("austres", ts_frame(austres), "Q", "datasets::austres", "Australian residents, 1971Q2-1993Q2 (thousands)")
add("johnson_johnson", ts_frame(JohnsonJohnson), "Q", "datasets::JohnsonJohnson", "Johnson & Johnson quarterly earnings per share, 1960-1980")
add("uk_gas", ts_frame(UKgas), "Q", "datasets::UKgas", "UK quarterly gas consumption, 1960-1986 (million therms)")
add("presidents", ts_frame(presidents), "Q", "datasets::presidents", "quarterly approval rating of US presidents, 1945-1974 (6 missing)")
# Monthly
add("air_passengers", ts_frame(AirPassengers), "M", "datasets::AirPassengers", "international airline passengers, 1949-1960 (thousands)")
add("co2", ts_frame(co2), "M", "datasets::co2", "Mauna Loa atmospheric CO2, 1959-1997 (ppm)")
add("nottem", ts_frame(nottem), "M", "datasets::nottem", "mean monthly air temperature at Nottingham Castle, 1920-1939 (F)")
add("uk_driver_deaths", ts_frame(UKDriverDeaths), "M", "datasets::UKDriverDeaths", "UK car drivers killed or seriously injured, 1969-1984")
# Seatbelts without its `law` column: a 0/1 indicator of the 1983 law, constant before it, so its
# MASE scale is zero on the first test window.
add("seatbelts", ts_frame(Seatbelts[, colnames(Seatbelts) != "law"]), "M", "datasets::Seatbelts",
    "UK road casualties and covariates around the 1983 seat-belt law, 1969-1984 (7 series)")
add("us_acc_deaths", ts_frame(USAccDeaths), "M", "datasets::USAccDeaths", "US accidental deaths, 1973-1978")
add("uk_lung_deaths", ts_frame(cbind(ldeaths, mdeaths, fdeaths), c("ldeaths", "mdeaths", "fdeaths")), "M",
    "datasets::ldeaths, mdeaths, fdeaths", "UK deaths from lung diseases, all, male and female, 1974-1979")
add("sunspot_month", ts_frame(sunspot.month), "M", "datasets::sunspot.month", "monthly sunspot numbers, 1749-2013")
# Business days
add("eu_stock_markets", ts_frame(EuStockMarkets), "B", "datasets::EuStockMarkets",
    "daily closing prices of DAX, SMI, CAC and FTSE, 1991-1998 (business days)")
# Daily
aq <- airquality
add("airquality", data.frame(time = sprintf("1973-%02d-%02d", aq$Month, aq$Day), ozone = aq$Ozone,
                             solar_r = aq$Solar.R, wind = aq$Wind, temp = aq$Temp), "D", "datasets::airquality",
    "daily air quality in New York, May-September 1973 (ozone has 37 missing days)")
# 10-minute
beaver_frame <- function(b) {  # on the full 10-minute grid: a skipped reading is a missing value
  minutes <- (b$day - 346) * 1440 + (b$time %/% 100) * 60 + b$time %% 100
  grid <- seq(min(minutes), max(minutes), by = 10)
  stamp <- as.POSIXct("1990-12-12 00:00:00", tz = "UTC") + 60 * grid
  data.frame(time = format(stamp, "%Y-%m-%d %H:%M:%S"), temp = b$temp[match(grid, minutes)])
}
add("beaver1", beaver_frame(beaver1), "10T", "datasets::beaver1", "body temperature of a beaver every 10 minutes (C)")
add("beaver2", beaver_frame(beaver2), "10T", "datasets::beaver2", "body temperature of a second beaver every 10 minutes (C)")
# Minutely
add("www_usage", ts_frame(WWWusage), "T", "datasets::WWWusage", "users connected to a server, one count per minute")

writeLines(c("{",
             '  "source": "R datasets package, R 4.2.2 (Debian bookworm r-base-core), exported by export.R",',
             '  "licence": "Part of R 4.2.2: GPL-2 | GPL-3; the data come from the public sources on each object\'s R help page",',
             '  "datasets": [', paste(entries, collapse = ",\n"), "  ]", "}"), "manifest.json")
