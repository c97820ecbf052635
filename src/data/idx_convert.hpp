#pragma once
// Converts an MNIST-style idx set (train/test images and labels) into a wavetrain HDF5 dataset.
// Shared by tools/fmnist_to_hdf5 and its tests.
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.hpp"

namespace wt {

struct IdxSetPaths {
  std::string train_images, train_labels, test_images, test_labels;
};

// The four standard file names in `dir` ({train,t10k}-{images-idx3,labels-idx1}-ubyte), each
// taken with a .gz suffix if that file exists and without otherwise. Throws wt::InputError
// naming the first file that exists in neither form.
IdxSetPaths find_idx_set(const std::string& dir);

const std::vector<std::string>& fashion_mnist_class_names();

struct IdxConvertResult {
  int64_t train_samples = 0, test_samples = 0;
  Shape sample_shape;  // {C, H, W}; idx images N x H x W get C = 1
  double mean = 0, std = 1;
};

// Reads and validates the four files (ubyte data, labels 1-D with one per image and within
// [0, class_names.size()), equal sample shapes), computes mean/std of x/255 over the train
// images, and writes `output` atomically. Bad input throws wt::InputError naming the file.
IdxConvertResult convert_idx_to_hdf5(const IdxSetPaths& paths, const std::string& output,
                                     const std::vector<std::string>& class_names,
                                     const std::string& source);

}  // namespace wt
