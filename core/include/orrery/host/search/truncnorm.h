#pragma once
// The truncated normal distribution of a TPE kernel, computed in log space as Optuna 4.6's
// samplers/_tpe/_truncnorm.py does (so the tails stay accurate where a plain CDF difference
// would cancel). a and b are the truncation bounds in standard units.
namespace orrery::search::truncnorm {

// log Phi(a), with the asymptotic series below -20 and -Phi(-a) above 6.
double log_ndtr(double a);
// log of the standard normal mass within [a, b].
double log_gauss_mass(double a, double b);
// The quantile q in (0, 1) of N(0, 1) truncated to [a, b], in standard units.
double ppf(double q, double a, double b);
// log density at x of N(loc, scale^2) truncated to [loc + a scale, loc + b scale].
double log_pdf(double x, double a, double b, double loc, double scale);

}  // namespace orrery::search::truncnorm
