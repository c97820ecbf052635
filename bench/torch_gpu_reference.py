#!/usr/bin/python3
"""PyTorch reference for wavetrain on a GPU, built from wavetrain's own model files.

The network is read from models/<name>.toml (the same [[layer]] list wavetrain trains), so both
sides train the same model: `--params` prints each layer's parameter count, which
tests/e2e/torch_reference_models.sh compares with `wavetrain --show-stages` for every shipped model.

One configuration per invocation (a fresh process, so peak memory is this configuration's own):
  --mode eager     plain forward, backward, optimizer step
  --mode graph     the whole step (forward, backward, step) captured once as a CUDA graph, replayed
  --mode compile   torch.compile'd model, then the whole step captured as a CUDA graph
  --mode replicas  two independent replicas as two parallel branches of one captured graph (the
                   concurrency a GPU offers two data waves: Wavelet's tick-tock against gang)
FP32 with TF32 off (--tf32 allows it), or --precision bf16: the forward and the loss under
torch.autocast to bfloat16 (parameters and optimizer state FP32, as wavetrain's train.precision =
"bf16"); synthetic inputs made on the device before timing, so data loading is not timed. SGD with momentum 0.9 for image models, AdamW for token models (the decks').

Prints one JSON line:
  {"impl": "torch", "model": ..., "batch": ..., "mode": ..., "samples_per_s": ...,
   "peak_memory_mb": ..., "torch": ..., "device": ...}
peak_memory_mb is torch.cuda.max_memory_allocated (0 on the CPU). On a machine without a GPU,
--device cpu runs eager mode (for tests of this script); the other modes need CUDA.
"""
import argparse
import json
import os
import statistics
import sys
import time
import tomllib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="a models/ name (mlp, lenet, resnet, ...) or a path")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--mode", choices=("eager", "graph", "compile", "replicas"), default="eager")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--steps", type=int, default=200, help="timed steps per repeat")
    p.add_argument("--warmup", type=int, default=20, help="untimed steps before timing")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--tf32", action="store_true", help="allow TF32 tensor cores (off: FP32)")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="bf16: the forward and the loss under autocast to bfloat16")
    p.add_argument("--params", action="store_true",
                   help="print each layer's parameter count as JSON and exit (no torch needed)")
    return p.parse_args(argv)


def model_path(name):
    return name if os.path.sep in name or name.endswith(".toml") else \
        os.path.join(REPO, "models", name + ".toml")


# ---- the model file, read as wavetrain reads it: shapes and parameters per layer -------------

def plan_layers(path):
    """[(name, type, args, input names, output shape, params)] in file order, and the model."""
    with open(path, "rb") as f:
        deck = tomllib.load(f)
    model = deck["model"]
    shapes = {"__input__": list(model["input"])}
    plan, previous = [], "__input__"
    for layer in deck["layer"]:
        name, kind = layer["name"], layer["type"]
        inputs = layer.get("inputs", [previous])
        shape, params = infer(kind, layer, [shapes[i] for i in inputs], model)
        shapes[name] = shape
        plan.append((name, kind, layer, inputs, shape, params))
        previous = name
    return plan, model


def conv_out(size, kernel, stride, padding):
    return (size + 2 * padding - kernel) // stride + 1


def infer(kind, a, ins, model):
    x = ins[0]
    if kind == "conv2d":
        k, s, p = a["kernel"], a.get("stride", 1), a.get("padding", 0)
        oc = a["out_channels"]
        params = oc * x[0] * k * k + (oc if a.get("bias", True) else 0)
        return [oc, conv_out(x[1], k, s, p), conv_out(x[2], k, s, p)], params
    if kind in ("maxpool2d", "avgpool2d"):
        k = a["kernel"]
        s, p = a.get("stride", k), a.get("padding", 0)
        return [x[0], conv_out(x[1], k, s, p), conv_out(x[2], k, s, p)], 0
    if kind == "batchnorm2d":
        return list(x), 2 * x[0]
    if kind == "global_avgpool":
        return [x[0]], 0
    if kind == "flatten":
        n = 1
        for d in x:
            n *= d
        return [n], 0
    if kind == "linear":
        out = a["out_features"]
        return x[:-1] + [out], out * x[-1] + (out if a.get("bias", True) else 0)
    if kind == "embedding":
        return x + [a["dim"]], a["vocab"] * a["dim"]
    if kind == "position_embedding":
        return list(x), x[0] * x[1]
    if kind == "layernorm":
        return list(x), 2 * x[-1]
    if kind == "causal_self_attention":
        d = x[-1]
        return list(x), 3 * d * d + 3 * d + d * d + d
    if kind in ("relu", "gelu", "dropout", "add"):
        return list(x), 0
    if kind in ("softmax_xent", "token_softmax_xent"):
        return [1], 0
    raise SystemExit(f"torch_gpu_reference.py: layer type '{kind}' has no PyTorch translation")


