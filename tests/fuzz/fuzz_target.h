// attnlab fuzz target: decodes bytes into one ScaledDotProductAttention call, a MultiHeadAttention session
// (construction, LoadStateDict, Forward, StateDict), a whole-model session (configuration → checkpoint → Forward) or
// an encoder or encoder–decoder training session (configuration → one batch → LossAndGradient, TrainStep), and
// checks invariants. Built once as the library attnlab_fuzz_target (CMakeLists.txt) that the libFuzzer driver
// (tests/fuzz/attention_fuzzer.cc) and the Catch2 replay of the corpus and regressions
// (tests/cpp/fuzz_regressions_test.cc) both link, so that both run exactly the same decode + check code: input.h
// (decoding), oracle.h (float64 reference), session.h with sdpa_options.h, sdpa_session.cc, sdpa_check.cc,
// sdpa_backward_session.cc, mha_session.cc, mha_check.cc, mha_cache_session.cc, model_session.cc,
// encoder_train_session.cc and seq2seq_session.cc (the calls and their checks).
//
// Invariants (any violation is a finding; RunOne returns its description, "" when none):
//   * a call either throws std::invalid_argument whose message reads "<argument>: expected ..., got ..." or
//     returns; any other exception (or a crash, a sanitizer report, a hang) is a finding;
//   * a small model of the documented argument rules (docs/api.md, attention.h) predicts which: a valid call
//     that throws or an invalid call that returns is a finding;
//   * a returned result has the documented shapes and sizes (weights empty when not requested);
//   * every "clean" row (its query row, the keys/values it can see, its mask row and the parameters finite,
//     -inf allowed in masks, and no float32 overflow possible on the way) has weights that are all exactly 0
//     (fully masked; then its output is exactly 0) or lie in [0, 1] and sum to 1 within 1e-5, a finite output,
//     and agrees with a float64 reference (tolerance from a float32 error bound, 1e-5 relative floor);
//   * NaN stays where it belongs: a clean row is clean whatever other rows and other batch items hold; an output
//     column whose visible value row holds NaN is NaN;
//   * repeated calls are bit-identical; a failed LoadStateDict changes nothing; StateDict returns what was loaded;
//   * ScaledDotProductAttentionBackward (after most valid SDPA calls): the same model, shapes and determinism, and
//     on batch items whose inputs are all finite, finite gradients that agree with a float64 reference.
//   * the SDPA options of issue 19 (sdpa_options.h: enable_gqa, causal_align, kv_lengths, window, softcap,
//     return_scores, past_key / past_value, broadcast masks): the reference sees exactly the keys each row sees
//     (a row that sees none is 0, weights and output); present_key / present_value are past ‖ new bit for bit; each
//     scores stage agrees with the reference and the stages with each other (softcapped = c·tanh(scaled / c),
//     masked = softcapped + mask and -inf wherever a key is masked, weights = softmax(masked)); enable_gqa gives
//     bit for bit the result of the same call on K/V heads repeated explicitly, and in the backward K/V gradients
//     equal to the group sums of that call's;
//   * MultiHeadAttention with num_kv_heads (head h reads K/V head h / (H / Hkv)) and KV-cache decoding
//     (mha_cache_session.cc): each step equals the rows of one causal Forward over every token so far; a step past
//     max_length is rejected and appends nothing.
//   * whole models (model_session.cc): a small GPT-2 / Llama configuration, its checkpoint (names, shapes) and
//     tokens against their rules; an F16/BF16 checkpoint kept in 16 bits gives bit for bit the results of float32
//     storage of the same values (logits, every attention, every hidden state; NaN for NaN).
//   * encoder training (encoder_train_session.cc): a small BERT or ViT, its batch (ids or pixels, padding, labels)
//     and AdamW's lr against their rules; on a valid call (finite inputs, parameters drawn N(0, 0.02)) a finite
//     loss, finite gradients and a finite gradient norm.
//   * encoder–decoder training (seq2seq_session.cc): a small T5 or Marian and one batch (padding, −100 labels,
//     decoder inputs shifted or given) against its rules; a valid batch's loss finite and ≥ 0, every gradient
//     finite and the same bits from a second call, TrainStep's loss the gradient call's.
//
// Strict NaN policy (the default; ATTNLAB_FUZZ_STRICT=0 or Options::strict_nan = false turn it off): also the policy of
// docs/robustness.md, "NaN and Inf": a NaN in query row i, in mask element (i, j) of a visible key, or in a visible,
// unmasked key row makes weight row i and output row i all NaN; a +inf mask element makes its row NaN; and NaN/Inf in a
// key or value row that row i cannot see (causally hidden, bool-masked or -inf; in MHA, -inf is the float32 sum of the
// two masks, so two finite masks that overflow to -inf mask the key too) never reaches row i.
//
#ifndef ATTNLAB_TESTS_FUZZ_FUZZ_TARGET_H_
#define ATTNLAB_TESTS_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnlab_fuzz {

struct Options {
  bool strict_nan = true;     // also check the strict NaN policy (see above)
  int64_t forced_target = 0;  // a Highway target to force (0: the one input byte 0 selects)
  bool use_target_byte = true;
  // Choose only among targets that every x86-64 CI machine has (AVX2 and below; ATTNLAB_FUZZ_PORTABLE=1): the fixed
  // run of scripts/fuzz.sh --runs then executes the same code, so it takes the same path, on AVX2 and AVX-512 hosts.
  bool portable_targets = false;
  bool verbose = false;  // print every decoded case to stderr (ATTNLAB_FUZZ_VERBOSE=1)
  // SDPA: an attended row's output lies within the range of the value rows it attends (ATTNLAB_FUZZ_RANGE=1). Off by
  // default while the online path (need_weights false) returns 0 for rows with logits around 1e10 and more
  // (q (1, 2) = {1e10, 1}, k (4, 2) = {1, 0, -1, 0, 0.5, 0, 3, 1}: output 0, weights path 7): a kernel bug.
  bool check_range = false;
};

// Options from the environment: ATTNLAB_FUZZ_STRICT=0 (lenient), ATTNLAB_FUZZ_VERBOSE=1, ATTNLAB_FUZZ_RANGE=1,
// ATTNLAB_FUZZ_PORTABLE=1.
Options OptionsFromEnv();

// Decodes and runs one input; "" when every invariant held, else the first finding with the decoded case.
std::string RunOne(const uint8_t* data, size_t size, const Options& opts);

}  // namespace attnlab_fuzz

#endif  // ATTNLAB_TESTS_FUZZ_FUZZ_TARGET_H_
