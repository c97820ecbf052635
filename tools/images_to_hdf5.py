#!/usr/bin/python3
"""Convert a folder of images, one subfolder per class, into a wavetrain HDF5 dataset.

  images_to_hdf5.py --input photos/ --output data/photos.h5 --test-ratio 0.2
  images_to_hdf5.py --input photos/ --output data/photos.h5 --resize 32x32 --mode RGB

FOLDER/<class>/*.png|jpg (other files are skipped and counted), classes in sorted order (their
names are stored in the file), split into train/test by --test-ratio per class (seeded); or
FOLDER/train/<class>/ and FOLDER/test/<class>/ as given. Images must all have one size (or pass
--resize WxH) and one mode, L (grayscale, stored [1, H, W]) or RGB ([3, H, W]) (or pass --mode
to convert). Stored as uint8. Images are decoded and written in blocks: memory stays bounded.
Exit status: 0 written, 2 bad input (the file named), 1 other.
"""
import argparse
import os
import random
import sys
import time

import numpy as np
from PIL import Image, UnidentifiedImageError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from converter_cli import (Progress, add_scale_option, positive_int, print_summary,  # noqa: E402
                           run_converter)
from dataset_output import ConvertError, DatasetFile, dataset_bytes  # noqa: E402

TOOL = "images_to_hdf5.py"
EXTENSIONS = (".png", ".jpg", ".jpeg")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", required=True, help="folder with one subfolder per class (or train/ and test/)")
    p.add_argument("--output", required=True, help="HDF5 file to write (appears only when complete)")
    p.add_argument("--test-ratio", type=float, default=0.2,
                   help="share of each class held out for the test split (default: %(default)s); "
                        "ignored when the folder has train/ and test/")
    p.add_argument("--seed", type=int, default=1, help="seed of the train/test split and row order (default: %(default)s)")
    p.add_argument("--resize", help="WxH: resize every image to this size (default: all must have one size)")
    p.add_argument("--mode", choices=["L", "RGB"], help="convert every image to grayscale (L) or RGB (default: all must share one of them)")
    add_scale_option(p, "global", "channel: R, G and B apart")
    p.add_argument("--block-rows", type=positive_int, default=1024, help="images per written block (default: %(default)s)")
    p.add_argument("--source", default="", help="provenance text stored in the file")
    args = p.parse_args()
    if not 0.0 < args.test_ratio < 1.0:
        p.error("--test-ratio must lie strictly between 0 and 1")
    return args


SKIPPED = []  # files found where images or class folders are expected that are neither


def is_image(path):
    return os.path.isfile(path) and path.lower().endswith(EXTENSIONS)


def image_files(folder):
    """The PNG and JPEG files in a class folder; anything else is skipped (and counted)."""
    files = sorted(os.path.join(folder, n) for n in os.listdir(folder) if not n.startswith("."))
    SKIPPED.extend(f for f in files if not is_image(f))
    return [f for f in files if is_image(f)]


def class_folders(folder):
    if not os.path.isdir(folder):
        raise ConvertError(folder, "not a folder" if os.path.exists(folder) else "folder not found")
    entries = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    stray = [n for n in entries if not os.path.isdir(os.path.join(folder, n))]
    if not entries:
        raise ConvertError(folder, "empty folder: expected one subfolder of images per class")
    other = [n for n in stray if not is_image(os.path.join(folder, n))]  # a README, notes
    SKIPPED.extend(os.path.join(folder, n) for n in other if os.path.join(folder, n) not in SKIPPED)
    stray = [n for n in stray if n not in other]
    entries = [n for n in entries if n not in other]
    if not entries:
        raise ConvertError(folder, "no class subfolders: expected one subfolder of images per class")
    if stray:
        raise ConvertError(os.path.join(folder, stray[0]), "a file where class subfolders are expected "
                                                           "(FOLDER/<class>/<image>)")
    return entries


def split_folders(root):
    """Whether the folder holds train/ and test/ rather than one folder per class."""
    return class_folders(root) == ["test", "train"]


