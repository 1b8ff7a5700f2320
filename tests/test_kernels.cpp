// kernels/: each CPU reference against the ATen code it replaces (the quantile head's pinball
// loss and its autograd gradient, the normuon plugin's step, orthogonalise.h's Polar Express),
// then, in a build with ORRERY_KERNELS_CUDA and a GPU present, each CUDA kernel against its CPU
// reference. Without either the CUDA cases say why with a WARN and check nothing.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "orrery/head.h"
#include "orrery/kernels/normuon.h"
#include "orrery/kernels/pinball.h"
#include "orrery/kernels/polar_express.h"
#include "orrery/optimizer.h"
#include "orrery/orthogonalise.h"
#include "orrery/host/registry.h"

#if defined(ORRERY_KERNELS_CUDA)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace ok = orrery::kernels;
using orrery::Json;
using orrery::PluginKind;

namespace {

// Small tensors: intra-op threads would only add spin-waits (see test_optimizers.cpp).
[[maybe_unused]] const bool single_threaded = (at::set_num_threads(1), true);

at::Tensor gaussian(std::vector<int64_t> shape, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, gen);
}

at::Tensor uniform(std::vector<int64_t> shape, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::rand(shape, gen);
}

std::vector<float> values(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kFloat).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

// max |ours - ref| / max |ref|: the error relative to the array's scale (0 when both are 0).
double rel_error(const std::vector<float>& ours, const std::vector<float>& ref) {
  REQUIRE(ours.size() == ref.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(ours[i]) - ref[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(ref[i])));
  }
  if (scale == 0) return diff;
  return diff / scale;
}

const orrery::Parametrisation& sp() {
  static auto p = orrery::Registry::global().create<PluginKind::parametrisation>("sp", Json::object());
  return *p;
}

// The quantile head plugin with the given levels, for its loss.
struct QuantileHead {
  std::unique_ptr<orrery::ParamFactory> factory = std::make_unique<orrery::ParamFactory>(
      sp(), at::make_generator<at::CPUGeneratorImpl>(0), at::TensorOptions());
  std::unique_ptr<orrery::Head> head;
  QuantileHead(const std::vector<double>& levels, int64_t patch) {
    orrery::HeadContext ctx{*factory, 8, patch};
    head = orrery::Registry::global().create<PluginKind::head>("quantile", Json{{"levels", levels}}, ctx);
  }
};

// One pinball problem: predictions (2, 3, 5, P = 4, Q), targets and weights (2, 3, 5, 4).
struct PinballCase {
  std::string name;
  std::vector<double> levels;
  at::Tensor out, target, weight;
  int64_t points() const { return target.numel(); }
  int64_t q() const { return static_cast<int64_t>(levels.size()); }
};

std::vector<PinballCase> pinball_cases() {
  const std::vector<int64_t> pts{2, 3, 5, 4};
  std::vector<PinballCase> cases;
  auto add = [&](std::string name, std::vector<double> levels, at::Tensor weight, uint64_t seed) {
    const int64_t q = static_cast<int64_t>(levels.size());
    at::Tensor target = gaussian(pts, seed);
    at::Tensor out = gaussian({2, 3, 5, 4, q}, seed + 1);
    // Exact ties (u = 0) on a third of the points' first level: at::maximum splits their gradient.
    at::Tensor tie = uniform(pts, seed + 2) < 1.0 / 3;
    out.select(-1, 0).copy_(at::where(tie, target, out.select(-1, 0)));
    cases.push_back({std::move(name), std::move(levels), out, target, weight});
  };
  const auto nine = orrery::nine_levels();
  add("nine levels, random weights", nine, uniform(pts, 10), 11);
  add("one level", {0.3}, uniform(pts, 20), 21);
  add("three levels, a partial 0/1 mask", {0.1, 0.5, 0.9}, (uniform(pts, 30) < 0.6).to(at::kFloat), 31);
  add("nine levels, everything masked", nine, at::zeros(pts), 41);
  add("weights summing below 1 (the clamp)", nine, at::full(pts, 0.005f), 51);
  return cases;
}

// The ATen loss and its gradient scaled by g, as the trainer's backward forms it.
std::pair<float, std::vector<float>> aten_pinball(const PinballCase& c, float g) {
  QuantileHead h(c.levels, 4);
  at::Tensor out = c.out.clone().requires_grad_(true);
  at::Tensor loss = h.head->loss(out, c.target, c.weight);
  loss.backward(at::full({}, g));
  return {loss.item<float>(), values(out.grad())};
}

