"""The training step `orrery bench train` times, written again in plain PyTorch, for benchmarking
only: the same toto2 layers, parametrisation scalars, loss, clipping and AdamW on the same
seeded batch and thread count, run eagerly (`--mode eager`) or through torch.compile
(`--mode compile`). `orrery bench train --reference "PYTHON tests/reference/bench_train_reference.py"`
runs it once per mode and prints Orrery's ratio to each. Prints `parameters N` (checked against
Orrery's count) and, last, `median_ms X`.

Mirrors plugins/arch/toto2/toto2.cpp, plugins/head/quantile/quantile.cpp, core/src/model/ops.cpp,
core/src/model/patching.cpp and Model::loss (core/src/model/model.cpp) op for op, so both sides do the same
work; the numbers need not match Orrery's bit for bit (other random weights). With --param umup
every u-muP scale is a scalar multiply in the forward or a ScaleGrad in the backward, exactly
where Orrery's shared ops put them. No numpy, no toto2 package: only torch.
"""
import argparse
import math
import statistics
import sys
import time
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

PRESETS = {  # d_model, num_layers, num_heads, as plugins/arch/toto2/toto2.cpp's kPresets
    "toto2-4m": (256, 4, 4), "toto2-22m": (512, 6, 8), "toto2-313m": (1024, 24, 16),
    "toto2-1b": (1536, 36, 24), "toto2-2.5b": (2048, 48, 32), "toto2-proxy10m": (256, 12, 4),
}
PATCH, LEVELS = 32, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
EPS = 1e-4


class ScaleGrad(torch.autograd.Function):
    """Identity forward, gradient times s backward: u-muP's scale_bwd (ops.cpp scale_grad)."""

    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.s, None


def scale_grad(x, s):
    return x if s == 1.0 or not x.requires_grad else ScaleGrad.apply(x, s)


class Param:
    """What the parametrisation plugins need of a parametrisation: sp, mup or umup scalars."""

    def __init__(self, name, d_model):
        self.name, self.width = name, d_model
        self.backward = name == "umup"
        r, m = math.sqrt(128 / math.log(128)), 0.75  # umup's residual_attn_ratio, residual_mult
        self.a_mlp = m * math.sqrt(2 / (1 + r * r))
        self.a_attn = r * self.a_mlp

    def init(self, shape, role, fan_in):
        if role == "bias" and self.name == "umup":
            return torch.zeros(shape)
        if self.name == "umup":
            return torch.randn(shape)
        bound = 1 / math.sqrt(fan_in)
        if role == "readout" and self.name == "mup":
            bound *= math.sqrt(self.width / 128)
        return torch.empty(shape).uniform_(-bound, bound)

    def multiplier(self, role, fan_in):
        if self.name == "umup":
            return 1 / fan_in if role == "readout" else 1 / math.sqrt(fan_in)
        if self.name == "mup" and role == "readout":
            return 128 / self.width
        return 1.0

    def lr_multiplier(self, role, fan_in, depth):
        d = 1 / math.sqrt(depth) if depth else 1.0
        if self.name == "umup":
            return d / math.sqrt(fan_in) if role in ("input", "hidden") else d
        if self.name == "mup" and role == "hidden":
            return 128 / self.width
        return 1.0

    def residual(self, index, count):
        if self.name != "umup":
            return 1.0, 1.0
        tau = 1.0
        if index >= 0:  # umup.cpp residual_weights
            n_attn, n_mlp = (index + 1) // 2, index // 2
            a = self.a_attn if index % 2 == 0 else self.a_mlp
            tau = a / math.sqrt(count / 2 + n_attn * self.a_attn ** 2 + n_mlp * self.a_mlp ** 2)
        norm = math.sqrt(1 + tau * tau)
        return tau / norm, 1 / norm

    def act_scale(self):
        return math.exp(0.8 * math.log(math.sqrt(2 / (1 - 1 / math.pi))) + 0.2 * math.log(2)) \
            if self.name == "umup" else 1.0

    def attention_scale(self, dh):
        return {"umup": 1 / dh, "sp": 1 / math.sqrt(dh), "mup": 8 / dh}[self.name]


