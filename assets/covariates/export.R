# Exports the covariate benchmark's own series from R's built-in `datasets` package (Debian
# bookworm's r-base-core, R 4.2.2), the ones whose covariates the zero-shot benchmark in
# ../data leaves out (scripts/covariate_benchmark.lua reads these and ../data's seatbelts and
# airquality). Licence: part of R 4.2.2, GPL-2 | GPL-3; the data come from the public sources on
# each object's R help page. Run from this folder:
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