// NorMuon options and the same step as the kernels' scalars.
struct NormuonCase {
  std::string name;
  Json options;
  bool nesterov, cautious;
  double weight_decay;
};

const std::vector<NormuonCase>& normuon_cases() {
  static const std::vector<NormuonCase> cases{
      {"nesterov, cautious decay", Json{{"weight_decay", 0.1}}, true, true, 0.1},
      {"plain momentum, plain decay",
       Json{{"weight_decay", 0.05}, {"nesterov", false}, {"cautious_wd", false}}, false, false, 0.05},
      {"no decay", Json{{"weight_decay", 0.0}, {"momentum", 0.8}, {"beta2", 0.5}}, true, true, 0.0},
  };
  return cases;
}

ok::NormuonStep kernel_step(const NormuonCase& c, int64_t rows, int64_t cols, double lr_mult) {
  const Json defaults{{"lr", 0.02}, {"momentum", 0.95}, {"beta2", 0.95}, {"eps", 1e-10}};
  auto get = [&](const char* key) { return c.options.value(key, defaults[key].get<double>()); };
  ok::NormuonStep s;
  s.lr = get("lr") * lr_mult;
  s.momentum = get("momentum");
  s.beta2 = get("beta2");
  s.eps = get("eps");
  s.decay = s.lr * c.weight_decay;
  s.scale = orrery::shape_scale(orrery::ShapeScale::spectral, rows, cols);  // the plugin's default
  s.nesterov = c.nesterov;
  s.cautious = c.cautious;
  return s;
}

const std::vector<std::vector<int64_t>>& matrix_shapes() {
  static const std::vector<std::vector<int64_t>> shapes{{16, 32}, {40, 12}, {24, 24}, {1, 8}};
  return shapes;
}

// Polar Express batches: (batch, rows, cols), wide, tall, square, a batch of one, row vectors.
const std::vector<std::vector<int64_t>>& batch_shapes() {
  static const std::vector<std::vector<int64_t>> shapes{{3, 8, 24}, {2, 40, 12}, {1, 16, 16}, {4, 1, 6}, {2, 7, 5}};
  return shapes;
}

// Tolerances: relative to the largest reference value, each about twice the worst error
// measured on these cases. Float32 Polar Express is itself only good to ~1e-5: its first
// polynomials have slopes near 20 at singular values close to 1, so rounding in any order of
// summation moves the result that much (ATen's float32 result differs from its own float64 one
// by up to 9e-6 on these shapes; the reference, accumulating in double, is as close to float64).
constexpr double kPinballLossTol = 1e-6;   // sums in double on both sides of a float rounding
constexpr double kPinballGradTol = 1e-6;   // the same float operations as autograd (measured 0)
constexpr double kPolarTol = 2.5e-5;       // measured 1.0e-5
// The CUDA kernel sums in float32 in cuBLAS's order, so its rounding is amplified as ATen's is,
// from another start: measured 3.4e-5 on an H100 (batch 4 of 1x6), three times ATen's.
[[maybe_unused]] constexpr double kPolarCudaTol = 1e-4;  // used by the CUDA build only
constexpr double kUpdateTol = 1e-5;        // measured 5e-6: p - p0 cancels digits of p ~ 3
constexpr double kNormuonTol = 1e-4;       // measured 4.9e-5 (v of a 1x8 row: twice O's error)

}  // namespace

TEST_CASE("the CPU pinball loss matches the quantile head's loss and its autograd gradient") {
  for (const PinballCase& c : pinball_cases()) {
    INFO(c.name);
    const std::vector<float> out = values(c.out), target = values(c.target), weight = values(c.weight);
    const std::vector<float> tau = values(at::tensor(c.levels));
    for (float g : {1.0f, 0.37f}) {
      const auto [ref_loss, ref_grad] = aten_pinball(c, g);
      float loss = -1;
      ok::pinball_forward_cpu(out.data(), target.data(), weight.data(), tau.data(), c.points(), c.q(), &loss);
      std::vector<float> grad(out.size(), -1.0f);
      ok::pinball_backward_cpu(out.data(), target.data(), weight.data(), tau.data(), c.points(), c.q(),
                               &g, grad.data());
      INFO("g = " << g << ", loss " << loss << " vs ATen " << ref_loss);
      CHECK(loss == Approx(ref_loss).epsilon(kPinballLossTol).margin(1e-12));
      CHECK(rel_error(grad, ref_grad) <= kPinballGradTol);
      if (c.weight.sum().item<double>() > 0) CHECK(loss > 0);  // the comparison is not of zeros
    }
  }
}

