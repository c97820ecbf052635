#!/usr/bin/python3
"""Per-op timing: wavetrain's ops (bench/cuda_op_bench.cpp, wt_op_bench) against PyTorch's
equivalents, at the shapes of the shipped models' layers (models/*.toml at the decks' batches:
mlp 64, lenet 64, resnet 128, transformer_small 32), in the same run on the same GPU.

  --cases              print the cases: one line per distinct op and shape, with the layers
                       that call it and how often a training step does. wt_op_bench reads
                       this list, so both sides time exactly the same shapes.
  (default)            time every case in PyTorch; prints one line per case: "id=K us=T mode=M"
  --wavetrain FILE     also read wt_op_bench's lines (same form) and print one table: op, shape,
                       calls per step, wavetrain us, torch us, torch/wavetrain (above 1: wavetrain
                       faster), then each model's sum of calls x us on both sides.

Timing (both sides): inputs random (never zeros) and made before timing; one untimed call (plans,
workspaces); then REPS calls captured as one CUDA graph, replayed (3 untimed replays, then
REPLAYS timed ones, each between two CUDA events): the median replay over REPS is the per-call
time. An op that cannot be captured (one that reads a result back to the host) is timed the same
way issued eagerly, and marked "eager". FP32 with TF32 off. --device cpu times eagerly with the
host clock (to check this script where no GPU is).
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpu_reference import model_path, plan_layers  # noqa: E402  (the models' shapes)

ROWS = (("mlp", 64), ("lenet", 64), ("resnet", 128), ("transformer_small", 32))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", action="store_true", help="print the case list and exit")
    p.add_argument("--wavetrain", metavar="FILE", help="wt_op_bench's results: print the table")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--reps", type=int, default=20, help="calls per captured graph")
    p.add_argument("--replays", type=int, default=25, help="timed replays (median)")
    p.add_argument("--only", help="time only cases whose op contains this text")
    return p.parse_args(argv)


# ---- the cases: every op a training step of each model calls, with its shape -----------------

def product(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def layer_cases(kind, a, x, y, batch, first):
    """[(op, {param: int}, calls)] for one layer: x its input shape, y its output (per sample)."""
    B = batch
    if kind == "conv2d":
        g = dict(batch=B, cin=x[0], h=x[1], w=x[2], cout=a["out_channels"], k=a["kernel"],
                 stride=a.get("stride", 1), pad=a.get("padding", 0), bias=int(a.get("bias", True)))
        return [("conv2d_forward", g, 1), ("conv2d_backward", dict(g, dx=int(not first)), 1)]
    if kind in ("maxpool2d", "avgpool2d"):
        k = a["kernel"]
        g = dict(batch=B, c=x[0], h=x[1], w=x[2], k=k, stride=a.get("stride", k),
                 pad=a.get("padding", 0))
        return [(kind + "_forward", g, 1), (kind + "_backward", g, 1)]
    if kind == "batchnorm2d":
        s = dict(n=B, c=x[0], hw=x[1] * x[2])
        return [("batchnorm_forward_train", s, 1), ("batchnorm_backward", s, 1)]
    if kind in ("relu", "gelu"):
        n = dict(n=B * product(x))
        return [(kind + "_forward", n, 1), (kind + "_backward", n, 1)]
    if kind == "add":
        return [("sum_arrays", dict(n=B * product(x), count=len(a.get("inputs", [0, 0]))), 1)]
    if kind == "linear":
        s = dict(rows=B * product(x[:-1]), inp=x[-1], out=a["out_features"],
                 bias=int(a.get("bias", True)))
        return [("linear_forward", s, 1), ("linear_backward", dict(s, dx=int(not first)), 1)]
    if kind == "layernorm":
        s = dict(rows=B * product(x[:-1]), dim=x[-1])
        return [("layer_norm_forward", s, 1), ("layer_norm_backward", s, 1)]
    if kind == "embedding":
        s = dict(rows=B * product(x), vocab=a["vocab"], width=a["dim"])
        return [("token_ids", dict(n=s["rows"], vocab=a["vocab"]), 1), ("gather_rows", s, 1),
                ("scatter_add_rows", s, 1)]
    if kind == "position_embedding":
        s = dict(rows=B, width=product(x))
        return [("add_row", s, 1), ("add_column_sums", s, 1)]
    if kind == "causal_self_attention":
        T, d = x[0], x[1]
        dh, heads = d // a["heads"], a["heads"]
        qkv = dict(rows=B * T, inp=d, out=3 * d, bias=1)
        proj = dict(rows=B * T, inp=d, out=d, bias=1)
        # Each head's products batched over the samples; one softmax over every score matrix.
        def products(ta, tb, m, n, k):
            return dict(ta=ta, tb=tb, m=m, n=n, k=k, batch=B)
        softmax = dict(t=T, count=B * heads)
        return [("linear_forward", qkv, 1), ("linear_forward", proj, 1),
                ("gemm_batched", products(0, 1, T, T, dh), heads),      # scores
                ("causal_softmax", softmax, 1),
                ("gemm_batched", products(0, 0, T, dh, T), 2 * heads),  # context; dq
                ("gemm_batched", products(0, 1, T, T, dh), heads),      # dprobs
                ("gemm_batched", products(1, 0, T, dh, T), 2 * heads),  # dv, dk
                ("causal_softmax_backward", softmax, 1),
                ("linear_backward", dict(proj, dx=1), 1), ("linear_backward", dict(qkv, dx=1), 1)]
    if kind in ("softmax_xent", "token_softmax_xent"):
        n = B * (product(x[:-1]) if kind == "token_softmax_xent" else 1)
        return [("softmax_xent_forward", dict(n=n, k=x[-1]), 1),
                ("scale_by", dict(n=n * x[-1]), 1)]
    if kind == "global_avgpool":
        s = dict(batch=B, c=x[0], pixels=x[1] * x[2])
        return [("global_avgpool_forward", s, 1), ("global_avgpool_backward", s, 1)]
    return []  # flatten, dropout off: no kernel of their own


def model_cases(name, batch):
    plan, model = plan_layers(model_path(name))
    shapes = {"__input__": list(model["input"])}
    cases, params, seen_params = [], 0, False
    for layer, kind, a, inputs, shape, count in plan:
        x = shapes[inputs[0]]
        for op, p, calls in layer_cases(kind, a, x, shape, batch, not seen_params):
            cases.append((op, p, calls, layer))
        shapes[layer] = shape
        params += count
        seen_params = seen_params or count > 0
    optimizer = "adamw_update" if plan[0][1] == "embedding" else "sgd_update"
    for op in ("fill", "count_nonfinite", optimizer):  # gradients zeroed, checked, applied
        cases.append((op, dict(n=params), 1, "(all parameters)"))
    return cases


def all_cases():
    """[{id, op, params, calls: {model: calls}, layers: [model:layer]}], distinct (op, params)."""
    merged = {}
    for name, batch in ROWS:
        for op, p, calls, layer in model_cases(name, batch):
            key = (op, tuple(sorted(p.items())))
            c = merged.setdefault(key, {"op": op, "params": p, "calls": {}, "layers": []})
            c["calls"][name] = c["calls"].get(name, 0) + calls
            c["layers"].append(f"{name}:{layer}")
    cases = list(merged.values())
    for i, c in enumerate(cases):
        c["id"] = i
    return cases


def case_line(c):
    params = " ".join(f"{k}={v}" for k, v in c["params"].items())
    calls = ",".join(f"{m}:{n}" for m, n in c["calls"].items())
    return f"id={c['id']} op={c['op']} {params} calls={calls}"


# ---- PyTorch's equivalent of each op --------------------------------------------------------

def make_op(torch, op, p, device, gen=None):
    """A function of no arguments doing one call of `op` in PyTorch, its inputs already made.

    Inputs come from a CPU generator (`gen`): the CUDA generator is left to the ops that draw
    inside a captured graph (dropout), so an aborted capture cannot break every later case."""
    F = torch.nn.functional
    r = lambda *shape: torch.randn(*shape, generator=gen).to(device)  # noqa: E731
    ints = lambda high, n: torch.randint(0, high, (n,), generator=gen).to(device)  # noqa: E731
    grad = torch.autograd.grad

    def backward_of(fn, inputs, dy_shape):
        """PyTorch's own backward kernels for fn (autograd's saved nodes, replayed)."""
        y = fn(*inputs)
        dy = r(*dy_shape)
        wants = [t for t in inputs if t.requires_grad]
        return lambda: grad(y, wants, dy, retain_graph=True)

    if op in ("relu_forward", "gelu_forward"):
        x, f = r(p["n"]), torch.relu if op == "relu_forward" else F.gelu
        return lambda: f(x)
    if op == "relu_backward":
        y, dy = torch.relu(r(p["n"])), r(p["n"])
        return lambda: torch.ops.aten.threshold_backward(dy, y, 0)
    if op == "gelu_backward":
        x, dy = r(p["n"]), r(p["n"])
        return lambda: torch.ops.aten.gelu_backward(dy, x)
    if op == "sum_arrays":
        xs = [r(p["n"]) for _ in range(p["count"])]
        return lambda: torch.stack(xs).sum(0) if len(xs) > 2 else torch.add(xs[0], xs[1])
    if op == "scale_by":
        x, s = r(p["n"]), r(1)
        return lambda: torch.mul(x, s)
    if op == "fill":
        g = r(p["n"])
        return g.zero_
    if op == "linear_forward":
        x, w, b = r(p["rows"], p["inp"]), r(p["out"], p["inp"]), r(p["out"]) if p["bias"] else None
        return lambda: F.linear(x, w, b)
    if op == "linear_backward":
        x = r(p["rows"], p["inp"]).requires_grad_(bool(p["dx"]))
        w = r(p["out"], p["inp"]).requires_grad_()
        b = r(p["out"]).requires_grad_() if p["bias"] else None
        return backward_of(lambda x, w, *b: F.linear(x, w, *b), [x, w] + ([b] if b is not None else []),
                           (p["rows"], p["out"]))
    if op == "gemm":
        a = r(p["k"], p["m"]).t() if p["ta"] else r(p["m"], p["k"])
        b = r(p["n"], p["k"]).t() if p["tb"] else r(p["k"], p["n"])
        return lambda: torch.mm(a, b)
    if op in ("conv2d_forward", "conv2d_backward"):
        x = r(p["batch"], p["cin"], p["h"], p["w"]).requires_grad_(bool(p.get("dx", 0)))
        w = r(p["cout"], p["cin"], p["k"], p["k"]).requires_grad_()
        b = r(p["cout"]).requires_grad_() if p["bias"] else None
        conv = lambda x, w, *b: F.conv2d(x, w, b[0] if b else None, p["stride"], p["pad"])  # noqa
        inputs = [x, w] + ([b] if b is not None else [])
        if op == "conv2d_forward":
            detached = [t.detach() for t in inputs]
            return lambda: conv(*detached)
        with torch.no_grad():
            out_shape = conv(*inputs).shape
        return backward_of(conv, inputs, out_shape)
    if op.startswith(("maxpool2d", "avgpool2d")):
        x = r(p["batch"], p["c"], p["h"], p["w"]).requires_grad_()
        f = F.max_pool2d if op.startswith("max") else F.avg_pool2d
        pool = lambda x: f(x, p["k"], p["stride"], p["pad"])  # noqa: E731
        if op.endswith("forward"):
            xd = x.detach()
            return lambda: pool(xd)
        with torch.no_grad():
            out_shape = pool(x).shape
        return backward_of(pool, [x], out_shape)
    if op in ("batchnorm_forward_train", "batchnorm_backward"):
        x = r(p["n"], p["c"], p["hw"]).requires_grad_()
        w, b = r(p["c"]).requires_grad_(), r(p["c"]).requires_grad_()
        rm, rv = torch.zeros(p["c"], device=device), torch.ones(p["c"], device=device)
        bn = lambda x, w, b: F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)  # noqa: E731
        if op == "batchnorm_forward_train":
            xd, wd, bd = x.detach(), w.detach(), b.detach()
            return lambda: bn(xd, wd, bd)
        return backward_of(bn, [x, w, b], x.shape)
    if op in ("layer_norm_forward", "layer_norm_backward"):
        x = r(p["rows"], p["dim"]).requires_grad_()
        w, b = r(p["dim"]).requires_grad_(), r(p["dim"]).requires_grad_()
        ln = lambda x, w, b: F.layer_norm(x, (p["dim"],), w, b, 1e-5)  # noqa: E731
        if op == "layer_norm_forward":
            xd, wd, bd = x.detach(), w.detach(), b.detach()
            return lambda: ln(xd, wd, bd)
        return backward_of(ln, [x, w, b], x.shape)
    if op == "token_ids":  # float ids to integers, checked on the device (no read-back, as
        x = ints(p["vocab"], p["n"]).float()  # wavetrain's check slot; F.embedding's own assert)

        def token_ids():
            ids = x.long()
            torch._assert_async(((ids >= 0) & (ids < p["vocab"])).all())
            return ids
        return token_ids
    if op in ("gather_rows", "scatter_add_rows"):
        ids = ints(p["vocab"], p["rows"])
        table = r(p["vocab"], p["width"]).requires_grad_()
        if op == "gather_rows":
            td = table.detach()
            return lambda: F.embedding(ids, td)
        return backward_of(lambda t: F.embedding(ids, t), [table], (p["rows"], p["width"]))
    if op == "add_row":
        x, row = r(p["rows"], p["width"]), r(p["width"])
        return lambda: torch.add(x, row)
    if op == "add_column_sums":
        x, sums = r(p["rows"], p["width"]), r(p["width"])
        return lambda: sums.add_(x.sum(0))
    if op == "gemm_batched":  # torch.bmm on contiguous (batch, rows, cols) operands
        a = r(p["batch"], p["k"], p["m"]).transpose(1, 2) if p["ta"] else r(p["batch"], p["m"], p["k"])
        b = r(p["batch"], p["n"], p["k"]).transpose(1, 2) if p["tb"] else r(p["batch"], p["k"], p["n"])
        return lambda: torch.bmm(a, b)
    if op in ("causal_softmax", "causal_softmax_backward"):
        t, count = p["t"], p["count"]
        mask = torch.full((t, t), float("-inf"), device=device).triu(1)
        scores = r(count, t, t)
        if op == "causal_softmax":
            return lambda: torch.softmax(scores + mask, -1)
        probs, g = torch.softmax(scores + mask, -1), r(count, t, t)
        return lambda: torch._softmax_backward_data(g, probs, -1, probs.dtype)
    if op == "softmax_xent_forward":  # the loss and its gradient in one op, as wavetrain's
        logits = r(p["n"], p["k"]).requires_grad_()
        labels = ints(p["k"], p["n"])
        return lambda: grad(F.cross_entropy(logits, labels), [logits])
    if op in ("global_avgpool_forward", "global_avgpool_backward"):
        x = r(p["batch"], p["c"], p["pixels"]).requires_grad_()
        pool = lambda x: x.mean(-1)  # noqa: E731  (AdaptiveAvgPool2d(1) + flatten)
        if op.endswith("forward"):
            xd = x.detach()
            return lambda: pool(xd)
        return backward_of(pool, [x], (p["batch"], p["c"]))
    if op == "count_nonfinite":  # the AMP grad scaler's fused check
        g = r(p["n"])
        if device == "cpu":
            return lambda: (~torch.isfinite(g)).sum()
        found, inv = torch.zeros(1, device=device), torch.ones(1, device=device)
        return lambda: torch._amp_foreach_non_finite_check_and_unscale_([g], found, inv)
    if op in ("sgd_update", "adamw_update"):  # the optimizers over one flat parameter
        w = torch.nn.Parameter(r(p["n"]))
        w.grad = r(p["n"])
        if op == "sgd_update":
            opt = torch.optim.SGD([w], lr=0.01, momentum=0.9)
        else:
            extra = {"capturable": True} if device == "cuda" else {}
            opt = torch.optim.AdamW([w], lr=1e-3, **extra)
        return opt.step
    raise SystemExit(f"torch_op_reference.py: no PyTorch equivalent for op '{op}'")


# ---- timing ----------------------------------------------------------------------------------

# Ops that read a result back to the host: never captured (a failed capture can leave PyTorch's
# graph memory pool half set up), timed eagerly as wt_op_bench times its own.
EAGER_ONLY = set()


def time_cuda(torch, fn, reps, replays, capture=True):
    """Per-call microseconds (median replay of a graph of `reps` calls) and the mode."""
    fn()
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up on a side stream, as capture requires
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    try:
        if not capture:
            raise RuntimeError("not capturable")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(reps):
                fn()
        run, mode = graph.replay, "graph"
    except Exception:  # an op that reads back to the host: timed eagerly
        torch.cuda.synchronize()

        def run():
            for _ in range(reps):
                fn()
        mode = "eager"
    for _ in range(3):
        run()
    times = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(replays):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / reps)
    return statistics.median(times), mode


def time_cpu(fn, reps, replays):
    fn()
    times = []
    for _ in range(max(3, replays // 5)):
        t0 = time.perf_counter()
        for _ in range(max(1, reps // 5)):
            fn()
        times.append((time.perf_counter() - t0) * 1e6 / max(1, reps // 5))
    return statistics.median(times), "eager"


def time_cases(args, cases):
    import torch
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("torch_op_reference.py: no CUDA device visible to PyTorch", file=sys.stderr)
            return None
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(1)
    results = {}
    for c in cases:
        if args.only and args.only not in c["op"]:
            continue
        try:
            fn = make_op(torch, c["op"], c["params"], args.device, gen)
            if args.device == "cuda":
                us, mode = time_cuda(torch, fn, args.reps, args.replays, c["op"] not in EAGER_ONLY)
            else:
                us, mode = time_cpu(fn, args.reps, args.replays)
        except Exception as e:  # one case's failure leaves its row "-", not the whole table
            print(f"torch_op_reference.py: case {c['id']} ({c['op']}) failed: {e}", file=sys.stderr)
            continue
        results[c["id"]] = (us, mode)
        if not args.wavetrain:
            print(f"id={c['id']} us={us:.2f} mode={mode}", flush=True)
        del fn
    return results


# ---- the joined table ------------------------------------------------------------------------

def read_results(path):
    results = {}
    with open(path) as f:
        for line in f:
            fields = dict(t.split("=", 1) for t in line.split() if "=" in t)
            if "id" in fields and "us" in fields:
                results[int(fields["id"])] = (float(fields["us"]), fields.get("mode", "?"))
    return results


def shape_text(p):
    return " ".join(f"{k}={v}" for k, v in p.items())


def print_table(cases, ours, theirs, device):
    print(f"Per-op time, wavetrain (wt_op_bench) and PyTorch ({device}), us per call; "
          "x = torch / wavetrain (above 1: wavetrain faster); e = timed eagerly (not capturable)")
    print("| op | shape | calls/step | wavetrain us | torch us | x |")
    print("|---|---|---|---:|---:|---:|")
    totals = {}
    for c in cases:
        w, t = ours.get(c["id"]), theirs.get(c["id"])
        calls = " ".join(f"{m}:{n}" for m, n in c["calls"].items())
        wt = f"{w[0]:.2f}{' e' if w[1] == 'eager' else ''}" if w else "-"
        tt = f"{t[0]:.2f}{' e' if t[1] == 'eager' else ''}" if t else "-"
        ratio = f"{t[0] / w[0]:.2f}" if w and t and w[0] > 0 else "-"
        print(f"| {c['op']} | {shape_text(c['params'])} | {calls} | {wt} | {tt} | {ratio} |")
        for model, n in c["calls"].items():
            s = totals.setdefault(model, [0.0, 0.0])
            s[0] += n * (w[0] if w else 0)
            s[1] += n * (t[0] if t else 0)
    print("\nSum over a training step's op calls (calls x us; no launch gaps, no overlap):")
    print("| model | wavetrain us | torch us | x |")
    print("|---|---:|---:|---:|")
    for model, (w, t) in totals.items():
        print(f"| {model} | {w:.0f} | {t:.0f} | {t / w if w else 0:.2f} |")


def main(argv=None):
    args = parse_args(argv)
    cases = all_cases()
    if args.cases:
        for c in cases:
            print(case_line(c))
        return 0
    theirs = time_cases(args, cases)
    if theirs is None:
        return 77
    if args.wavetrain:
        print_table(cases, read_results(args.wavetrain), theirs, args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
