#!/usr/bin/python3
"""Runs DeepPool's own burst planner (parallelizationPlanner.py, searchBestSplitsV3) on its own
published per-layer profile and prints its plan: per layer the GPU count, and the predicted
iteration time. The reference bench/deeppool_planner.sh compares wavetrain's
burst.cost_model = "deeppool" against.

DeepPool's code is read at run time from a checkout given with --deeppool (never copied here):
  git -C <DeepPool clone> archive cf496d7 parallelizationPlanner.py gpuProfiler.py \
      jobDescription.py examples/vgg.py profile/ | tar -x -C /tmp/deeppool
Needs torch (DeepPool builds the model with it); jsonpickle, graphviz and DeepPool's cluster
client are imported by its modules but not used by the planner, and are stood in for when absent.

Output, per configuration (every --gpus x --batch x --amp-limit), a header, one line per planner
layer and the predicted iteration time (searchBestSplitsV3's return, ms):
  config <gpus> <batch> <amp limit>
  layer <id> <name> <gpus>
  time_ms <ms>
--relu-measured adds, beside the profile's ReLU keys (inplace=true), the same times under the
keys DeepPool's VGG looks up (inplace=false): its planner then prices ReLUs as measured instead of
its 1 us fallback.
"""
import argparse
import contextlib
import io
import os
import sys
import types


def stand_in(name, **attrs):
    if name in sys.modules:
        return
    try:
        __import__(name)
        return
    except ImportError:
        pass
    module = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(module, k, v)
    sys.modules[name] = module


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deeppool", required=True, help="DeepPool source tree at commit cf496d7")
    ap.add_argument("--gpus", type=int, nargs="+", default=[8])
    ap.add_argument("--batch", type=int, nargs="+", default=[32], help="global batch")
    ap.add_argument("--amp-limit", type=float, nargs="+", default=[2.0])
    ap.add_argument("--net-bw", type=float, default=2.66e5, help="bytes per microsecond (A100: 2.66e5)")
    ap.add_argument("--profile", default="profile/A100_vgg.prof", help="relative to --deeppool")
    ap.add_argument("--relu-measured", action="store_true", help="see above")
    a = ap.parse_args()
    root = os.path.abspath(a.deeppool)
    for f in ("parallelizationPlanner.py", "examples/vgg.py", a.profile):
        if not os.path.exists(os.path.join(root, f)):
            sys.exit(f"deeppool_reference.py: {os.path.join(root, f)}: missing (see --help)")
    stand_in("jsonpickle")
    stand_in("graphviz")
    stand_in("clusterClient", ClusterClient=object)
    stand_in("runnableModule", RunnableModule=object, MockCommHandler=object,
             VisionDataLoaderGenerator=object)
    sys.path[:0] = [root, os.path.join(root, "examples")]
    os.chdir(root)
    import parallelizationPlanner as planner  # DeepPool's
    import vgg  # DeepPool's examples/vgg.py
    for gpus in a.gpus:
        for batch in a.batch:
            for limit in a.amp_limit:
                # A fresh planner each time: a search leaves state on the layers (gpuAssignment)
                # that changes how the next one prices transfers.
                with contextlib.redirect_stdout(io.StringIO()):
                    cs = build_planner(planner, vgg, a)
                    _, iter_ms, _, _ = cs.searchBestSplitsV3(gpus, batch, amplificationLimit=limit)
                print(f"config {gpus} {batch} {limit:g}")
                for layer in cs.layers:
                    print(f"layer {layer.id} {layer.name} {cs.calcGpusNeeded(layer, layer.bestCfg, batch)}")
                print(f"time_ms {iter_ms:.6f}")


def build_planner(planner, vgg, a):
    vgg.cs = planner.CostSim(planner.GpuProfiler("cpu"), netBw=a.net_bw, verbose=False,
                             gpuProfileLoc=a.profile)
    if a.relu_measured:
        cache = vgg.cs.layerProfileCache
        for key in [k for k in cache if '"inplace":true' in k]:
            cache[key.replace('"inplace":true', '"inplace":false')] = cache[key]
    vgg.vgg16(pretrained=False, init_weights=False)
    vgg.cs.printAllLayers(slient=True)  # numbers the layers
    vgg.cs.computeInputDimensions((3, 224, 224))
    return vgg.cs


if __name__ == "__main__":
    main()