class Linear(torch.nn.Module):
    """ops.cpp Linear: y = multiplier * (x W^T + b), with u-muP's gradient scales."""

    def __init__(self, p, fan_in, fan_out, role, bias, depth=0):
        super().__init__()
        self.p, self.role, self.fan_in, self.fan_out = p, role, fan_in, fan_out
        self.weight = torch.nn.Parameter(p.init((fan_out, fan_in), role, fan_in))
        self.bias = torch.nn.Parameter(p.init((fan_out,), "bias", fan_in)) if bias else None
        self.mult = p.multiplier(role, fan_in)
        self.weight.orrery = (role, fan_in, depth)
        if bias:
            self.bias.orrery = ("bias", fan_in, depth)

    def forward(self, x):
        w, b = self.weight, self.bias
        if self.p.backward:
            rows = x.numel() // x.shape[-1]
            g_in = 1 / math.sqrt(self.fan_out) if self.role == "readout" else self.mult
            g_w = 1 / math.sqrt(rows)
            x = scale_grad(x, g_in / self.mult)
            w = scale_grad(w, g_w / self.mult)
            b = scale_grad(b, g_w / self.mult) if b is not None else None
        y = F.linear(x, w, b)
        return y * self.mult if self.mult != 1.0 else y


def residual_add(h, x, a, b):
    return h + x if a == 1.0 and b == 1.0 else h * a + x * b


def residual(p, x, f, a, b):
    """ops.cpp Residual: u-muP moves the branch weight onto the branch input's gradient."""
    if p.backward and a != 0.0:
        h = f(scale_grad(x, a))
        return scale_grad(h, 1 / a) * a + x * b
    return residual_add(f(x), x, a, b)


def rms_norm(x):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + EPS).to(x.dtype)


class ResidualMLP(torch.nn.Module):
    def __init__(self, p, d_in, hidden, d_out, in_role, out_role):
        super().__init__()
        self.linear1 = Linear(p, d_in, hidden, in_role, True)
        self.linear2 = Linear(p, hidden, d_out, out_role, True)
        self.skip_proj = Linear(p, d_in, d_out, "readout" if out_role == "readout" else in_role, True)
        self.act = p.act_scale()
        self.a, self.b = p.residual(-1, 0)

    def forward(self, x):
        h = F.silu(self.linear1(x))
        if self.act != 1.0:
            h = h * self.act
        return residual_add(self.linear2(h), self.skip_proj(x), self.a, self.b)