TEST_CASE("the CPU pinball gradient follows autograd's tie rule and the mask") {
  // One point, y = 1, level 0.25, weight 2 (so the denominator is 2): out = 1 is a tie,
  // d/d out = -(0.25 - 0.5) / 1 = 0.25; out = 0 (u > 0) gives -0.25; out = 3 (u < 0) gives 0.75.
  const float y = 1, w = 2, tau = 0.25f, g = 1;
  for (auto [o, expected] : {std::pair{1.0f, 0.25f}, {0.0f, -0.25f}, {3.0f, 0.75f}}) {
    float grad = 0;
    ok::pinball_backward_cpu(&o, &y, &w, &tau, 1, 1, &g, &grad);
    CHECK(grad == Approx(expected));
  }
  float loss = 0;
  const float out = 3, zero = 0;
  ok::pinball_forward_cpu(&out, &y, &zero, &tau, 1, 1, &loss);
  CHECK(loss == 0.0f);  // a masked point does not count
}

TEST_CASE("the CPU Polar Express matches orthogonalise.h's on batches of same-shape matrices") {
  for (const auto& shape : batch_shapes()) {
    const int64_t batch = shape[0], rows = shape[1], cols = shape[2];
    INFO("batch " << batch << " of " << rows << "x" << cols);
    at::Tensor G = gaussian(shape, 60 + rows);
    if (batch > 1) G[1].zero_();  // a zero matrix stays zero (the + 1e-6)
    std::vector<float> in = values(G), out(in.size(), -1.0f);
    ok::polar_express_cpu(in.data(), out.data(), batch, rows, cols);
    std::vector<at::Tensor> refs;
    for (int64_t b = 0; b < batch; ++b) refs.push_back(orrery::polar_express(G[b], at::kFloat));
    const std::vector<float> ref = values(at::stack(refs));
    const double err = rel_error(out, ref);
    INFO("relative error " << err);
    CHECK(err <= kPolarTol);
    // In place gives the same.
    ok::polar_express_cpu(in.data(), in.data(), batch, rows, cols);
    CHECK(in == out);
    // Not a comparison of near-zeros: the result is near-orthogonal, singular values around 1.
    const at::Tensor sv = at::linalg_svdvals(refs[0]);
    CHECK(sv.max().item<double>() > 0.5);
  }
}

TEST_CASE("the CPU NorMuon update matches normuon_normalise_ and cautious weight decay") {
  for (const NormuonCase& c : normuon_cases()) {
    for (const auto& shape : matrix_shapes()) {
      const int64_t rows = shape[0], cols = shape[1];
      INFO(c.name << ", " << rows << "x" << cols);
      const ok::NormuonStep s = kernel_step(c, rows, cols, 1.0);
      // An orthogonalised-looking O, a weight, and a second moment after some steps.
      at::Tensor O = orrery::polar_express(gaussian(shape, 70), at::kFloat);
      // A zero row (a neuron without gradient): cautious decay still applies there (O p >= 0).
      if (rows > 1) O[0].zero_();
      at::Tensor p = gaussian(shape, 71), v = uniform({rows, 1}, 72) / cols;
      std::vector<float> p_ours = values(p), v_ours = values(v);
      ok::normuon_update_cpu(p_ours.data(), v_ours.data(), values(O).data(), rows, cols, s);
      // The plugin's lines after orthogonalise().
      at::Tensor O2 = O.clone(), p2 = p.clone(), v2 = v.clone();
      orrery::normuon_normalise_(O2, v2, s.beta2, s.eps, -1);
      O2.mul_(s.scale);
      if (s.cautious) orrery::cautious_weight_decay_(p2, O2, s.decay);
      else if (s.decay != 0) p2.mul_(1.0 - s.decay);
      p2.sub_(O2, s.lr);
      CHECK(rel_error(v_ours, values(v2)) <= kUpdateTol);
      // The update, not the weight it is added to, carries the error: compare p - p0.
      CHECK(rel_error(values(at::tensor(p_ours).view(shape) - p), values(p2 - p)) <= kUpdateTol);
    }
  }
}

