// ONNX models for the onnxruntime peers, encoded in JS with onnx-proto (opset 17, IR 8; the decode step: opset 23,
// IR 10, and com.microsoft 1).
//   sdpaModel(scale)        q, k, v (B, L, d) → MatMul(q, kᵀ) → Mul(scale) → Softmax → MatMul(·, v)
//   mhaModel(stateDict, E, H)  x (1, L, E), batch_first self-attention exactly as nn.MultiheadAttention
//                           computes it: one fused in-projection (x·W_inᵀ + b_in), split into q, k, v,
//                           reshape/transpose to heads, the same SDPA graph per head, merge heads, out-projection.
//   decodeModel(w, E, H, Hkv, op)  one decode step with a K/V cache: x (1, 1, E) and past_key/past_value
//                           (1, Hkv, P, d) → out (1, 1, E), present_key/present_value (1, Hkv, P + 1, d); the
//                           projections (one fused QKV MatMul + Add + Split, out-projection MatMul + Add) around
//                           onnxruntime's attention operator with a past cache: op 'GroupQueryAttention'
//                           (com.microsoft contrib op; also takes seqlens_k (1) = P and total_sequence_length = P + 1,
//                           int32) or 'Attention' (ONNX opset 23, q_num_heads/kv_num_heads on 3-D inputs).
// The weights are initializers taken from the same state dict the other implementations load.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT32 = onnx.TensorProto.DataType.INT32;
const INT64 = onnx.TensorProto.DataType.INT64;
const A = onnx.AttributeProto.AttributeType;

function floatInit(name, dims, data) {
  const f32 = data instanceof Float32Array ? data : Float32Array.from(data);
  // rawData is little-endian float32 bytes (a copy: the array may be a view into a larger buffer).
  return onnx.TensorProto.create({ name, dims, dataType: FLOAT, rawData: new Uint8Array(f32.slice().buffer) });
}

function int64Init(name, values) {
  return onnx.TensorProto.create({ name, dims: [values.length], dataType: INT64, int64Data: values });
}

function node(opType, inputs, outputs, attrs = {}, domain = '') {
  const attribute = Object.entries(attrs).map(([name, v]) =>
    Array.isArray(v)
      ? onnx.AttributeProto.create({ name, type: A.INTS, ints: v })
      : onnx.AttributeProto.create({ name, type: A.INT, i: v }),
  );
  const name = `${opType}_${outputs[0]}`;
  return onnx.NodeProto.create({ opType, domain, input: inputs, output: outputs, name, attribute });
}

function valueInfo(name, dims, elemType = FLOAT) {
  return onnx.ValueInfoProto.create({
    name,
    type: onnx.TypeProto.create({
      tensorType: onnx.TypeProto.Tensor.create({
        elemType,
        shape: onnx.TensorShapeProto.create({
          dim: dims.map((d) =>
            typeof d === 'string'
              ? onnx.TensorShapeProto.Dimension.create({ dimParam: d })
              : onnx.TensorShapeProto.Dimension.create({ dimValue: d }),
          ),
        }),
      }),
    }),
  });
}

function encode(graph, { irVersion = 8, opsets = [['', 17]] } = {}) {
  const model = onnx.ModelProto.create({
    irVersion,
    producerName: 'attnlab-bench',
    opsetImport: opsets.map(([domain, version]) => onnx.OperatorSetIdProto.create({ domain, version })),
    graph: onnx.GraphProto.create(graph),
  });
  return onnx.ModelProto.encode(model).finish();
}

// q (B, L, d), k (B, S, d), v (B, S, dv) → out (B, L, dv).
export function sdpaModel(scale) {
  return encode({
    name: 'sdpa',
    node: [
      node('Transpose', ['k'], ['kt'], { perm: [0, 2, 1] }),
      node('MatMul', ['q', 'kt'], ['scores']),
      node('Mul', ['scores', 'scale'], ['scaled']),
      node('Softmax', ['scaled'], ['probs'], { axis: -1 }),
      node('MatMul', ['probs', 'v'], ['out']),
    ],
    initializer: [floatInit('scale', [], [scale])],
    input: [valueInfo('q', ['B', 'L', 'D']), valueInfo('k', ['B', 'S', 'D']), valueInfo('v', ['B', 'S', 'DV'])],
    output: [valueInfo('out', ['B', 'L', 'DV'])],
  });
}

// (rows, cols) row-major → (cols, rows): ONNX MatMul takes x · W, PyTorch's Linear stores W as (out, in).
function transposed(w, rows, cols) {
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; ++r) for (let c = 0; c < cols; ++c) t[c * rows + r] = w[r * cols + c];
  return t;
}

