#pragma once
// A search space written as data: named dimensions, each a distribution (real, log real, stepped
// real, integer, log integer, stepped integer, categorical), a simplex (mixture weights that sum
// to 1, each under its own cap), and any of them conditional on an earlier categorical's value.
// Samplers see internal dimensions only: a simplex of k parts is k reals u_i in [1e-6, 1], the
// weights p_i = -ln u_i / sum_j -ln u_j (flat Dirichlet under random sampling, Optuna's FAQ
// recipe), with each capped weight held at its cap and the excess shared by the others in their
// proportions (water filling), so every proposal is a valid mixture.
#include <map>
#include <string>
#include <vector>

#include "orrery/host/search/distribution.h"
#include "orrery/json.h"

namespace orrery::search {

struct Dimension {
  std::string name;
  bool simplex = false;
  Distribution dist;               // when not a simplex
  std::vector<std::string> parts;  // a simplex's components
  std::vector<double> caps;        // their upper bounds (1: none)
  std::string when;                // active only when this earlier categorical ...
  std::vector<Json> when_values;   // ... takes one of these values

  static Dimension of(std::string name, Distribution dist);
  static Dimension mixture(std::string name, std::vector<std::string> parts, std::vector<double> caps);
  // This dimension, active only when `parent` (an earlier categorical) takes one of `values`.
  Dimension only_when(std::string parent, std::vector<Json> values) &&;

  // The sampler's dimensions behind this one: {name} for a distribution, {name/part, ...} for
  // a simplex.
  std::vector<std::pair<std::string, Distribution>> internal() const;
};

class SearchSpace {
 public:
  SearchSpace() = default;
  // Checks every dimension (names, ranges, caps summing to at least 1, conditions naming an
  // earlier categorical and one of its choices); errors name the dimension.
  explicit SearchSpace(std::vector<Dimension> dims);

  const std::vector<Dimension>& dims() const { return dims_; }
  // Every internal dimension by name.
  std::map<std::string, Distribution> internal() const;

  // Is `d` active given the external values drawn so far?
  static bool active(const Dimension& d, const Json& external);
  // External values (a JSON object by dimension name) from internal ones; inactive or missing
  // dimensions are left out.
  Json external(const std::map<std::string, double>& internal) const;
  // The internal values of a (possibly partial) external configuration, checked against the
  // space: an enqueued trial. Throws naming the dimension at fault.
  std::map<std::string, double> internal_of(const Json& external) const;

  Json to_json() const;
  static SearchSpace from_json(const Json& j);
  bool operator==(const SearchSpace& o) const { return to_json() == o.to_json(); }

 private:
  std::vector<Dimension> dims_;
};

// Mixture weights from a simplex's internal values, under the caps (see above).
std::vector<double> simplex_weights(const std::vector<double>& u, const std::vector<double>& caps);

}  // namespace orrery::search