def rotary(x, pos, dims, xpos_sign, centre, base=10000.0):
    """toto2.cpp rotary: interleaved pairs on the first `dims` of each head, with xPos."""
    pair = torch.arange(0, dims, 2, dtype=torch.float32, device=x.device)
    theta = torch.reciprocal(torch.pow(base, pair / dims))
    angles = torch.outer(pos, theta).repeat_interleave(2, -1)
    head, tail = x[..., :dims], x[..., dims:]
    pairs = head.unflatten(-1, (dims // 2, 2))
    rotated = torch.stack((-pairs[..., 1], pairs[..., 0]), -1).flatten(-2)
    out = head * angles.cos().to(x.dtype) + rotated * angles.sin().to(x.dtype)
    zeta = (pair + 0.4 * dims) / (1.4 * dims)
    power = (pos - centre) / 256.0
    s = torch.pow(zeta.unsqueeze(0), (xpos_sign * power).unsqueeze(1))
    return torch.cat((out * s.repeat_interleave(2, -1).to(x.dtype), tail), -1)


class Layer(torch.nn.Module):
    def __init__(self, p, d, heads, d_ff, index, layers, variate):
        super().__init__()
        self.p, self.d, self.heads, self.dh, self.variate = p, d, heads, d // heads, variate
        depth = layers
        self.in_proj = Linear(p, d, 3 * d, "hidden", True, depth)
        self.out_proj = Linear(p, d, d, "hidden", True, depth)
        self.per_dim = torch.nn.Parameter(torch.zeros(self.dh))  # PerDimScale starts at 0
        self.per_dim.orrery = ("gain", self.dh, depth)
        self.fc1 = Linear(p, d, 2 * d_ff, "hidden", False, depth)
        self.fc2 = Linear(p, d_ff, d, "hidden", False, depth)
        self.attn_w = p.residual(2 * index, 2 * layers)
        self.ffn_w = p.residual(2 * index + 1, 2 * layers)
        self.scale = p.attention_scale(self.dh)

    def attention(self, x, pos, centre):
        S, T = x.shape[0], x.shape[1]
        qkv = self.in_proj(x).unflatten(-1, (3, self.heads, self.dh)).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        g = self.per_dim
        if self.p.backward:
            g = scale_grad(g, math.sqrt(self.dh / q.numel()))
        q = q * (F.softplus(g) / math.log(2.0)).to(q.dtype)
        if not self.variate:
            q = rotary(q, pos, self.dh // 2 // 2 * 2, 1.0, centre)
            k = rotary(k, pos, self.dh // 2 // 2 * 2, -1.0, centre)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=not self.variate, scale=self.scale)
        return self.out_proj(o.transpose(1, 2).reshape(S, T, self.d))

    def ffn(self, x):
        gate, a = self.fc1(x).chunk(2, -1)
        return self.fc2(gate * F.silu(a))

    def forward(self, x, pos, centre):
        B, V, N, d = x.shape
        attend = lambda h: self.attention(rms_norm(h), pos, centre)  # noqa: E731
        if self.variate:  # across the variates at one patch, no positions, no mask
            xv = x.permute(0, 2, 1, 3).reshape(B * N, V, d)
            x = residual(self.p, xv, attend, *self.attn_w).reshape(B, N, V, d).permute(0, 2, 1, 3)
        else:  # causal along time
            x = residual(self.p, x.reshape(B * V, N, d), attend, *self.attn_w).reshape(B, V, N, d)
        return residual(self.p, x, lambda h: self.ffn(rms_norm(h)), *self.ffn_w)


def causal_patch_scale(values, observed):
    """patching.cpp causal_patch_scale: running float64 mean and std up to each patch's end."""
    T = values.shape[-1]
    N = T // PATCH
    m = observed.double()
    x = torch.where(observed, values.double(), 0.0)
    n_all = m.sum(-1, keepdim=True)
    first = (m.cumsum(-1) == 0).sum(-1, keepdim=True).clamp_max(T - 1)
    ref = x.gather(-1, first) * (n_all > 0).double()
    xs = (x - ref) * m

    def at_end(t):
        return t.unflatten(-1, (N, PATCH))[..., PATCH - 1]

    n, s1, s2 = at_end(m.cumsum(-1)), at_end(xs.cumsum(-1)), at_end((xs * xs).cumsum(-1))
    mean = s1 / n.clamp_min(1)
    var = (s2 - n * mean * mean).clamp_min(0) / (n - 1).clamp_min(1)
    scale = var.sqrt().clamp_min(1e-6)
    loc = torch.where(n > 0, mean + ref, 0.0)
    z = torch.where(observed, (x - loc.repeat_interleave(PATCH, -1)) / scale.repeat_interleave(PATCH, -1), 0.0)
    return z.float(), loc, scale, n.float()


class Toto2Loss(torch.nn.Module):
    """Model::loss with the toto2 architecture and the quantile head."""

    def __init__(self, p, d, layers, heads, device_type, bf16):
        super().__init__()
        d_ff = (4 * d * 2 // 3 + 7) // 8 * 8
        self.patch_proj = ResidualMLP(p, 2 * PATCH, 4 * d, d, "input", "hidden")
        self.layers = torch.nn.ModuleList(
            Layer(p, d, heads, d_ff, i, layers, variate=(i == layers - 1)) for i in range(layers))
        self.head = ResidualMLP(p, d, 4 * d, PATCH * len(LEVELS), "hidden", "readout")
        self.register_buffer("tau", torch.tensor(LEVELS))
        self.device_type, self.bf16 = device_type, bf16

    def forward(self, values, observed):
        B, V, T = values.shape
        N = T // PATCH
        z, loc, scale, count = causal_patch_scale(values, observed)
        flags = observed.logical_not().float().unflatten(-1, (N, PATCH))
        tokens = torch.cat((torch.asinh(z).unflatten(-1, (N, PATCH)), flags), -1)
        with torch.autocast(self.device_type, dtype=torch.bfloat16, enabled=self.bf16):
            x = self.patch_proj(tokens)
            pos = torch.arange(N, dtype=torch.float32, device=values.device)
            centre = float(N // 2)
            for layer in self.layers:
                x = layer(x, pos, centre)
            out = self.head(rms_norm(x)[:, :, : N - 1]).unflatten(-1, (PATCH, len(LEVELS)))
        out = out.float()
        nxt = values.unflatten(-1, (N, PATCH))[:, :, 1:]
        nxt_obs = observed.unflatten(-1, (N, PATCH))[:, :, 1:]
        target = torch.asinh((nxt - loc[:, :, : N - 1, None]) / scale[:, :, : N - 1, None]).float()
        target = torch.where(nxt_obs, target, 0.0)
        weight = (nxt_obs & (count[:, :, : N - 1] >= 2).unsqueeze(-1)).float()
        u = target.unsqueeze(-1) - out
        pinball = torch.maximum(self.tau * u, (self.tau - 1) * u).mean(-1)
        return (pinball * weight).sum() / weight.sum().clamp_min(1.0)


def optimizer(model, p, layers, implementation):
    """torch.optim.AdamW with Orrery's adamw plugin's per-parameter rates: one group per
    (learning-rate multiplier, weight decay), matrices decayed, vectors not. fused=True: the
    ATen kernel the adamw plugin calls (one pass per parameter), so the two steps differ in the
    model, not in the optimizer's implementation. --adamw default: PyTorch's default
    implementation (a loop of per-parameter ops on the CPU), as most scripts run it."""
    groups = {}
    for param in model.parameters():
        role, fan_in, depth = param.orrery
        lr = 1e-3 * p.lr_multiplier(role, fan_in, depth)
        wd = 0.01 if param.dim() == 2 else 0.0
        groups.setdefault((lr, wd), []).append(param)
    return torch.optim.AdamW([{"params": v, "lr": lr, "weight_decay": wd} for (lr, wd), v in groups.items()],
                             fused=implementation == "fused")


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in [("batch", 8), ("context", 512), ("variates", 1), ("repeats", 10),
                          ("warmup", 3), ("threads", 0)]:
        a.add_argument("--" + name, type=int, default=default)
    a.add_argument("--preset", default="toto2-4m", choices=sorted(PRESETS))
    a.add_argument("--param", default="umup", choices=["umup", "sp", "mup"])
    a.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    a.add_argument("--device", default="cpu")
    a.add_argument("--mode", default="eager", choices=["eager", "compile"])
    a.add_argument("--optimizer", default="adamw", choices=["adamw"])
    a.add_argument("--adamw", default="fused", choices=["fused", "default"])
    o = a.parse_args()
    if o.context % PATCH or o.context < 2 * PATCH:
        sys.exit(f"--context must be a multiple of {PATCH}, at least {2 * PATCH}")
    if o.threads:
        torch.set_num_threads(o.threads)
    torch.manual_seed(0)
    device = torch.device(o.device)
    d, layers, heads = PRESETS[o.preset]
    p = Param(o.param, d)
    model = Toto2Loss(p, d, layers, heads, device.type, o.precision == "bf16").to(device)
    print(f"parameters {sum(t.numel() for t in model.parameters())}", flush=True)
    opt = optimizer(model, p, layers, o.adamw)
    params = list(model.parameters())
    loss_fn = torch.compile(model) if o.mode == "compile" else model

    # The same seeded sine batch as the C++ bench (bench_common.cpp sine_batch).
    t = torch.arange(o.context, dtype=torch.float32)
    phase = torch.arange(o.batch * o.variates, dtype=torch.float32).view(o.batch, o.variates, 1)
    values = (10 + torch.sin(t / 24 + phase) + 0.3 * torch.sin(t / 168 + 2 * phase)).to(device)
    observed = torch.ones_like(values, dtype=torch.bool)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    times = []
    for r in range(o.warmup + o.repeats):
        sync()
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(values, observed)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sync()
        if r >= o.warmup:
            times.append((time.perf_counter() - start) * 1000)
    if not torch.isfinite(loss):
        sys.exit("the loss is not finite")
    print(f"median_ms {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