// x (1, L, E) → out (1, L, E); state dict in PyTorch names (in_proj_weight (3E, E), in_proj_bias (3E),
// out_proj.weight (E, E), out_proj.bias (E)).
export function mhaModel(stateDict, E, H) {
  const d = E / H;
  return encode({
    name: 'mha',
    node: [
      node('MatMul', ['x', 'w_in_t'], ['proj']), // (1, L, 3E)
      node('Add', ['proj', 'b_in'], ['proj_b']),
      node('Split', ['proj_b'], ['q0', 'k0', 'v0'], { axis: 2 }), // equal split, (1, L, E) each
      node('Reshape', ['q0', 'heads_shape'], ['q1']), // (1, L, H, d)
      node('Reshape', ['k0', 'heads_shape'], ['k1']),
      node('Reshape', ['v0', 'heads_shape'], ['v1']),
      node('Transpose', ['q1'], ['q'], { perm: [0, 2, 1, 3] }), // (1, H, L, d)
      node('Transpose', ['k1'], ['kt'], { perm: [0, 2, 3, 1] }), // (1, H, d, L)
      node('Transpose', ['v1'], ['v'], { perm: [0, 2, 1, 3] }), // (1, H, L, d)
      node('MatMul', ['q', 'kt'], ['scores']), // (1, H, L, L)
      node('Mul', ['scores', 'scale'], ['scaled']),
      node('Softmax', ['scaled'], ['probs'], { axis: -1 }),
      node('MatMul', ['probs', 'v'], ['attn']), // (1, H, L, d)
      node('Transpose', ['attn'], ['attn_t'], { perm: [0, 2, 1, 3] }), // (1, L, H, d)
      node('Reshape', ['attn_t', 'merge_shape'], ['merged']), // (1, L, E)
      node('MatMul', ['merged', 'w_out_t'], ['o']),
      node('Add', ['o', 'b_out'], ['out']),
    ],
    initializer: [
      floatInit('w_in_t', [E, 3 * E], transposed(stateDict.in_proj_weight, 3 * E, E)),
      floatInit('b_in', [3 * E], stateDict.in_proj_bias),
      floatInit('w_out_t', [E, E], transposed(stateDict['out_proj.weight'], E, E)),
      floatInit('b_out', [E], stateDict['out_proj.bias']),
      floatInit('scale', [], [1 / Math.sqrt(d)]),
      int64Init('heads_shape', [0, -1, H, d]),
      int64Init('merge_shape', [0, -1, E]),
    ],
    input: [valueInfo('x', [1, 'L', E])],
    output: [valueInfo('out', [1, 'L', E])],
  });
}

// One decode step. w: { wq (E, E), wk (Hkv·d, E), wv (Hkv·d, E), bq, bk, bv, wo (E, E), bo } in PyTorch's
// (out, in) layout. The attention operator attends the new token's query to past ‖ new keys (no mask: the one
// query is the last position, every key is visible), default scale 1/√d.
export function decodeModel(w, E, H, Hkv, op) {
  const d = E / H;
  const kv = Hkv * d;
  const rows = E + 2 * kv;
  const wQkv = new Float32Array(rows * E);
  wQkv.set(w.wq, 0);
  wQkv.set(w.wk, E * E);
  wQkv.set(w.wv, (E + kv) * E);
  const bQkv = new Float32Array(rows);
  bQkv.set(w.bq, 0);
  bQkv.set(w.bk, E);
  bQkv.set(w.bv, E + kv);
  const gqa = op === 'GroupQueryAttention';
  if (!gqa && op !== 'Attention') throw new Error(`decodeModel: unknown op ${op}`);
  const attention = gqa
    ? node(
        'GroupQueryAttention',
        ['q', 'k', 'v', 'past_key', 'past_value', 'seqlens_k', 'total_sequence_length'],
        ['attn', 'present_key', 'present_value'],
        { num_heads: H, kv_num_heads: Hkv },
        'com.microsoft',
      )
    : node('Attention', ['q', 'k', 'v', '', 'past_key', 'past_value'], ['attn', 'present_key', 'present_value'], {
        q_num_heads: H,
        kv_num_heads: Hkv,
      });
  const cache = (name, len) => valueInfo(name, [1, Hkv, len, d]);
  return encode(
    {
      name: `decode_${op}`,
      node: [
        node('MatMul', ['x', 'w_qkv_t'], ['qkv0']), // (1, 1, E + 2·Hkv·d)
        node('Add', ['qkv0', 'b_qkv'], ['qkv']),
        node('Split', ['qkv', 'split'], ['q', 'k', 'v'], { axis: 2 }),
        attention, // (1, 1, E)
        node('MatMul', ['attn', 'w_out_t'], ['o']),
        node('Add', ['o', 'b_out'], ['out']),
      ],
      initializer: [
        floatInit('w_qkv_t', [E, rows], transposed(wQkv, rows, E)),
        floatInit('b_qkv', [rows], bQkv),
        int64Init('split', [E, kv, kv]),
        floatInit('w_out_t', [E, E], transposed(w.wo, E, E)),
        floatInit('b_out', [E], w.bo),
      ],
      input: [
        valueInfo('x', [1, 1, E]),
        cache('past_key', 'P'),
        cache('past_value', 'P'),
        ...(gqa ? [valueInfo('seqlens_k', [1], INT32), valueInfo('total_sequence_length', [], INT32)] : []),
      ],
      output: [valueInfo('out', [1, 1, E]), cache('present_key', 'T'), cache('present_value', 'T')],
    },
    {
      irVersion: 10,
      opsets: gqa
        ? [
            ['', 17],
            ['com.microsoft', 1],
          ]
        : [['', 23]],
    },
  );
}
