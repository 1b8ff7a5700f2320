#include "orrery/host/plugin_guard.h"

#include <c10/util/Exception.h>

#include "orrery/error.h"
#include "orrery/host/registry.h"

namespace orrery {

std::string current_exception_text() {
  try {
    throw;
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "it threw an exception that is not a std::exception";
  }
}

namespace {

// Calls `f`; anything but an orrery::Error leaves as one naming `who`.
template <class F>
auto guarded(const std::string& who, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (...) {
    throw Error(who + " failed: " + current_exception_text());
  }
}

class GuardedSource final : public DataSource {
 public:
  GuardedSource(std::unique_ptr<DataSource> inner, std::string who) : inner_(std::move(inner)), who_(std::move(who)) {}
  Batch sample(const SampleRequest& r) const override { return guarded(who_, [&] { return inner_->sample(r); }); }
  Json describe() const override { return guarded(who_, [&] { return inner_->describe(); }); }
  std::optional<int64_t> longest_series() const override {
    return guarded(who_, [&] { return inner_->longest_series(); });
  }
  std::vector<StoredSeries> stored_series() const override {
    return guarded(who_, [&] { return inner_->stored_series(); });
  }
  std::vector<std::string> static_covariates() const override {
    return guarded(who_, [&] { return inner_->static_covariates(); });
  }
  at::Tensor encode_text(std::string_view text) const override {
    return guarded(who_, [&] { return inner_->encode_text(text); });
  }
  std::string decode_text(const at::Tensor& values) const override {
    return guarded(who_, [&] { return inner_->decode_text(values); });
  }

 private:
  std::unique_ptr<DataSource> inner_;
  std::string who_;
};

class GuardedOptimizer final : public Optimizer {
 public:
  GuardedOptimizer(std::unique_ptr<Optimizer> inner, std::string who) : inner_(std::move(inner)), who_(std::move(who)) {}
  void step(const StepScalars& s) override { guarded(who_, [&] { inner_->step(s); }); }
  double base_lr() const override { return inner_->base_lr(); }
  std::vector<ParamGroupView> groups() const override { return guarded(who_, [&] { return inner_->groups(); }); }
  NamedTensors state_tensors() const override { return guarded(who_, [&] { return inner_->state_tensors(); }); }
  Json counters() const override { return guarded(who_, [&] { return inner_->counters(); }); }
  void restore_counters(const Json& c) override { guarded(who_, [&] { inner_->restore_counters(c); }); }

 private:
  std::unique_ptr<Optimizer> inner_;
  std::string who_;
};

}  // namespace

std::string plugin_label(const PluginInfo& p) {
  return std::string(kind_name(p.kind)) + " plugin '" + p.name + "' (" + p.path + ")";
}

std::unique_ptr<DataSource> guard_plugin(std::unique_ptr<DataSource> source, const PluginInfo& p) {
  return std::make_unique<GuardedSource>(std::move(source), plugin_label(p));
}

std::unique_ptr<Optimizer> guard_plugin(std::unique_ptr<Optimizer> optimizer, const PluginInfo& p) {
  return std::make_unique<GuardedOptimizer>(std::move(optimizer), plugin_label(p));
}

}  // namespace orrery
