// The tiny model (arch 'tiny'; attnlab's own, no Hugging Face model_type): the demo's TinyTransformer as a
// configuration of the one Transformer. One block without norms or MLP, fixed sinusoidal positions (PyTorch's
// interleaved layout), nn.MultiheadAttention(E, H, bias=False) (causal or not) with its residual, and a readout
// Linear(E, V) with bias as an untied LM head. PyTorch's state-dict names: embedding.weight, attn.in_proj_weight
// (3E, E: queries, keys, values), attn.out_proj.weight, readout.weight, readout.bias.
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

// One layer of E / H-wide heads, as many key/value heads as query heads, no window; untied; the features.
void Normalise(TransformerConfig& c) {
  if (c.num_layers != 1) Fail("numLayers", "1 for arch 'tiny'", std::to_string(c.num_layers));
  if (c.embed_dim % 2 != 0) Fail("embedDim", "an even number (sin/cos pairs)", std::to_string(c.embed_dim));
  if (c.embed_dim % c.num_heads != 0) {
    Fail("numHeads", "a divisor of embedDim " + std::to_string(c.embed_dim), std::to_string(c.num_heads));
  }
  const int64_t head_dim = c.embed_dim / c.num_heads;
  if (c.num_kv_heads != c.num_heads) {
    Fail("numKVHeads", "unset for arch 'tiny' (nn.MultiheadAttention: numHeads key/value heads)",
         std::to_string(c.num_kv_heads));
  }
  if (c.head_dim != head_dim)
    Fail("headDim", "unset for arch 'tiny' (embedDim / numHeads)", std::to_string(c.head_dim));
  if (c.hidden_dim != 0) Fail("hiddenDim", "unset for arch 'tiny' (no MLP)", std::to_string(c.hidden_dim));
  if (c.sliding_window != 0) Fail("slidingWindow", "null for arch 'tiny'", std::to_string(c.sliding_window));
  c.tie_embeddings = false;  // (the readout is its own)
  c.attention_bias = AttentionBias::kNone;
  c.norm = NormKind::kNone;
  c.positions = PositionKind::kSinusoidal;
  c.mlp = MlpKind::kNone;
  c.mlp_bias = false;
  c.qk_norm = false;
  c.head_bias = true;
}

// (name, shape, slot, layer, offset, transposed): nn.Embedding, nn.MultiheadAttention's packed in_proj (3E, E) and
// out_proj, nn.Linear readout.
void Parameters(const TransformerConfig& c, const ModelSizes&, std::vector<ParamSpec>& out) {
  const int64_t e = c.embed_dim, v = c.vocab_size;
  out.push_back({"embedding.weight", {v, e}, Slot::kEmbed, -1, 0, true});
  out.push_back({"attn.in_proj_weight", {3 * e, e}, Slot::kQkv, 0, 0, true});
  out.push_back({"attn.out_proj.weight", {e, e}, Slot::kO, 0, 0, true});
  out.push_back({"readout.weight", {v, e}, Slot::kHead, -1, 0, true});
  out.push_back({"readout.bias", {v}, Slot::kHeadBias, -1, 0, false});
}

std::string CanonicalName(const std::string& name) { return name; }

}  // namespace

const ArchType kTinyArch = {"tiny",
                            Normalise,
                            {"vocabSize", "contextLength", "embedDim", "numLayers", "numHeads", "causal"},
                            R"({"contextLength": 1048576, "numLayers": 1, "causal": true})",
                            {},
                            Parameters,
                            CanonicalName};

}  // namespace attnlab
