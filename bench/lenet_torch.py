#!/usr/bin/env python3
"""PyTorch reference for bench/lenet_layers.cpp: LeNet (conv5x5x32 pad2, relu, maxpool2,
conv5x5x64 pad2, relu, maxpool2, fc 3136-256, relu, fc 256-10), batch 64, forward + backward + SGD
on one thread. Run it right beside lenet_layers on the same machine and OPENBLAS_CORETYPE setting.
Usage: /usr/bin/python3 bench/lenet_torch.py [steps] [wall]"""
import sys
import time

import torch
import torch.nn as nn

torch.set_num_threads(1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
# CPU time of this process by default, as bench/lenet_layers does (wall time on a shared machine
# mostly measures the other processes); "wall" as second argument for wall-clock time.
use_wall = len(sys.argv) > 2 and sys.argv[2] == "wall"
clock = time.perf_counter if use_wall else time.process_time
model = nn.Sequential(
    nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(3136, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
x = torch.randn(64, 1, 28, 28)
y = torch.randint(0, 10, (64,))


def step():
    opt.zero_grad(set_to_none=False)
    loss_fn(model(x), y).backward()
    opt.step()


for _ in range(5):
    step()
best = float("inf")
for _ in range(steps):
    t0 = clock()
    step()
    best = min(best, clock() - t0)
print(f"PyTorch {torch.__version__}: best step {best * 1e3:.2f} ms per batch of 64 = "
      f"{64 / best:.0f} samples/s ({'wall-clock' if use_wall else 'process CPU'} time)")