def collect(args):
    """{"train": [(file, class index)], "test": [...]}, the class names."""
    root = args.input
    given_splits = split_folders(root)
    classes = class_folders(os.path.join(root, "train")) if given_splits else class_folders(root)
    files = {}
    for c, name in enumerate(classes):
        where = os.path.join(root, "train", name) if given_splits else os.path.join(root, name)
        found = image_files(where)
        if not found:
            raise ConvertError(where, f"class '{name}' has no images")
        files[name] = found
    rng = random.Random(args.seed)
    if given_splits:
        test_classes = class_folders(os.path.join(root, "test"))
        unknown = sorted(set(test_classes) - set(classes))
        if unknown:
            raise ConvertError(os.path.join(root, "test", unknown[0]), "a test class with no train/ folder")
        test = [(f, classes.index(n)) for n in test_classes for f in image_files(os.path.join(root, "test", n))]
        train = [(f, c) for c, n in enumerate(classes) for f in files[n]]
    else:
        train, test = [], []
        for c, name in enumerate(classes):
            shuffled = files[name][:]
            rng.shuffle(shuffled)
            held = int(round(len(shuffled) * args.test_ratio))
            if held >= len(shuffled):
                raise ConvertError(os.path.join(root, name), f"class '{name}' has {len(shuffled)} image(s): "
                                                             "too few to hold out a test share and train on the rest")
            test += [(f, c) for f in shuffled[:held]]
            train += [(f, c) for f in shuffled[held:]]
    rng.shuffle(train)  # the file is not sorted by class
    rng.shuffle(test)
    return {"train": train, "test": test}, classes


def parse_size(text):
    try:
        w, h = (int(v) for v in text.lower().split("x"))
        if w > 0 and h > 0:
            return w, h
    except ValueError:
        pass
    raise ConvertError("--resize", f"expected WxH, e.g. 32x32, got '{text}'")


class ImageDecoder:
    """Decodes one image to a [C, H, W] uint8 array, checking it matches the first one seen."""

    def __init__(self, args):
        self.size = parse_size(args.resize) if args.resize else None
        self.mode = args.mode
        self.first = None  # (file, mode, size) of the first image: the others must match it
        self.shape = None  # [C, H, W] of the arrays returned

    def __call__(self, path):
        try:
            with Image.open(path) as img:
                img.load()
                mode, size = img.mode, img.size
                if self.mode:
                    img = img.convert(self.mode)
                elif mode not in ("L", "RGB"):
                    raise ConvertError(path, f"mode {mode}: only L (grayscale) and RGB are stored as "
                                             "they are; pass --mode L or --mode RGB to convert")
                if self.first is None:
                    self.first = (path, img.mode, size)
                elif img.mode != self.first[1]:
                    raise ConvertError(path, f"mixed modes: this image is {img.mode}, {self.first[0]} is "
                                             f"{self.first[1]}; pass --mode L or --mode RGB to convert all")
                if self.size:
                    img = img.resize(self.size, Image.BILINEAR)
                elif size != self.first[2]:
                    raise ConvertError(path, f"ragged sizes: this image is {size[0]}x{size[1]}, "
                                             f"{self.first[0]} is {self.first[2][0]}x{self.first[2][1]}; "
                                             "pass --resize WxH to resize all")
                a = np.asarray(img, dtype=np.uint8)
        except Image.DecompressionBombError as e:
            raise ConvertError(path, f"too large to decode safely: {str(e).rstrip('.')}; shrink "
                                     "it first, to about the size you train at") from None
        except (UnidentifiedImageError, OSError, ValueError) as e:
            raise ConvertError(path, f"cannot decode the image ({e})") from None
        out = a[None, :, :] if a.ndim == 2 else a.transpose(2, 0, 1)
        self.shape = out.shape
        return out


def convert_split(out, name, items, decode, args, progress):
    folder = os.path.join(args.input, name) if split_folders(args.input) else args.input
    writer = None
    for start in range(0, len(items), args.block_rows):
        block = items[start:start + args.block_rows]
        x = np.stack([decode(f) for f, _ in block])
        y = np.array([c for _, c in block], dtype=np.int32)
        if writer is None:
            writer = out.split(name, x.shape[1:], np.uint8, expected_rows=len(items), source=folder)
        writer.append(x, y)
        progress.advance(len(block))
    if writer is None:  # an empty test split: the run trains without evaluation
        writer = out.split(name, decode.shape, np.uint8, source=folder)
    return writer


def main():
    args = parse_args()
    started = time.monotonic()
    splits, classes = collect(args)
    decode = ImageDecoder(args)
    first = decode(splits["train"][0][0])
    total = sum(len(v) for v in splits.values())
    progress = Progress("converting", total, "images")
    source = args.source or (f"images from {os.path.abspath(args.input)}, converted by "
                             "images_to_hdf5.py")
    estimate = dataset_bytes([(len(items), first.shape, np.uint8) for items in splits.values()],
                             classes, source)
    with DatasetFile(args.output, estimate) as out:
        writers = [convert_split(out, s, items, decode, args, progress) for s, items in splits.items()]
        progress.close()
        mean, std = out.finish(len(classes), classes, args.scale, source)
    print_summary(TOOL, args.output, writers, len(classes), classes, mean, std, started)
    if SKIPPED:
        print(f"{TOOL}: note: skipped {len(SKIPPED)} file(s) that are not PNG or JPEG images "
              f"(by their names), e.g. {SKIPPED[0]}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(run_converter(TOOL, main))