TEST_CASE("the CPU NorMuon step matches the normuon plugin's over three steps") {
  for (const NormuonCase& c : normuon_cases()) {
    for (const auto& shape : matrix_shapes()) {
      const int64_t rows = shape[0], cols = shape[1];
      INFO(c.name << ", " << rows << "x" << cols);
      orrery::Param param;
      param.info.name = "w";
      param.info.role = orrery::Role::hidden;
      param.info.fan_out = rows;
      param.info.fan_in = cols;
      param.info.shape = shape;
      param.tensor = gaussian(shape, 80).set_requires_grad(true);
      std::vector<orrery::Param> params{param};
      Json options = c.options;
      options["ortho_dtype"] = "float32";
      auto opt = orrery::Registry::global().create<PluginKind::optimizer>("normuon", options, params, sp());
      const double lr_mult = sp().lr_multiplier(param.info, orrery::OptimizerFamily::muon_like);
      const ok::NormuonStep s = kernel_step(c, rows, cols, lr_mult);

      std::vector<float> p = values(param.tensor), m(p.size(), 0.0f), v(rows, 0.0f);
      for (int step = 0; step < 3; ++step) {
        INFO("step " << step);
        const at::Tensor before = param.tensor.detach().clone();
        const at::Tensor g = gaussian(shape, 90 + step);
        param.tensor.mutable_grad() = g;
        opt->step({});
        ok::normuon_step_cpu(p.data(), values(g).data(), m.data(), v.data(), rows, cols, s);
        at::Tensor m_ref, v_ref;
        for (const auto& [name, t] : opt->state_tensors()) (name == "w.m" ? m_ref : v_ref) = t;
        CHECK(rel_error(m, values(m_ref)) <= kNormuonTol);
        CHECK(rel_error(v, values(v_ref)) <= kNormuonTol);
        const at::Tensor delta_ref = param.tensor.detach() - before;
        CHECK(delta_ref.abs().max().item<double>() > 1e-4);  // a step that moved the weight
        const double err = rel_error(values(at::tensor(p).view(shape) - before), values(delta_ref));
        INFO("update relative error " << err);
        CHECK(err <= kNormuonTol);
        // Continue from the plugin's weight so that each step is compared, not the drift.
        p = values(param.tensor);
        m = values(m_ref);
        v = values(v_ref);
      }
    }
  }
}

#if defined(ORRERY_KERNELS_CUDA)
namespace {

// Whether CUDA kernels can run here; WARNs the reason when not.
bool cuda_ready() {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    WARN("CUDA kernels built, but no GPU at run time (" << cudaGetErrorString(e) << "): CUDA parity skipped");
    return false;
  }
  return true;
}

void cuda_ok(cudaError_t e) {
  INFO(cudaGetErrorString(e));
  REQUIRE(e == cudaSuccess);
}

// A device copy of host floats (or `bytes` of scratch), freed at scope exit.
class Device {
 public:
  explicit Device(const std::vector<float>& host) : Device(host.size() * sizeof(float)) {
    cuda_ok(cudaMemcpy(ptr_, host.data(), bytes_, cudaMemcpyHostToDevice));
  }
  explicit Device(size_t bytes) : bytes_(bytes) { cuda_ok(cudaMalloc(&ptr_, std::max<size_t>(bytes, 1))); }
  ~Device() { cudaFree(ptr_); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  float* f() { return static_cast<float*>(ptr_); }
  void* raw() { return ptr_; }
  std::vector<float> host() {
    std::vector<float> out(bytes_ / sizeof(float));
    cuda_ok(cudaMemcpy(out.data(), ptr_, bytes_, cudaMemcpyDeviceToHost));
    return out;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_;
};

struct Cublas {
  cublasHandle_t handle = nullptr;
  Cublas() { REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS); }
  ~Cublas() { cublasDestroy(handle); }
};

}  // namespace

