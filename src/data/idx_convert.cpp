#include "data/idx_convert.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "data/dataset_writer.hpp"
#include "data/idx_reader.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

std::string pick(const std::string& dir, const std::string& name) {
  const std::filesystem::path base = std::filesystem::path(dir) / name;
  std::error_code ec;
  if (std::filesystem::exists(base.string() + ".gz", ec)) return base.string() + ".gz";
  if (std::filesystem::exists(base, ec)) return base.string();
  throw InputError(base.string() + "[.gz]", 0, "", "idx file not found");
}

// Loads one images/labels pair as a dataset split.
DatasetSplit load_split(const std::string& name, const std::string& images_path,
                        const std::string& labels_path, int64_t classes) {
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);
  if (images.dims.size() < 2)
    throw InputError(images_path, 0, "", "images need at least 2 dimensions (N x ...)");
  if (labels.dims.size() != 1)
    throw InputError(labels_path, 0, "", "labels must be 1-D, found " + shape_str(labels.dims));
  if (labels.dims[0] != images.dims[0])
    throw InputError(labels_path, 0, "",
                     std::to_string(labels.dims[0]) + " labels for " +
                         std::to_string(images.dims[0]) + " images in " + images_path);

  DatasetSplit split;
  split.name = name;
  split.sample_shape.assign(images.dims.begin() + 1, images.dims.end());
  if (split.sample_shape.size() == 2) split.sample_shape.insert(split.sample_shape.begin(), 1);
  split.chunk_samples = 1024;
  split.inputs_u8 = std::move(images.data);
  split.labels.resize(labels.data.size());
  for (size_t i = 0; i < labels.data.size(); ++i) {
    const int32_t y = labels.data[i];
    if (y >= classes)
      throw InputError(labels_path, 0, "",
                       "label " + std::to_string(y) + " at row " + std::to_string(i) +
                           " is outside [0, " + std::to_string(classes) +
                           "); give matching --class-names");
    split.labels[i] = y;
  }
  return split;
}

}  // namespace

IdxSetPaths find_idx_set(const std::string& dir) {
  return {pick(dir, "train-images-idx3-ubyte"), pick(dir, "train-labels-idx1-ubyte"),
          pick(dir, "t10k-images-idx3-ubyte"), pick(dir, "t10k-labels-idx1-ubyte")};
}

const std::vector<std::string>& fashion_mnist_class_names() {
  static const std::vector<std::string> names{"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                              "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                              "Bag",         "Ankle boot"};
  return names;
}

IdxConvertResult convert_idx_to_hdf5(const IdxSetPaths& paths, const std::string& output,
                                     const std::vector<std::string>& class_names,
                                     const std::string& source) {
  if (class_names.empty()) throw InputError("", 0, "--class-names", "needs at least one class");
  const int64_t classes = static_cast<int64_t>(class_names.size());
  std::vector<DatasetSplit> splits;
  splits.push_back(load_split("train", paths.train_images, paths.train_labels, classes));
  splits.push_back(load_split("test", paths.test_images, paths.test_labels, classes));
  if (splits[0].sample_shape != splits[1].sample_shape)
    throw InputError(paths.test_images, 0, "",
                     "test images have shape " + shape_str(splits[1].sample_shape) +
                         ", train images " + shape_str(splits[0].sample_shape));
  if (splits[0].labels.empty()) throw InputError(paths.train_images, 0, "", "no training images");

  // Normalisation statistics of x/255 over every train pixel (population std).
  double sum = 0, sum_sq = 0;
  for (uint8_t v : splits[0].inputs_u8) {
    const double x = v / 255.0;
    sum += x;
    sum_sq += x * x;
  }
  const double count = double(splits[0].inputs_u8.size());
  DatasetInfo info;
  info.num_classes = classes;
  info.class_names = class_names;
  info.mean = sum / count;
  info.std = std::sqrt(std::max(0.0, sum_sq / count - info.mean * info.mean));
  if (info.std <= 0) info.std = 1.0;  // constant images: keep the transform finite
  info.source = source;

  IdxConvertResult result;
  result.train_samples = int64_t(splits[0].labels.size());
  result.test_samples = int64_t(splits[1].labels.size());
  result.sample_shape = splits[0].sample_shape;
  result.mean = info.mean;
  result.std = info.std;
  write_dataset(output, splits, info);
  return result;
}

}  // namespace wt
