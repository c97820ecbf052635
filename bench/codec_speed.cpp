// Encode and decode time of the weight codecs (compress/weight_codec.hpp) on this machine, for a
// model's worth of Gaussian weights (sigma 0.05) split into tensors of a given size: the time a
// stage owner spends encoding before its broadcast, and a member decoding after it.
//   codec_speed FLOATS [TENSOR_FLOATS] [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "compress/weight_codec.hpp"

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 1 << 20;
  const int64_t tensor = argc > 2 ? std::atoll(argv[2]) : 65536;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 20;
  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  std::vector<float> side(static_cast<size_t>(n + 2 * (n / tensor + 1)));
  for (float& v : x) v = normal(gen);
  std::printf("%-22s %12s %12s %14s\n", "codec", "encode ms", "decode ms", "words/values");
  for (const char* spec : {"scalednn raw", "scalednn paper", "bf16 raw"}) {
    wt::WeightCodec c;
    c.kind = std::string(spec).substr(0, std::string(spec).find(' '));
    c.out_of_range = std::string(spec).substr(std::string(spec).find(' ') + 1);
    std::vector<uint32_t> words(size_t(wt::encoded_words(c, n) + n / tensor + 1));
    double best_encode = 1e30, best_decode = 1e30;
    for (int r = 0; r < repeats; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      int64_t w = 0, s = 0;
      for (int64_t i = 0; i < n; i += tensor) {
        const int64_t len = std::min(tensor, n - i);
        s += wt::encode_weights(c, x.data() + i, len, words.data() + w, side.data() + s);
        w += wt::encoded_words(c, len);
      }
      auto t1 = std::chrono::steady_clock::now();
      w = s = 0;
      for (int64_t i = 0; i < n; i += tensor) {
        const int64_t len = std::min(tensor, n - i);
        s += wt::decode_weights(c, words.data() + w, len, side.data() + s, y.data() + i);
        w += wt::encoded_words(c, len);
      }
      auto t2 = std::chrono::steady_clock::now();
      best_encode = std::min(best_encode, std::chrono::duration<double>(t1 - t0).count());
      best_decode = std::min(best_decode, std::chrono::duration<double>(t2 - t1).count());
    }
    std::printf("%-22s %12.3f %12.3f %14.3f\n", spec, 1e3 * best_encode, 1e3 * best_decode,
                double(wt::encoded_words(c, n)) / double(n));
  }
  return 0;
}
