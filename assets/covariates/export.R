# Exports the covariate benchmark's own series from R's built-in `datasets` package (Debian
# bookworm's r-base-core, R 4.2.2) and, for the orange juice, the AER package (r-cran-aer): the
# ones whose covariates the zero-shot benchmark in ../data leaves out (scripts/covariate_benchmark.lua
# reads these and ../data's seatbelts and airquality). Licence: part of R 4.2.2, GPL-2 | GPL-3
# (AER: GPL-2+); the data come from the public sources on each object's R help page. Run from
# this folder (apt-get install r-base-core r-cran-aer):
#   Rscript --vanilla export.R
options(digits = 15)

# Beavers: body temperature every 10 minutes with `activ`, 1 while the beaver is active outside
# its retreat. On the full 10-minute grid (as ../data/export.R lays the temperatures): a skipped
# reading leaves the temperature missing and carries the activity forward, so that a known-future
# covariate has no gap.
beaver_frame <- function(b, day0) {
  minutes <- (b$day - day0) * 1440 + (b$time %/% 100) * 60 + b$time %% 100
  grid <- seq(min(minutes), max(minutes), by = 10)
  at <- match(grid, minutes)
  activ <- b$activ[at]
  for (i in seq_along(activ)) if (is.na(activ[i])) activ[i] <- activ[i - 1]
  stamp <- as.POSIXct("1990-01-01 00:00:00", tz = "UTC") + 86400 * (day0 - 1) + 60 * grid
  data.frame(time = format(stamp, "%Y-%m-%d %H:%M:%S"), temp = b$temp[at], activ = activ)
}
write.csv(beaver_frame(beaver1, 346), "beaver1.csv", row.names = FALSE, na = "", quote = FALSE)
write.csv(beaver_frame(beaver2, 307), "beaver2.csv", row.names = FALSE, na = "", quote = FALSE)

# Freeny's quarterly revenue (log) with its price index, income level and market potential
# (logs), 1962Q2-1971Q4; R's lagged revenue column is left out (it is the target, one step back).
f <- freeny
write.csv(data.frame(time = round(as.numeric(time(f$y)), 6), revenue = as.numeric(f$y),
                     price_index = f$price.index, income_level = f$income.level,
                     market_potential = f$market.potential),
          "freeny.csv", row.names = FALSE, na = "", quote = FALSE)

# Box and Jenkins's sales with their leading indicator (R's BJsales and BJsales.lead, series M):
# 150 steps without a calendar, so no time column (the benchmark reads them in file order as a
# yearly series would be scored: a horizon of 6, no season). The indicator's changes lead the
# sales' by 3 steps (their cross-correlation at lag 3 is 0.72).
write.csv(data.frame(sales = as.numeric(BJsales), lead = as.numeric(BJsales.lead)),
          "bjsales.csv", row.names = FALSE, na = "", quote = FALSE)

# Stock and Watson's frozen orange juice (the AER package's FrozenJuice, Debian's r-cran-aer
# 1.2-10, GPL-2+; from Stock and Watson's Introduction to Econometrics, 2007): the producer price
# of frozen concentrate deflated by the producer price index for finished goods (x 100, so
# 1950-2000's real price), with the month's freezing degree days at Orlando airport, the freezes
# that cut Florida's orange crop: nonzero in 51 of the 612 months.
suppressPackageStartupMessages(library(AER))
data("FrozenJuice", package = "AER")
j <- FrozenJuice
write.csv(data.frame(time = round(as.numeric(time(j)), 6), real_price = 100 * as.numeric(j[, "price"] / j[, "ppi"]),
                     fdd = as.numeric(j[, "fdd"])),
          "frozen_juice.csv", row.names = FALSE, na = "", quote = FALSE)
