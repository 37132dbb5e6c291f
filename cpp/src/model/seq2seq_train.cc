// Training an encoder–decoder (Transformer::LossAndGradient / TrainStep of a TrainBatch; t5, marian): the batch checked
// (source tokens, labels, decoder inputs defaulting to Hugging Face's shift_right(labels), both padding masks), each
// stack's saved activations and the cross-attention's keys and values laid out in the training state (zero-filled
// only when the shape (B, S, T) changes), the gradients pointed at, then one dispatch (Seq2SeqLossAndGrad).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/model/seq2seq_train_kernels.h"
#include "cpp/src/model/transformer_impl.h"

namespace attnlab {
namespace {

// The forward options a training batch of an encoder–decoder does not take, refused by name.
void RefuseOptions(const TransformerForwardOptions& o) {
  if (o.head_mask || o.decoder_head_mask || o.cross_attn_head_mask) {
    Fail(o.head_mask           ? "headMask"
         : o.decoder_head_mask ? "decoderHeadMask"
                               : "crossAttnHeadMask",
         "none in training", "a head mask");
  }
  if (!o.output_attentions.empty()) Fail("outputAttentions", "none in training", "layers");
  if (o.output_hidden_states) Fail("outputHiddenStates", "false in training", "true");
  if (o.token_type_ids) Fail("tokenTypeIds", "null for an encoder–decoder", "token types");
  if (o.cache) Fail("kvCache", "none in training", "a cache");
  if (o.occlude || !o.head_values.empty() || o.output_head_outputs || o.last_logits_only) {
    Fail("options", "only attentionMask, decoderInputIds and decoderAttentionMask in training", "others");
  }
}

// Hugging Face's _shift_right: decoder_start_token_id, then labels[:, :-1] with −100 replaced by the pad id.
std::vector<int32_t> ShiftRight(const TokensView& labels, const TransformerConfig& c) {
  const size_t b = static_cast<size_t>(labels.shape[0]), t = static_cast<size_t>(labels.shape[1]);
  std::vector<int32_t> ids(b * t);
  for (size_t r = 0; r < b; ++r) {
    ids[r * t] = static_cast<int32_t>(c.decoder_start_token_id);
    for (size_t i = 1; i < t; ++i) {
      const int32_t id = labels.data[r * t + i - 1];
      ids[r * t + i] = id == -100 ? static_cast<int32_t>(c.pad_token_id) : id;
    }
  }
  return ids;
}

// The labels (B, T) (B the source's, 1 ≤ T ≤ contextLength; ids or −100, one counted at least) and the decoder's
// inputs: decoderInputIds (B, T) when given, else shift_right(labels) into `shifted`.
TokensView CheckedDecoderInputs(const TransformerConfig& c, const Transformer::TrainBatch& batch, size_t b,
                                std::vector<int32_t>& shifted) {
  const Shape& shape = batch.labels.shape;
  if (shape.size() != 2 || shape[0] != static_cast<int64_t>(b) || shape[1] < 1 || shape[1] > c.context_length) {
    Fail("labels",
         "shape (" + std::to_string(b) + ", T) with 1 <= T <= " + std::to_string(c.context_length) +
             " (the tokens' batch; contextLength)",
         "shape " + ShapeString(shape));
  }
  CheckTargets(batch.labels, shape, c.vocab_size, "labels");
  const TransformerForwardOptions& o = batch.options;
  if (!o.decoder_input_ids && o.decoder_input_ids_shape.empty()) {
    shifted = ShiftRight(batch.labels, c);
    return TokensView{shifted.data(), shape};
  }
  const TokensView ids{o.decoder_input_ids, o.decoder_input_ids_shape};
  CheckTokens(ids, c.vocab_size, "decoderInputIds");
  if (ids.shape != shape) {
    Fail("decoderInputIds", "shape " + ShapeString(shape) + " (the labels')", "shape " + ShapeString(ids.shape));
  }
  return ids;
}

constexpr size_t kSavedFields = 15;

// One block's saved activations (BlockSaved's fields in order, a decoder's with its cross-attention's), then its
// cross-attention keys and values (B, H, S, hd) each (a decoder's; 0 elsewhere), in floats.
void BlockSizes(const ModelArgs& a, const BlockArgs& b, size_t s_len, bool cross, size_t* sizes) {
  const size_t rows = a.batch * a.tokens, plane = rows * a.e, dq = a.heads * a.head_dim, c = cross ? 1 : 0;
  const size_t out[kSavedFields + 2] = {plane,
                                        plane,
                                        rows * b.qkv.out,
                                        0,
                                        a.batch * a.heads * a.tokens * a.tokens,
                                        rows * dq,
                                        plane,
                                        plane,
                                        rows * b.up.out,
                                        rows * b.down.in,
                                        c * plane,
                                        c * plane,
                                        c * rows * dq,
                                        c * a.batch * a.heads * a.tokens * s_len,
                                        c * rows * dq,
                                        c * a.batch * a.heads * s_len * a.head_dim,
                                        c * a.batch * a.heads * s_len * a.head_dim};
  std::copy(out, out + kSavedFields + 2, sizes);
}

// The floats of one stack's saved activations: every block's (BlockSizes), then x_final and h_final (rows, E) each.
size_t StackFloats(const ModelArgs& a, size_t s_len, bool cross) {
  size_t n = 2 * a.batch * a.tokens * a.e, sizes[kSavedFields + 2];
  for (size_t l = 0; l < a.num_blocks; ++l) {
    BlockSizes(a, a.blocks[l], s_len, cross, sizes);
    for (size_t x : sizes) n += x;
  }
  return n;
}

// Carves one stack's saved activations (StackFloats of them) from p: each block's BlockSaved fields and its cross
// keys and values (into `blocks`), then t's x_final and h_final; returns the end.
float* LayOutStack(const ModelArgs& a, size_t s_len, bool cross, BlockArgs* blocks, std::vector<BlockSaved>& saved,
                   TrainArgs& t, float* p) {
  const size_t plane = a.batch * a.tokens * a.e;
  saved.resize(a.num_blocks);
  size_t sizes[kSavedFields + 2];
  for (size_t l = 0; l < a.num_blocks; ++l) {
    BlockSaved& s = saved[l];
    float** fields[kSavedFields] = {&s.x_in,     &s.h1, &s.qkv, &s.qk_raw,  &s.weights, &s.ctx,     &s.x_mid,
                                    &s.h2,       &s.up, &s.act, &s.x_cross, &s.h3,      &s.q_cross, &s.cross_weights,
                                    &s.ctx_cross};
    BlockSizes(a, blocks[l], s_len, cross, sizes);
    for (size_t i = 0; i < kSavedFields; ++i) {
      *fields[i] = sizes[i] ? p : nullptr;
      p += sizes[i];
    }
    blocks[l].cross_k = cross ? p : nullptr;
    blocks[l].cross_v = cross ? p + sizes[kSavedFields] : nullptr;
    p += sizes[kSavedFields] + sizes[kSavedFields + 1];
  }
  t.saved = saved.data();
  t.x_final = p;
  t.h_final = p + plane;
  return p + 2 * plane;
}

}  // namespace

namespace {

const float* OrNullOf(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }
float* OrNullOf(std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// The kernels' view of the gradient buffers g (zero-filled here: the backward adds into them): both stacks' blocks,
// the decoder blocks' cross-attention, the relative bias tables, the shared embedding and the final norms.
// The LM head's bias (Hugging Face's final_logits_bias) is a buffer: no gradient (OffLossPath).
void PointAtSeq2SeqGradients(const TransformerConfig& c, Weights& g, std::vector<BlockGrads>& blocks,
                             std::vector<CrossGrads>& cross, Seq2SeqTrainArgs& t) {
  g.ForEachBuffer([](std::vector<float>& b, bool) { std::fill(b.begin(), b.end(), 0.0f); });
  const size_t enc_layers = static_cast<size_t>(c.num_layers), dec_layers = static_cast<size_t>(c.decoder_layers);
  blocks.resize(enc_layers + dec_layers);
  cross.resize(dec_layers);
  for (size_t l = 0; l < blocks.size(); ++l) blocks[l] = g.GradsOf(l);
  for (size_t l = 0; l < dec_layers; ++l) {
    BlockWeights& b = g.blocks[enc_layers + l];
    cross[l] = CrossGrads{OrNullOf(b.norm3_weight), OrNullOf(b.norm3_bias),  b.cross_q.data.data(),
                          OrNullOf(b.cross_q_bias), b.cross_kv.data.data(),  OrNullOf(b.cross_kv_bias),
                          b.cross_o.data.data(),    OrNullOf(b.cross_o_bias)};
  }
  t.enc.grads = blocks.data();
  t.dec.grads = blocks.data() + enc_layers;
  t.cross = cross.data();
  t.enc.embed = t.dec.embed = g.embed.data.data();
  t.enc.norm_f_weight = OrNullOf(g.encoder_norm_f_weight);
  t.dec.norm_f_weight = OrNullOf(g.norm_f_weight);
  t.dec.norm_f_bias = OrNullOf(g.norm_f_bias);
  t.dec.head = g.head.data.empty() ? nullptr : g.head.data.data();
  if (c.relative_buckets == 0) return;
  t.enc_relative = g.blocks[0].relative_bias.data();
  t.dec_relative = g.blocks[enc_layers].relative_bias.data();
}

// Both stacks' blocks and stack weights (the encoder bidirectional), one step's self-attention keys and values
// (every block of both stacks reuses them), and the state's activations laid out (zero-filled when (B, S, T)
// changes); the decoder's logits buffer.
void SetUpTrainStacks(const TransformerConfig& c, const Weights& w, ModelArgs& enc, BlockArgs* enc_blocks,
                      ModelArgs& dec, BlockArgs* dec_blocks, TrainState& state, std::vector<BlockSaved>* saved,
                      Seq2SeqTrainArgs& t) {
  enc.blocks = enc_blocks;
  enc.num_blocks = static_cast<size_t>(c.num_layers);
  dec.blocks = dec_blocks;
  dec.num_blocks = static_cast<size_t>(c.decoder_layers);
  enc.causal = false;
  SetUpStackWeights(c, w, enc, dec);
  const size_t s_len = enc.tokens, kv = enc.batch * enc.kv_heads * std::max(s_len, dec.tokens) * enc.head_dim;
  if (state.step_k.size() < kv) state.step_k.resize(kv);
  if (state.step_v.size() < kv) state.step_v.resize(kv);
  for (BlockArgs* b : {enc_blocks, dec_blocks}) {
    for (size_t l = 0; l < (b == enc_blocks ? enc.num_blocks : dec.num_blocks); ++l) {
      b[l].cache_k = state.step_k.data();
      b[l].cache_v = state.step_v.data();
    }
  }
  if (state.batch != enc.batch || state.tokens != dec.tokens || state.source != s_len) {
    state.activations.assign(StackFloats(enc, s_len, false) + StackFloats(dec, s_len, true), 0.0f);
    state.batch = enc.batch;
    state.tokens = dec.tokens;
    state.source = s_len;
  }
  float* p = LayOutStack(enc, s_len, false, enc_blocks, saved[0], t.enc, state.activations.data());
  LayOutStack(dec, s_len, true, dec_blocks, saved[1], t.dec, p);
  const size_t logits = dec.batch * dec.tokens * dec.vocab;
  if (state.logits.size() < logits) state.logits.resize(logits);
  dec.logits = state.logits.data();
}

}  // namespace

double Transformer::Seq2SeqGradients(const TrainBatch& batch, const GradientOptions& options, LossAndGrad* extra) {
  const TransformerConfig& c = impl_->config;
  if (c.task != Task::kSeq2SeqLm) Fail("task", "'seq2seq-lm' (an encoder–decoder with its LM head)", "'base'");
  if (batch.pixels) Fail("pixels", "null for an encoder–decoder", "pixels");
  RefuseOptions(batch.options);
  const auto [b, s_len] = CheckTokens(batch.tokens, c.vocab_size);
  if (b == 0 || s_len == 0 || s_len > static_cast<size_t>(c.context_length)) {
    Fail("tokens", "shape (B, S) with B >= 1 and 1 <= S <= " + std::to_string(c.context_length) + " (contextLength)",
         "shape " + ShapeString(batch.tokens.shape));
  }
  std::vector<int32_t> shifted;
  const TokensView dec_ids = CheckedDecoderInputs(c, batch, b, shifted);
  const size_t t_len = static_cast<size_t>(dec_ids.shape[1]);
  const TransformerForwardOptions& o = batch.options;
  const std::vector<float> enc_bias =
      KeyBiasOf("attentionMask", o.attention_mask, o.attention_mask_shape, b, s_len, "(B, S)");
  const std::vector<float> dec_bias =
      KeyBiasOf("decoderAttentionMask", o.decoder_attention_mask, o.decoder_attention_mask_shape, b, t_len, "(B, T)");
  impl_->params.Widen();  // (training updates float32 weights)
  if (!impl_->train) impl_->train = std::make_unique<TrainState>();
  TrainState& state = *impl_->train;
  if (!extra && !state.grads) state.grads = std::make_unique<Weights>(c, false);
  CallArgs enc, dec;
  PrepareCall(batch.tokens, 0, s_len, enc);
  PrepareCall(dec_ids, 0, t_len, dec);
  enc.a.key_bias = OrNullOf(enc_bias);
  dec.a.key_bias = OrNullOf(dec_bias);
  Seq2SeqTrainArgs t;
  std::vector<BlockSaved> saved[2];
  SetUpTrainStacks(c, impl_->params, enc.a, enc.blocks.data(), dec.a, dec.blocks.data() + c.num_layers, state, saved,
                   t);
  EncoderArgs enc_args, dec_args;  // (the encoder's task base: no head; the decoder's LM head as ForwardStages')
  enc_args.post_norm = dec_args.post_norm = c.post_norm;
  dec_args.task = Task::kSeq2SeqLm;
  enc.a.encoder = &enc_args;
  dec.a.encoder = &dec_args;
  const CrossArgs cross{t.enc.h_final, s_len, OrNullOf(enc_bias)};
  dec.a.cross = &cross;
  std::vector<BlockGrads> grads;
  std::vector<CrossGrads> cross_grads;
  if (extra) PrepareSeq2SeqAnalysis(options, c, b, s_len, t_len, grads, cross_grads, t, *extra);
  if (!extra) PointAtSeq2SeqGradients(c, *state.grads, grads, cross_grads, t);
  t.dec.targets = batch.labels.data;
  if (c.pad_embedding) t.enc.pad_row = t.dec.pad_row = static_cast<int32_t>(c.pad_token_id);
  if (c.scale_tied_head && c.tie_embeddings) t.head_scale = 1.0f / std::sqrt(static_cast<float>(c.embed_dim));
  Seq2SeqLossAndGrad(enc.a, dec.a, t);
  if (extra && options.input_gradient) SaveInput(saved[0][0], *extra);
  return t.dec.loss;
}

}  // namespace attnlab
