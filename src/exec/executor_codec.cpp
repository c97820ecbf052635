// ScaleDNN's compressed weight broadcast (seeds/scalednn.txt §IV-C): the root (the stage's owner)
// encodes each parameter tensor into 32-bit words (a triple never straddles two tensors) and
// broadcasts them; in raw mode the exact values of out-of-range triples follow as one message
// from the root to each member, which a member receives into room for the worst case (MPI takes a
// shorter message), so no rank needs to know its length in advance. The members decode into
// their values once both have arrived; the root's values are never touched.
#include <numeric>

#include "exec/executor.hpp"
#include "exec/request_group.hpp"

namespace wt {

namespace {

// Above any tag a generator gives its point-to-point messages; one per stage, so the forward fetch
// and the backward re-fetch of one stage match in order.
constexpr int kSideListTag = 1 << 14;

}  // namespace

Executor::BeginTransfer Executor::broadcast_encoded(const Instruction& ins, Stage& st,
                                                    CompletionWork* then,
                                                    std::vector<Tensor>* hold) {
  const size_t params = st.param_shapes.size();
  std::vector<int64_t> sizes(params), word_offsets(params + 1, 0);
  for (size_t i = 0; i < params; ++i) {
    sizes[i] = shape_numel(st.param_shapes[i]);
    word_offsets[i + 1] = word_offsets[i] + encoded_words(codec_, sizes[i]);
  }
  const int64_t room = st.values.numel() + 2 * int64_t(params);
  // Words as 32-bit storage from the device's memory: bit patterns, never read as floats.
  // Allocated now, when the Broadcast is issued; encoded and sent when its stream reaches it.
  Tensor words = Tensor::empty({std::max<int64_t>(1, word_offsets[params])}, model_.allocator(),
                               current_stream_);
  Tensor side = Tensor::empty({std::max<int64_t>(1, room)}, model_.allocator(), current_stream_);
  words.set_label("the encoded words of stage " + std::to_string(ins.stage));
  side.set_label("the codec's side list of stage " + std::to_string(ins.stage));
  *hold = {words, side};  // alive until the transfer is done
  auto* w = reinterpret_cast<uint32_t*>(words.device_ptr());
  float* side_ptr = side.device_ptr();
  // The root encodes (writes words and side list), the others decode (read them): either way the
  // transfer's work, declared with it.
  const bool root_rank = rank_ == ins.root;
  comm_touches(ins, words.device_ptr(), words.numel(), true);
  comm_touches(ins, side_ptr, side.numel(), true);
  const int tag = kSideListTag + ins.stage, root = ins.root, group = ins.group;
  const bool raw = codec_.kind == "scalednn" && codec_.out_of_range == "raw";
  if (root_rank) {
    const std::vector<int>& members = program_.groups[ins.group];
    return [this, values = st.values.device_ptr(), offsets = st.param_offsets, w, side_ptr, sizes,
            word_offsets, root, group, raw, tag, &members](const OpsBackend& comm) {
      // The side list's length comes back to the host: the one blocking copy of a broadcast.
      int64_t used = 0;
      for (size_t i = 0; i < sizes.size(); ++i)
        used += comm.encode_weights(codec_, values + offsets[i], sizes[i], w + word_offsets[i],
                                    side_ptr + used);
      auto all = std::make_unique<RequestGroup>();
      all->add(comm_.ibroadcast_words(w, word_offsets.back(), root, group));
      if (raw)
        for (int member : members)
          if (member != rank_) all->add(comm_.isend(side_ptr, used, member, tag));
      broadcast_bytes_ += 4 * (word_offsets.back() + used);
      return std::unique_ptr<AsyncOperation>(std::move(all));
    };
  }
  broadcast_bytes_ += 4 * word_offsets[params];  // and the side list, whose length it learns later
  // Decoded into the values' memory as it is now: the host may release a borrowed stage's values
  // (its last reader issued) before the transfer completes; its readers still wait for this
  // decode, and the hold keeps the memory.
  hold->push_back(st.values);
  *then = [this, values = st.values.device_ptr(), offsets = st.param_offsets, w, side_ptr, sizes,
           word_offsets](const OpsBackend& comm) {
    const float* s = side_ptr;
    for (size_t i = 0; i < sizes.size(); ++i)  // each tensor's raw triples follow the last's
      s += comm.decode_weights(codec_, w + word_offsets[i], sizes[i], s, values + offsets[i]);
  };
  return [this, w, side_ptr, word_count = word_offsets[params], room, root, group, raw,
          tag](const OpsBackend&) {
    auto all = std::make_unique<RequestGroup>();
    all->add(comm_.ibroadcast_words(w, word_count, root, group));
    if (raw) all->add(comm_.irecv(side_ptr, room, root, tag));
    return std::unique_ptr<AsyncOperation>(std::move(all));
  };
}

}  // namespace wt
