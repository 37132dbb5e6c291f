// An encoder–decoder's forward (Transformer::ForwardEncoderDecoder; marian): the two inputs, masks and head masks
// checked, each stack's buffers and outputs, then the encoder's stack and the decoder's (whose blocks attend across
// the encoder's last hidden state, its padding masking the keys) in one dispatch (EncoderDecoderForward).
#include <algorithm>
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

// Points a's blocks at `blocks` (keep.size() of them) with their buffers and outputs.
void SetUpStack(ModelArgs& a, BlockArgs* blocks, const StackOutputs& o, StackBuffers& buf) {
  const size_t n = o.keep.size();
  const int64_t batch = static_cast<int64_t>(a.batch), t_len = static_cast<int64_t>(a.tokens);
  buf.k.assign(a.batch * a.kv_heads * a.tokens * a.head_dim, 0.0f);
  buf.v.assign(buf.k.size(), 0.0f);
  o.attentions->resize(n);
  for (size_t l = 0; l < n; ++l) {
    BlockArgs& b = blocks[l];
    b.cache_k = buf.k.data();
    b.cache_v = buf.v.data();
    if (o.keep[l]) {
      (*o.attentions)[l] = ZeroTensor({batch, static_cast<int64_t>(a.heads), t_len, t_len});
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

// The decoder blocks' cross-attention: keys and values (B, H, S, hd) each, weights (B, H, T, S) of the layers kept,
// the cross head mask's rows.
void SetUpCross(const ModelArgs& a, BlockArgs* blocks, size_t s_len, const std::vector<bool>& keep,
                const float* head_mask, std::vector<std::vector<float>>& kv, std::vector<Tensor>& attentions) {
  const size_t n = keep.size();
  kv.assign(2 * n, std::vector<float>(a.batch * a.heads * s_len * a.head_dim));
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

void CheckPositions(const char* name, size_t length, int64_t context_length) {
  if (length > static_cast<size_t>(context_length)) {
    Fail(name, "at most " + std::to_string(context_length) + " positions (contextLength)", std::to_string(length));
  }
}

// The decoder's inputs (B, T) checked against the encoder's batch size; the options an encoder–decoder does not take
// refused; returns T.
size_t CheckDecoderInputs(const TransformerConfig& c, const TransformerForwardOptions& o, size_t batch, size_t s_len) {
  if (!o.decoder_input_ids && o.decoder_input_ids_shape.empty()) {
    Fail("decoderInputIds", "the decoder's input ids (B, T) (an encoder–decoder's forward needs them)", "none");
  }
  const auto [dec_batch, t_len] =
      CheckTokens(TokensView{o.decoder_input_ids, o.decoder_input_ids_shape}, c.vocab_size, "decoderInputIds");
  if (dec_batch != batch) {
    Fail("decoderInputIds", "batch size " + std::to_string(batch) + " (the tokens')", std::to_string(dec_batch));
  }
  CheckPositions("tokens", s_len, c.context_length);
  CheckPositions("decoderInputIds", t_len, c.context_length);
  if (s_len == 0 && t_len > 0) Fail("tokens", "at least one source position (the cross-attention's keys)", "none");
  if (o.cache) Fail("kvCache", "null for an encoder–decoder's forward", "a cache");
  if (o.token_type_ids) Fail("tokenTypeIds", "null for an encoder–decoder", "token types");
  if (o.last_logits_only) Fail("lastLogitsOnly", "false for an encoder–decoder", "true");
  CheckHeadMask("headMask", o.head_mask, o.head_mask_shape, c.num_layers, c.num_heads);
  CheckHeadMask("decoderHeadMask", o.decoder_head_mask, o.decoder_head_mask_shape, c.decoder_layers, c.num_heads);
  CheckHeadMask("crossAttnHeadMask", o.cross_attn_head_mask, o.cross_attn_head_mask_shape, c.decoder_layers,
                c.num_heads);
  return t_len;
}

const float* OrNull(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

}  // namespace

TransformerOutput Transformer::ForwardEncoderDecoder(const TokensView& tokens,
                                                     const TransformerForwardOptions& o) const {
  const TransformerConfig& c = impl_->config;
  const auto [batch, s_len] = CheckTokens(tokens, c.vocab_size);
  const size_t t_len = CheckDecoderInputs(c, o, batch, s_len);
  const std::vector<float> enc_bias = KeyBiasOf("attentionMask", o.attention_mask, o.attention_mask_shape, batch, s_len,
                                                "(B, S)"),
                           dec_bias = KeyBiasOf("decoderAttentionMask", o.decoder_attention_mask,
                                                o.decoder_attention_mask_shape, batch, t_len, "(B, T)");
  const int64_t limit = std::max(c.num_layers, c.decoder_layers);
  const std::vector<bool> keep_enc = KeptLayers(o.output_attentions, c.num_layers, limit),
                          keep_dec = KeptLayers(o.output_attentions, c.decoder_layers, limit);
  TransformerOutput out;
  CallArgs enc, dec;
  PrepareCall(tokens, 0, s_len, enc);
  PrepareCall(TokensView{o.decoder_input_ids, o.decoder_input_ids_shape}, 0, t_len, dec);
  StackBuffers enc_buf, dec_buf;
  SetUpStack(enc.a, enc.blocks.data(),
             {keep_enc, o.head_mask, o.output_hidden_states, &out.encoder_attentions, &out.encoder_hidden_states},
             enc_buf);
  BlockArgs* dec_blocks = dec.blocks.data() + c.num_layers;
  SetUpStack(dec.a, dec_blocks,
             {keep_dec, o.decoder_head_mask, o.output_hidden_states, &out.attentions, &out.hidden_states}, dec_buf);
  std::vector<std::vector<float>> cross_kv;
  SetUpCross(dec.a, dec_blocks, s_len, keep_dec, o.cross_attn_head_mask, cross_kv, out.cross_attentions);
  const int64_t b = static_cast<int64_t>(batch);
  out.encoder_last_hidden_state = ZeroTensor({b, static_cast<int64_t>(s_len), c.embed_dim});
  EncoderArgs enc_args, dec_args;
  enc_args.post_norm = dec_args.post_norm = c.post_norm;
  enc_args.last_hidden = out.encoder_last_hidden_state.data.data();
  dec_args.task = c.task;
  if (c.task == Task::kBase) {
    out.last_hidden_state = ZeroTensor({b, static_cast<int64_t>(t_len), c.embed_dim});
    dec_args.last_hidden = out.last_hidden_state.data.data();
  } else {
    out.logits = ZeroTensor({b, static_cast<int64_t>(t_len), c.vocab_size});
  }
  enc.a.causal = false;
  enc.a.key_bias = OrNull(enc_bias);
  enc.a.encoder = &enc_args;
  const CrossArgs cross{out.encoder_last_hidden_state.data.data(), s_len, OrNull(enc_bias)};
  dec.a.key_bias = OrNull(dec_bias);
  dec.a.logits = out.logits.data.data();
  dec.a.encoder = &dec_args;
  dec.a.cross = &cross;
  EncoderDecoderForward(enc.a, dec.a);
  return out;
}

}  // namespace attnlab