TEST_CASE("the CUDA pinball kernels match the CPU reference", "[cuda]") {
  if (!cuda_ready()) return;
  for (const PinballCase& c : pinball_cases()) {
    INFO(c.name);
    const std::vector<float> out = values(c.out), target = values(c.target), weight = values(c.weight);
    const std::vector<float> tau = values(at::tensor(c.levels));
    float loss = 0, g = 0.37f;
    std::vector<float> grad(out.size());
    ok::pinball_forward_cpu(out.data(), target.data(), weight.data(), tau.data(), c.points(), c.q(), &loss);
    ok::pinball_backward_cpu(out.data(), target.data(), weight.data(), tau.data(), c.points(), c.q(), &g, grad.data());
    Device d_out(out), d_target(target), d_weight(weight), d_tau(tau), d_g(std::vector<float>{g});
    Device d_loss(sizeof(float)), d_grad(out.size() * sizeof(float)), ws(ok::pinball_cuda_workspace_bytes());
    ok::pinball_forward_cuda(d_out.f(), d_target.f(), d_weight.f(), d_tau.f(), c.points(), c.q(), d_loss.f(), ws.raw(), nullptr);
    ok::pinball_backward_cuda(d_out.f(), d_target.f(), d_weight.f(), d_tau.f(), c.points(), c.q(), d_g.f(), d_grad.f(), ws.raw(), nullptr);
    cuda_ok(cudaDeviceSynchronize());
    CHECK(d_loss.host()[0] == Approx(loss).epsilon(1e-6).margin(1e-12));
    CHECK(rel_error(d_grad.host(), grad) <= 1e-6);
  }
}

TEST_CASE("the CUDA Polar Express matches the CPU reference", "[cuda]") {
  if (!cuda_ready()) return;
  Cublas blas;
  for (const auto& shape : batch_shapes()) {
    const int64_t batch = shape[0], rows = shape[1], cols = shape[2];
    INFO("batch " << batch << " of " << rows << "x" << cols);
    const std::vector<float> in = values(gaussian(shape, 100 + rows));
    std::vector<float> ref(in.size());
    ok::polar_express_cpu(in.data(), ref.data(), batch, rows, cols);
    Device d_in(in), d_out(in.size() * sizeof(float)), ws(ok::polar_express_cuda_workspace_bytes(batch, rows, cols));
    ok::polar_express_cuda(d_in.f(), d_out.f(), batch, rows, cols, ws.raw(), blas.handle, nullptr);
    cuda_ok(cudaDeviceSynchronize());
    CHECK(rel_error(d_out.host(), ref) <= kPolarCudaTol);
  }
}

TEST_CASE("the CUDA NorMuon step matches the CPU reference", "[cuda]") {
  if (!cuda_ready()) return;
  Cublas blas;
  for (const NormuonCase& c : normuon_cases()) {
    for (const auto& shape : matrix_shapes()) {
      const int64_t rows = shape[0], cols = shape[1];
      INFO(c.name << ", " << rows << "x" << cols);
      const ok::NormuonStep s = kernel_step(c, rows, cols, 1.0);
      std::vector<float> p = values(gaussian(shape, 110)), m = values(gaussian(shape, 111) * 0.1);
      std::vector<float> v = values(uniform({rows}, 112) / cols);
      const std::vector<float> g = values(gaussian(shape, 113)), p0 = p;
      Device d_p(p), d_m(m), d_v(v), d_g(g), ws(ok::normuon_cuda_workspace_bytes(rows, cols));
      ok::normuon_step_cpu(p.data(), g.data(), m.data(), v.data(), rows, cols, s);
      ok::normuon_step_cuda(d_p.f(), d_g.f(), d_m.f(), d_v.f(), rows, cols, s, ws.raw(), blas.handle, nullptr);
      cuda_ok(cudaDeviceSynchronize());
      CHECK(rel_error(d_m.host(), m) <= 1e-6);
      CHECK(rel_error(d_v.host(), v) <= kNormuonTol);
      std::vector<float> delta(p.size()), d_delta(p.size());
      const std::vector<float> p_gpu = d_p.host();
      for (size_t i = 0; i < p.size(); ++i) delta[i] = p[i] - p0[i], d_delta[i] = p_gpu[i] - p0[i];
      CHECK(rel_error(d_delta, delta) <= kNormuonTol);
    }
  }
}
#else
TEST_CASE("the CUDA kernels match the CPU references", "[cuda]") {
  WARN("kernels built without CUDA (ORRERY_CUDA is OFF): CUDA parity skipped");
}
#endif
