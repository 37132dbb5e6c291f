// An encoder–decoder's forward (Transformer::ForwardEncoderDecoder; marian): the two inputs, masks and head masks
// checked, each stack's buffers and outputs, then the encoder's stack and the decoder's (whose blocks attend across
// the encoder's last hidden state, its padding masking the keys) in one dispatch (EncoderDecoderForward). Decoding
// over a cache runs the encoder once and keeps the cross-attention's keys and values; greedy generation uses it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/encoder_kernels.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/model/transformer_impl.h"

namespace attnlab {
namespace {

// One stack's buffers: its self-attention's keys and values (one step's, reused by every block) and where its
// hidden states go.
struct StackBuffers {
  std::vector<float> k, v;
  std::vector<float*> hidden;
};

// What one stack returns: the layers whose weights are kept, its head mask (layers, H) or null, and its outputs.
struct StackOutputs {
  std::vector<bool> keep;
  const float* head_mask;
  bool hidden_states;
  std::vector<Tensor>* attentions;
  std::vector<Tensor>* hidden_out;
};

// Points a's blocks at `blocks` (keep.size() of them) with their buffers (one step's keys and values; a cache's
// replace them) and outputs (weights (B, H, T, P + T)).
void SetUpStack(ModelArgs& a, BlockArgs* blocks, const StackOutputs& o, StackBuffers& buf) {
  const size_t n = o.keep.size();
  const int64_t batch = static_cast<int64_t>(a.batch), t_len = static_cast<int64_t>(a.tokens),
                keys = static_cast<int64_t>(a.past + a.tokens);
  buf.k.assign(a.batch * a.kv_heads * a.tokens * a.head_dim, 0.0f);
  buf.v.assign(buf.k.size(), 0.0f);
  o.attentions->resize(n);
  for (size_t l = 0; l < n; ++l) {
    BlockArgs& b = blocks[l];
    b.cache_k = buf.k.data();
    b.cache_v = buf.v.data();
    if (o.keep[l]) {
      (*o.attentions)[l] = ZeroTensor({batch, static_cast<int64_t>(a.heads), t_len, keys});
      b.attentions = (*o.attentions)[l].data.data();
    }
    b.head_mask = o.head_mask ? o.head_mask + l * a.heads : nullptr;
  }
  for (size_t l = 0; o.hidden_states && l <= n; ++l) {
    o.hidden_out->push_back(ZeroTensor({batch, t_len, static_cast<int64_t>(a.e)}));
    buf.hidden.push_back(o.hidden_out->back().data.data());
  }
  a.blocks = blocks;
  a.num_blocks = n;
  a.hidden_states = buf.hidden.empty() ? nullptr : buf.hidden.data();
}

// The decoder blocks' cross-attention: keys and values (B, H, S, hd) each in kv (allocated when `fresh`, else those
// the call that started the cache computed), weights (B, H, T, S) of the layers kept, the cross head mask's rows.
void SetUpCross(const ModelArgs& a, BlockArgs* blocks, size_t s_len, const std::vector<bool>& keep,
                const float* head_mask, bool fresh, std::vector<std::vector<float>>& kv,
                std::vector<Tensor>& attentions) {
  const size_t n = keep.size();
  if (fresh) kv.assign(2 * n, std::vector<float>(a.batch * a.heads * s_len * a.head_dim));
  attentions.resize(n);
  for (size_t l = 0; l < n; ++l) {
    BlockArgs& b = blocks[l];
    b.cross_k = kv[2 * l].data();
    b.cross_v = kv[2 * l + 1].data();
    if (keep[l]) {
      attentions[l] = ZeroTensor({static_cast<int64_t>(a.batch), static_cast<int64_t>(a.heads),
                                  static_cast<int64_t>(a.tokens), static_cast<int64_t>(s_len)});
      b.cross_attentions = attentions[l].data.data();
    }
    b.cross_head_mask = head_mask ? head_mask + l * a.heads : nullptr;
  }
}

void CheckPositions(const char* name, size_t length, size_t limit, const char* what) {
  if (length > limit) {
    Fail(name, "at most " + std::to_string(limit) + " positions (" + what + ")", std::to_string(length));
  }
}

// The decoder's inputs (B, T) checked against the encoder's batch size, P + T against the cache's maxLength
// (max_length 0: no cache, contextLength); the options an encoder–decoder does not take refused; returns T.
size_t CheckDecoderInputs(const TransformerConfig& c, const TransformerForwardOptions& o, size_t batch, size_t s_len,
                          size_t past, size_t max_length) {
  if (!o.decoder_input_ids && o.decoder_input_ids_shape.empty()) {
    Fail("decoderInputIds", "the decoder's input ids (B, T) (an encoder–decoder's forward needs them)", "none");
  }
  const auto [dec_batch, t_len] =
      CheckTokens(TokensView{o.decoder_input_ids, o.decoder_input_ids_shape}, c.vocab_size, "decoderInputIds");
  if (dec_batch != batch) {
    Fail("decoderInputIds", "batch size " + std::to_string(batch) + " (the tokens')", std::to_string(dec_batch));
  }
  const size_t context = static_cast<size_t>(c.context_length);
  CheckPositions("tokens", s_len, context, "contextLength");
  CheckPositions("decoderInputIds", past + t_len, max_length ? max_length : context,
                 max_length ? "the cache's maxLength" : "contextLength");
  if (s_len == 0 && t_len > 0) Fail("tokens", "at least one source position (the cross-attention's keys)", "none");
  if (o.token_type_ids) Fail("tokenTypeIds", "null for an encoder–decoder", "token types");
  if (o.last_logits_only) Fail("lastLogitsOnly", "false for an encoder–decoder", "true");
  if (o.occlude) Fail("occlude", "null for an encoder–decoder (the analysis options are a decoder's)", "positions");
  if (!o.head_values.empty()) Fail("headValues", "none for an encoder–decoder", "heads' values");
  if (o.output_head_outputs) Fail("outputHeadOutputs", "false for an encoder–decoder", "true");
  CheckHeadMask("headMask", o.head_mask, o.head_mask_shape, c.num_layers, c.num_heads);
  CheckHeadMask("decoderHeadMask", o.decoder_head_mask, o.decoder_head_mask_shape, c.decoder_layers, c.num_heads);
  CheckHeadMask("crossAttnHeadMask", o.cross_attn_head_mask, o.cross_attn_head_mask_shape, c.decoder_layers,
                c.num_heads);
  return t_len;
}

const float* OrNull(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// What a call computes beyond its options: the layers whose weights are kept, whether the encoder runs (not when
// a cache's first call has run it), and where the cross-attention's keys and values, the source's padding and the
// decoder's self-attention keys and values live (a cache's; cache_k null: this call's own).
struct Seq2SeqPlan {
  std::vector<bool> keep_enc, keep_dec;
  bool encode = true;
  size_t s_len = 0;
  std::vector<std::vector<float>>* cross = nullptr;
  const std::vector<float>* cross_bias = nullptr;
  std::vector<std::vector<float>>* cache_k = nullptr;
  std::vector<std::vector<float>>* cache_v = nullptr;
};

// Both stacks' buffers and outputs, then the dispatch (enc and dec prepared, their key biases set).
void RunStacks(const TransformerConfig& c, ModelArgs& enc, BlockArgs* enc_blocks, ModelArgs& dec, BlockArgs* dec_blocks,
               const TransformerForwardOptions& o, const Seq2SeqPlan& p, TransformerOutput& out) {
  StackBuffers enc_buf, dec_buf;
  const std::vector<bool> keep_enc = p.encode ? p.keep_enc : std::vector<bool>(p.keep_enc.size(), false);
  SetUpStack(
      enc, enc_blocks,
      {keep_enc, o.head_mask, o.output_hidden_states && p.encode, &out.encoder_attentions, &out.encoder_hidden_states},
      enc_buf);
  SetUpStack(dec, dec_blocks,
             {p.keep_dec, o.decoder_head_mask, o.output_hidden_states, &out.attentions, &out.hidden_states}, dec_buf);
  for (size_t l = 0; p.cache_k && l < p.keep_dec.size(); ++l) {
    dec_blocks[l].cache_k = (*p.cache_k)[l].data();
    dec_blocks[l].cache_v = (*p.cache_v)[l].data();
  }
  SetUpCross(dec, dec_blocks, p.s_len, p.keep_dec, o.cross_attn_head_mask, p.encode, *p.cross, out.cross_attentions);
  const int64_t b = static_cast<int64_t>(dec.batch), t_len = static_cast<int64_t>(dec.tokens);
  EncoderArgs enc_args, dec_args;
  enc_args.post_norm = dec_args.post_norm = c.post_norm;
  enc_args.normed_states = dec_args.normed_states = true;  // (a stack's final norm, where it has one, comes first)
  if (c.scale_tied_head && c.tie_embeddings) dec_args.head_scale = 1.0f / std::sqrt(static_cast<float>(c.embed_dim));
  if (p.encode) {
    out.encoder_last_hidden_state = ZeroTensor({b, static_cast<int64_t>(p.s_len), c.embed_dim});
    enc_args.last_hidden = out.encoder_last_hidden_state.data.data();
  }
  dec_args.task = c.task;
  if (c.task == Task::kBase) {
    out.last_hidden_state = ZeroTensor({b, t_len, c.embed_dim});
    dec_args.last_hidden = out.last_hidden_state.data.data();
  } else {
    out.logits = ZeroTensor({b, t_len, c.vocab_size});
  }
  enc.causal = false;
  enc.encoder = &enc_args;
  const CrossArgs cross{p.encode ? out.encoder_last_hidden_state.data.data() : nullptr, p.s_len, OrNull(*p.cross_bias)};
  dec.logits = out.logits.data.data();
  dec.encoder = &dec_args;
  dec.cross = &cross;
  EncoderDecoderForward(p.encode ? &enc : nullptr, dec);
}

}  // namespace

// T5's relative position bias (the stack's first block holds it) and the encoder's final norm (PrepareCall gave both
// stacks the decoder's).
void SetUpStackWeights(const TransformerConfig& c, const Weights& w, ModelArgs& enc, ModelArgs& dec) {
  enc.norm_f = NormArgs{OrNull(w.encoder_norm_f_weight), nullptr};
  if (c.relative_buckets == 0) return;
  const RelativeBiasArgs relative{nullptr, c.relative_buckets, c.relative_max_distance};
  enc.relative = dec.relative = relative;
  enc.relative.table = w.blocks[0].relative_bias.data();
  dec.relative.table = w.blocks[static_cast<size_t>(c.num_layers)].relative_bias.data();
}

TransformerOutput Transformer::ForwardEncoderDecoder(const TokensView& tokens,
                                                     const TransformerForwardOptions& o) const {
  const TransformerConfig& c = impl_->config;
  const auto [batch, s_len] = CheckTokens(tokens, c.vocab_size);
  TransformerKVCache::Impl* cache = o.cache ? o.cache->impl_.get() : nullptr;
  if (cache && cache->owner != impl_.get()) Fail("kvCache", "a cache made by this model", "another model's cache");
  if (cache && cache->batch != batch) {
    Fail("tokens", "batch size " + std::to_string(cache->batch) + " (the cache's)", std::to_string(batch));
  }
  if (cache && cache->encoded && cache->source != s_len) {
    Fail("tokens", std::to_string(cache->source) + " source positions (the cache's encoder input)",
         std::to_string(s_len));
  }
  const size_t past = cache ? cache->length : 0;
  const size_t t_len = CheckDecoderInputs(c, o, batch, s_len, past, cache ? cache->max_length : 0);
  const std::vector<float> enc_bias = KeyBiasOf("attentionMask", o.attention_mask, o.attention_mask_shape, batch, s_len,
                                                "(B, S)"),
                           dec_bias = KeyBiasOf("decoderAttentionMask", o.decoder_attention_mask,
                                                o.decoder_attention_mask_shape, batch, past + t_len, "(B, P + T)");
  const int64_t limit = std::max(c.num_layers, c.decoder_layers);
  Seq2SeqPlan p;
  p.keep_enc = KeptLayers(o.output_attentions, c.num_layers, limit);
  p.keep_dec = KeptLayers(o.output_attentions, c.decoder_layers, limit);
  p.encode = !cache || !cache->encoded;
  p.s_len = s_len;
  std::vector<std::vector<float>> cross;
  p.cross = cache ? &cache->cross : &cross;
  if (cache && p.encode) cache->cross_bias = enc_bias;
  p.cross_bias = cache ? &cache->cross_bias : &enc_bias;
  p.cache_k = cache ? &cache->k : nullptr;
  p.cache_v = cache ? &cache->v : nullptr;
  CallArgs enc, dec;
  PrepareCall(tokens, 0, s_len, enc);
  PrepareCall(TokensView{o.decoder_input_ids, o.decoder_input_ids_shape}, past, cache ? cache->max_length : t_len, dec);
  enc.a.key_bias = OrNull(enc_bias);
  dec.a.key_bias = OrNull(dec_bias);
  SetUpStackWeights(c, impl_->params, enc.a, dec.a);
  TransformerOutput out;
  RunStacks(c, enc.a, enc.blocks.data(), dec.a, dec.blocks.data() + c.num_layers, o, p, out);
  if (cache) {
    cache->length = past + t_len;
    cache->source = s_len;
    cache->encoded = true;
  }
  return out;
}

std::vector<std::vector<int32_t>> Transformer::GenerateGreedy(
    const TokensView& tokens, const TransformerForwardOptions& options, int64_t max_new_tokens,
    const std::function<void(const TransformerOutput&)>& on_step) {
  const TransformerConfig& c = impl_->config;
  if (c.decoder_layers == 0 || c.task != Task::kSeq2SeqLm) {
    Fail("task", "'seq2seq-lm' (an encoder–decoder with its LM head) for greedy generation", "another model");
  }
  if (max_new_tokens < 1 || max_new_tokens > c.context_length) {
    Fail("maxNewTokens", "an integer in [1, " + std::to_string(c.context_length) + "] (contextLength)",
         std::to_string(max_new_tokens));
  }
  const size_t batch = CheckTokens(tokens, c.vocab_size).first, vocab = static_cast<size_t>(c.vocab_size);
  std::vector<std::vector<int32_t>> out(batch);
  if (batch == 0) return out;
  TransformerKVCache cache = CreateKVCache(static_cast<int64_t>(batch), max_new_tokens);
  TransformerForwardOptions step;
  step.attention_mask = options.attention_mask;
  step.attention_mask_shape = options.attention_mask_shape;
  step.cache = &cache;
  std::vector<int32_t> next(batch, static_cast<int32_t>(c.decoder_start_token_id));
  std::vector<bool> done(batch, false);
  for (int64_t n = 0; n < max_new_tokens && !std::all_of(done.begin(), done.end(), [](bool d) { return d; }); ++n) {
    step.decoder_input_ids = next.data();
    step.decoder_input_ids_shape = {static_cast<int64_t>(batch), 1};
    const TransformerOutput result = Forward(tokens, step);
    if (on_step) on_step(result);
    for (size_t b = 0; b < batch; ++b) {
      const float* row = result.logits.data.data() + b * vocab;
      const int32_t best = static_cast<int32_t>(std::max_element(row, row + vocab) - row);
      next[b] = done[b] ? static_cast<int32_t>(c.pad_token_id) : best;
      out[b].push_back(next[b]);
      done[b] = done[b] || next[b] == c.eos_token_id;
    }
  }
  return out;
}

}  // namespace attnlab
