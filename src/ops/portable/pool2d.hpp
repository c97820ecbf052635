#pragma once
// Max and average pooling (PyTorch semantics: floor-mode output size, max pooling pads with -inf,
// average pooling counts padded cells in the divisor), portable (portable.hpp). The window and
// tie rules are here once; the host keeps faster loops for its common shapes built on them
// (ops/host/pool2d.cpp), the GPU runs these kernels: the forwards one index per output, the
// backwards one index per input cell, which gathers from the windows that cover it in output
// order (the order the host's scatter adds in), so nothing races and sums match the host's.
#include "ops/kernel_args.hpp"
#include "ops/portable/portable.hpp"

namespace wt::kern {

// The window of output (oh, ow), clipped to the image, plus PyTorch's average divisor.
struct PoolWindow {
  int64_t h0, h1, w0, w1;
  int64_t padded_size;  // cells inside the padded image (count_include_pad divisor)
};

WT_HD PoolWindow pool_window(const ops::Pool2dGeometry& g, int64_t oh, int64_t ow) {
  const int64_t h0 = oh * g.stride - g.padding, w0 = ow * g.stride - g.padding;
  const int64_t h1 = h0 + g.kernel < g.in_h + g.padding ? h0 + g.kernel : g.in_h + g.padding;
  const int64_t w1 = w0 + g.kernel < g.in_w + g.padding ? w0 + g.kernel : g.in_w + g.padding;
  return {h0 > 0 ? h0 : 0, h1 < g.in_h ? h1 : g.in_h, w0 > 0 ? w0 : 0, w1 < g.in_w ? w1 : g.in_w,
          (h1 - h0) * (w1 - w0)};
}

// Index (within the plane) of the first maximum of the window; -1 if the window is empty.
WT_HD int64_t pool_argmax(const ops::Pool2dGeometry& g, const float* plane, const PoolWindow& win) {
  int64_t best = -1;
  float best_value = -INFINITY;
  for (int64_t h = win.h0; h < win.h1; ++h)
    for (int64_t w = win.w0; w < win.w1; ++w) {
      const float v = plane[h * g.in_w + w];
      if (best < 0 || v > best_value) {
        best = h * g.in_w + w;
        best_value = v;
      }
    }
  return best;
}

// The outputs whose window covers input row h (or column: the same rule): [first, last].
WT_HD void covering_outputs(int64_t h, int64_t kernel, int64_t stride, int64_t padding,
                            int64_t outputs, int64_t* first, int64_t* last) {
  const int64_t hp = h + padding;  // in padded coordinates: oh * stride <= hp < oh * stride + k
  const int64_t lo = hp - kernel + 1;
  *first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  const int64_t hi = hp / stride;
  *last = hi < outputs - 1 ? hi : outputs - 1;
}

// Output `o` of a forward kernel: its window, and its input plane within x.
WT_HD PoolWindow output_window(const ops::Pool2dGeometry& g, int64_t o, const float* x,
                               const float** plane) {
  const int64_t Ho = g.out_h(), Wo = g.out_w();
  *plane = x + o / (Ho * Wo) * g.in_h * g.in_w;
  return pool_window(g, o / Wo % Ho, o % Wo);
}

// An input cell of a backward kernel: its plane, its index in the plane, and the outputs whose
// windows may cover it, [oh0, oh1] x [ow0, ow1].
struct PoolCell {
  int64_t plane, at, oh0, oh1, ow0, ow1;
};

WT_HD PoolCell pool_cell(const ops::Pool2dGeometry& g, int64_t cell) {
  const int64_t in_plane = g.in_h * g.in_w;
  PoolCell c{cell / in_plane, cell % in_plane, 0, 0, 0, 0};
  covering_outputs(c.at / g.in_w, g.kernel, g.stride, g.padding, g.out_h(), &c.oh0, &c.oh1);
  covering_outputs(c.at % g.in_w, g.kernel, g.stride, g.padding, g.out_w(), &c.ow0, &c.ow1);
  return c;
}

struct MaxPoolForward {
  ops::Pool2dGeometry g;
  const float* x;
  float* y;
  WT_HD void operator()(int64_t o) const {
    const float* xp;
    const PoolWindow win = output_window(g, o, x, &xp);
    const int64_t i = pool_argmax(g, xp, win);
    y[o] = i < 0 ? -INFINITY : xp[i];
  }
};

// dx[cell] = sum of dy over the windows whose first maximum is this cell.
struct MaxPoolBackward {
  ops::Pool2dGeometry g;
  const float* x;
  const float* dy;
  float* dx;
  WT_HD void operator()(int64_t cell) const {
    const int64_t Ho = g.out_h(), Wo = g.out_w();
    const PoolCell c = pool_cell(g, cell);
    const float* xp = x + c.plane * g.in_h * g.in_w;
    float sum = 0.0f;
    for (int64_t oh = c.oh0; oh <= c.oh1; ++oh)
      for (int64_t ow = c.ow0; ow <= c.ow1; ++ow)
        if (pool_argmax(g, xp, pool_window(g, oh, ow)) == c.at)
          sum += dy[(c.plane * Ho + oh) * Wo + ow];
    dx[cell] = sum;
  }
};

// MaxPoolBackward when x is a ReLU's output, with the ReLU's mask in the same pass
// (OpsBackend::maxpool2d_relu_backward): a cell where x is not positive gets 0, as relu_backward
// would give it.
struct MaxPoolReluBackward {
  MaxPoolBackward pool;
  WT_HD void operator()(int64_t cell) const {
    if (pool.x[cell] > 0.0f)
      pool(cell);
    else
      pool.dx[cell] = 0.0f;
  }
};

// Windows that tile the image (stride == kernel, no padding, the image at least one window): each
// input cell lies in at most one window, so the backwards can run one index per output window,
// writing every cell it owns: the window's cells, and on the last row and column of windows the
// cells past them that no window covers. Each cell gets what the gathers above give it (0.0f plus
// its one term, or 0.0f), bit for bit, with a few divisions per window instead of several per
// cell (64-bit divisions are long instruction sequences on a GPU).
WT_HD bool pool_windows_tile(const ops::Pool2dGeometry& g) {
  return g.stride == g.kernel && g.padding == 0 && g.in_h >= g.kernel && g.in_w >= g.kernel;
}

// The cells output window `o` owns: its plane's offset, rows [h0, h1) and columns [w0, w1).
struct OwnedCells {
  int64_t plane, h0, h1, w0, w1;
};

WT_HD OwnedCells owned_cells(const ops::Pool2dGeometry& g, int64_t o) {
  const int64_t Ho = g.out_h(), Wo = g.out_w(), ow = o % Wo, rest = o / Wo, oh = rest % Ho;
  const int64_t h0 = oh * g.kernel, w0 = ow * g.kernel;
  return {rest / Ho * g.in_h * g.in_w, h0, oh == Ho - 1 ? g.in_h : h0 + g.kernel, w0,
          ow == Wo - 1 ? g.in_w : w0 + g.kernel};
}

// MaxPoolBackward (relu = false) or MaxPoolReluBackward (true) for tiling windows, over outputs.
template <bool relu>
struct MaxPoolBackwardTiled {
  ops::Pool2dGeometry g;
  const float* x;
  const float* dy;
  float* dx;
  WT_HD void operator()(int64_t o) const {
    const OwnedCells c = owned_cells(g, o);
    const float* xp = x + c.plane;
    const PoolWindow win{c.h0, c.h0 + g.kernel, c.w0, c.w0 + g.kernel, g.kernel * g.kernel};
    const int64_t best = pool_argmax(g, xp, win);
    const float grad = relu && !(xp[best] > 0.0f) ? 0.0f : 0.0f + dy[o];
    for (int64_t h = c.h0; h < c.h1; ++h)
      for (int64_t w = c.w0; w < c.w1; ++w)
        dx[c.plane + h * g.in_w + w] = h * g.in_w + w == best ? grad : 0.0f;
  }
};

// AvgPoolBackward for tiling windows, over outputs.
struct AvgPoolBackwardTiled {
  ops::Pool2dGeometry g;
  const float* dy;
  float* dx;
  WT_HD void operator()(int64_t o) const {
    const OwnedCells c = owned_cells(g, o);
    const float grad = 0.0f + dy[o] / static_cast<float>(g.kernel * g.kernel);
    for (int64_t h = c.h0; h < c.h1; ++h)
      for (int64_t w = c.w0; w < c.w1; ++w)
        dx[c.plane + h * g.in_w + w] = h < c.h0 + g.kernel && w < c.w0 + g.kernel ? grad : 0.0f;
  }
};

struct AvgPoolForward {
  ops::Pool2dGeometry g;
  const float* x;
  float* y;
  WT_HD void operator()(int64_t o) const {
    const float* xp;
    const PoolWindow win = output_window(g, o, x, &xp);
    float sum = 0.0f;
    for (int64_t h = win.h0; h < win.h1; ++h)
      for (int64_t w = win.w0; w < win.w1; ++w) sum += xp[h * g.in_w + w];
    y[o] = sum / static_cast<float>(win.padded_size);
  }
};

struct AvgPoolBackward {
  ops::Pool2dGeometry g;
  const float* dy;
  float* dx;
  WT_HD void operator()(int64_t cell) const {
    const int64_t Ho = g.out_h(), Wo = g.out_w();
    const PoolCell c = pool_cell(g, cell);
    float sum = 0.0f;
    for (int64_t oh = c.oh0; oh <= c.oh1; ++oh)
      for (int64_t ow = c.ow0; ow <= c.ow1; ++ow)
        sum += dy[(c.plane * Ho + oh) * Wo + ow] /
               static_cast<float>(pool_window(g, oh, ow).padded_size);
    dx[cell] = sum;
  }
};

}  // namespace wt::kern
