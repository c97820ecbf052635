#!/usr/bin/python3
"""PyTorch reference for wavetrain's throughput benchmarks.

Trains the same networks as models/mlp.toml and models/lenet.toml with SGD (momentum 0.9),
global batch 64, on the same HDF5 dataset file wavetrain reads. The training split is loaded
into memory as normalised float tensors before any timing, so data loading is not timed.

Configurations (pick one per invocation):
  --threads N      one process, N intra-op threads           config "threads=N"
  --ddp            two processes (gloo), one thread each,     config "ddp=2x1"
                   global batch 64 split 32/32

Prints one JSON line per invocation:
  {"impl": "torch", "model": ..., "config": ..., "samples_per_s_median": ...,
   "samples_per_s_mean": ..., "peak_rss_mb": ..., ...}
samples_per_s_median is global batch / median step time (wavetrain's statistic), the median over
repeats; samples_per_s_mean is timed steps x batch / their wall time.
peak_rss_mb is the largest peak resident set of any one process (per rank, like wavetrain).

Environment, measured to matter on the benchmark machine:
  * OPENBLAS_NUM_THREADS: torch.set_num_threads() does not reach OpenBLAS, so this script
    sets it (default 1, --openblas-threads) before torch is imported.
  * glibc malloc must not trim or mmap the multi-megabyte step buffers: the variables
    MALLOC_TRIM_THRESHOLD_ / MALLOC_MMAP_THRESHOLD_ only take effect at process start, so if
    they are unset the script re-executes itself with both set to 1e9 (--system-malloc keeps
    glibc's defaults).
  * OPENBLAS_CORETYPE is inherited as is and reported; compare both sides under the same one.
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time

MALLOC_ENV = {"MALLOC_TRIM_THRESHOLD_": "1000000000", "MALLOC_MMAP_THRESHOLD_": "1000000000"}
GLOBAL_BATCH = 64
DDP_WORLD = 2


def parse_args(argv=None):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=("mlp", "lenet"), default="lenet")
    p.add_argument("--data", default=os.path.join(repo, "data", "fashion_mnist.h5"))
    p.add_argument("--threads", type=int, default=1, help="intra-op threads (single process)")
    p.add_argument("--ddp", action="store_true", help="2 processes x 1 thread, gloo")
    p.add_argument("--steps", type=int, default=200, help="timed steps per repeat")
    p.add_argument("--warmup", type=int, default=20, help="untimed steps before each repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--openblas-threads", type=int, default=1)
    p.add_argument("--autocast", choices=("off", "bf16"), default="off",
                   help="bf16: forward under torch.autocast('cpu', bfloat16), as "
                        "wavetrain's train.precision = \"bf16\" (bench/bf16_speed.sh)")
    p.add_argument("--system-malloc", action="store_true", help="keep glibc's trimming defaults")
    args = p.parse_args(argv)
    if args.threads < 1 or args.steps < 1 or args.repeats < 1 or args.warmup < 0:
        p.error("--threads, --steps and --repeats must be >= 1, --warmup >= 0")
    if args.ddp and args.threads != 1:
        p.error("--ddp runs 2 processes of 1 thread each; leave --threads at 1")
    return args


def ensure_environment(args):
    """Set what must be in place before torch (and OpenBLAS) load; re-exec for malloc."""
    if not args.system_malloc and any(k not in os.environ for k in MALLOC_ENV):
        env = dict(os.environ)
        for key, value in MALLOC_ENV.items():
            env.setdefault(key, value)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.openblas_threads)


def build_model(name, torch):
    nn = torch.nn
    if name == "mlp":  # models/mlp.toml
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    # models/lenet.toml
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 256), nn.ReLU(), nn.Linear(256, 10))


def load_train_split(path, torch):
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        x = f["train/inputs"][...]
        y = f["train/labels"][...]
        mean = float(f.attrs["mean"])
        std = float(f.attrs["std"])
    # In place, so that the peak RSS holds one float copy of the split, not four.
    scale = 255.0 if x.dtype == np.uint8 else 1.0
    x = x.astype(np.float32)
    x *= np.float32(1.0 / scale)
    x -= np.float32(mean)
    x /= np.float32(std)
    if x.ndim == 3:
        x = x[:, None]
    return torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(y.astype(np.int64))


def peak_rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def train_and_time(args, torch, rank, world, on_barrier):
    """Returns samples/s (global) of each repeat. Each rank trains on its own contiguous slice."""
    torch.manual_seed(args.seed)
    x, y = load_train_split(args.data, torch)
    local_batch = GLOBAL_BATCH // world
    model = build_model(args.model, torch)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    batches_per_epoch = x.shape[0] // GLOBAL_BATCH
    step = 0

    def one_step():
        nonlocal step
        begin = (step % batches_per_epoch) * GLOBAL_BATCH + rank * local_batch
        xb, yb = x[begin:begin + local_batch], y[begin:begin + local_batch]
        opt.zero_grad(set_to_none=True)
        # Autocast runs linear and conv in bf16 and keeps the loss in FP32 (its CPU policy).
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.autocast == "bf16"):
            loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        step += 1
        return loss

    rates, median_rates = [], []
    for _ in range(args.repeats):
        for _ in range(args.warmup):
            one_step()
        on_barrier()
        t0 = time.perf_counter()
        step_times = []
        for _ in range(args.steps):
            t_step = time.perf_counter()
            loss = one_step()
            step_times.append(time.perf_counter() - t_step)
        on_barrier()
        elapsed = time.perf_counter() - t0
        rates.append(args.steps * GLOBAL_BATCH / elapsed)
        # wavetrain's summary.json rate is global batch / median step time: the same statistic
        # here, so a step stalled by another process counts alike on both sides.
        median_rates.append(GLOBAL_BATCH / statistics.median(step_times))
    if not torch.isfinite(loss.detach()):
        raise RuntimeError("loss is not finite")
    return rates, median_rates, float(loss.detach())


def report(args, config, rates, median_rates, rss_mb, final_loss, torch):
    print(json.dumps({
        "impl": "torch", "model": args.model, "config": config,
        "samples_per_s_median": round(statistics.median(median_rates), 1),
        "samples_per_s_mean": round(statistics.median(rates), 1),
        "samples_per_s": [round(r, 1) for r in median_rates],
        "peak_rss_mb": round(rss_mb, 1), "final_loss": round(final_loss, 4),
        "steps": args.steps, "warmup": args.warmup, "repeats": args.repeats,
        "autocast": args.autocast,
        "torch": torch.__version__, "openblas_threads": args.openblas_threads,
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
        "malloc_tuned": all(k in os.environ for k in MALLOC_ENV),
    }), flush=True)


def ddp_worker(rank, args, port, results):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=DDP_WORLD)
    rates, median_rates, loss = train_and_time(args, torch, rank, DDP_WORLD, dist.barrier)
    rss = torch.tensor([peak_rss_mb()])
    dist.all_reduce(rss, op=dist.ReduceOp.MAX)
    if rank == 0:
        results.put((rates, median_rates, float(rss[0]), loss))
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = parse_args()
    if not os.path.exists(args.data):
        sys.exit(f"error: dataset {args.data} not found (run tools/setup.sh, or pass --data)")
    ensure_environment(args)
    import torch
    if args.ddp:
        import torch.multiprocessing as mp
        ctx = mp.get_context("spawn")
        results = ctx.SimpleQueue()
        mp.spawn(ddp_worker, args=(args, free_port(), results), nprocs=DDP_WORLD, join=True)
        rates, median_rates, rss, loss = results.get()
        report(args, f"ddp={DDP_WORLD}x1", rates, median_rates, rss, loss, torch)
    else:
        torch.set_num_threads(args.threads)
        rates, median_rates, loss = train_and_time(args, torch, 0, 1, lambda: None)
        report(args, f"threads={args.threads}", rates, median_rates, peak_rss_mb(), loss, torch)


if __name__ == "__main__":
    main()