# ---- the same network in PyTorch ------------------------------------------------------------

def build_network(plan, model, torch):
    """An nn.Module computing the logits of the layer list (the loss is the training step's)."""
    nn = torch.nn

    class CausalSelfAttention(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

        def forward(self, x):
            t = x.shape[1]
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=1)
            return self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]

    class PositionEmbedding(nn.Module):
        def __init__(self, tokens, dim):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(tokens, dim) * 0.02)

        def forward(self, x):
            return x + self.weight

    def module(kind, a, x):
        if kind == "conv2d":
            return nn.Conv2d(x[0], a["out_channels"], a["kernel"], a.get("stride", 1),
                             a.get("padding", 0), bias=a.get("bias", True))
        if kind == "maxpool2d":
            return nn.MaxPool2d(a["kernel"], a.get("stride", a["kernel"]), a.get("padding", 0))
        if kind == "avgpool2d":
            return nn.AvgPool2d(a["kernel"], a.get("stride", a["kernel"]), a.get("padding", 0))
        if kind == "batchnorm2d":
            return nn.BatchNorm2d(x[0], eps=a.get("eps", 1e-5), momentum=a.get("momentum", 0.1))
        if kind == "global_avgpool":
            return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        if kind == "flatten":
            return nn.Flatten()
        if kind == "linear":
            return nn.Linear(x[-1], a["out_features"], bias=a.get("bias", True))
        if kind == "embedding":
            return nn.Embedding(a["vocab"], a["dim"])
        if kind == "position_embedding":
            return PositionEmbedding(x[0], x[1])
        if kind == "layernorm":
            return nn.LayerNorm(x[-1], eps=a.get("eps", 1e-5))
        if kind == "causal_self_attention":
            return CausalSelfAttention(x[-1], a["heads"])
        if kind == "relu":
            return nn.ReLU()
        if kind == "gelu":
            return nn.GELU()
        if kind == "dropout":
            return nn.Dropout(a.get("p", 0.5))
        return None  # add (summed in forward) and the loss (the training step's)

    class Network(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleDict()
            self.wiring = []
            shapes = {"__input__": list(model["input"])}
            for name, kind, a, inputs, shape, _ in plan:
                m = module(kind, a, shapes[inputs[0]])
                if m is not None:
                    self.layers[name] = m
                if kind not in ("softmax_xent", "token_softmax_xent"):
                    self.wiring.append((name, kind, inputs))
                shapes[name] = shape

        def forward(self, x):
            values = {"__input__": x}
            for name, kind, inputs in self.wiring:
                args = [values[i] for i in inputs]
                values[name] = sum(args[1:], args[0]) if kind == "add" else self.layers[name](args[0])
            return values[self.wiring[-1][0]]

    return Network()


def torch_layer_params(network):
    counts = {}
    for name, m in network.layers.items():
        counts[name] = sum(p.numel() for p in m.parameters())
    return counts


def per_layer_params(plan):
    return [{"layer": name, "type": kind, "params": params} for name, kind, _, _, _, params in plan]


def synthetic_batch(plan, model, batch, torch, device):
    """Inputs and labels on the device: token ids for an embedding model, else normal images."""
    if plan[0][1] == "embedding":
        tokens = model["input"][0]
        x = torch.randint(0, plan[0][2]["vocab"], (batch, tokens), device=device)
        y = torch.randint(0, model["classes"], (batch, tokens), device=device)
    else:
        x = torch.randn([batch] + list(model["input"]), device=device)
        y = torch.randint(0, model["classes"], (batch,), device=device)
    return x, y


class Replica:
    """One model, its optimizer and its static batch: step() is one whole training step."""

    def __init__(self, plan, model, args, torch, capturable):
        self.torch = torch
        self.net = build_network(plan, model, torch).to(args.device)
        self.tokens = plan[0][1] == "embedding"
        if self.tokens:
            extra = {"capturable": True} if capturable else {}
            self.opt = torch.optim.AdamW(self.net.parameters(), lr=1e-3, **extra)
        else:
            self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01, momentum=0.9)
        self.forward = torch.compile(self.net) if args.mode == "compile" else self.net
        self.x, self.y = synthetic_batch(plan, model, args.batch, torch, args.device)
        # A captured graph must not keep autocast's cache of cast weights (PyTorch's CUDA graphs
        # notes): each replay casts the weights of that step.
        self.autocast = lambda: torch.autocast(args.device, dtype=torch.bfloat16,
                                               enabled=args.precision == "bf16",
                                               cache_enabled=args.mode == "eager")

    def step(self):
        with self.autocast():  # the loss too: autocast runs cross_entropy in FP32
            logits = self.forward(self.x)
            if self.tokens:
                logits = logits.reshape(-1, logits.shape[-1])
            loss = self.torch.nn.functional.cross_entropy(logits, self.y.reshape(-1))
        loss.backward()
        self.opt.step()
        return loss


def capture(replicas, torch):
    """The replicas' whole steps as one CUDA graph: each replica on its own stream, in parallel."""
    current = torch.cuda.current_stream()
    streams = [torch.cuda.Stream() for _ in replicas]
    for stream, r in zip(streams, replicas):  # warm up on side streams, as capture requires
        stream.wait_stream(current)
        with torch.cuda.stream(stream):
            for _ in range(3):
                r.opt.zero_grad(set_to_none=False)
                r.step()
        current.wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        start = torch.cuda.current_stream()
        for stream, r in zip(streams, replicas):
            stream.wait_stream(start)
            with torch.cuda.stream(stream):
                for p in r.net.parameters():
                    p.grad.zero_()
                r.step()
        for stream in streams:
            start.wait_stream(stream)
    return graph


def timed(run_step, steps, repeats, sync):
    """Steps per second: the median over repeats of `steps` steps, timed between syncs."""
    rates = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        for _ in range(steps):
            run_step()
        sync()
        rates.append(steps / (time.perf_counter() - t0))
    return statistics.median(rates)


def run(args, torch, plan, model):
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("torch_gpu_reference.py: no CUDA device visible to PyTorch", file=sys.stderr)
        return 77
    if not cuda and args.mode != "eager":
        raise SystemExit("torch_gpu_reference.py: --mode %s needs --device cuda" % args.mode)
    torch.manual_seed(1)
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
        torch.backends.cudnn.benchmark = True
        torch.cuda.reset_peak_memory_stats()
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    count = 2 if args.mode == "replicas" else 1
    replicas = [Replica(plan, model, args, torch, args.mode != "eager") for _ in range(count)]
    if args.mode == "eager":
        r = replicas[0]

        def run_step():
            r.opt.zero_grad(set_to_none=True)
            r.step()
    else:
        run_step = capture(replicas, torch).replay
    for _ in range(args.warmup):
        run_step()
    steps_per_s = timed(run_step, args.steps, args.repeats, sync)
    print(json.dumps({
        "impl": "torch", "model": model["name"], "batch": args.batch, "mode": args.mode,
        "samples_per_s": round(steps_per_s * args.batch * count, 1),
        "peak_memory_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1) if cuda else 0,
        "tf32": args.tf32, "precision": args.precision, "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu"}))
    return 0


def main(argv=None):
    args = parse_args(argv)
    path = model_path(args.model)
    plan, model = plan_layers(path)
    if args.params:
        layers = per_layer_params(plan)
        try:  # the PyTorch network's own counts too, where PyTorch is installed
            import torch
            counts = torch_layer_params(build_network(plan, model, torch))
            for layer in layers:
                layer["torch_params"] = counts.get(layer["layer"], 0)
        except ImportError:
            pass
        print(json.dumps({"model": model["name"], "layers": layers}))
        return 0
    import torch
    return run(args, torch, plan, model)


if __name__ == "__main__":
    sys.exit(main())
