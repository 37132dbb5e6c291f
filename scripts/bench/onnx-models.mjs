// ONNX models for the onnxruntime peers, encoded in JS with onnx-proto (opset 17, IR 8).
//   sdpaModel(scale)        q, k, v (B, L, d) → MatMul(q, kᵀ) → Mul(scale) → Softmax → MatMul(·, v)
//   mhaModel(stateDict, E, H)  x (1, L, E), batch_first self-attention exactly as nn.MultiheadAttention
//                           computes it: one fused in-projection (x·W_inᵀ + b_in), split into q, k, v,
//                           reshape/transpose to heads, the same SDPA graph per head, merge heads, out-projection.
// The weights are initializers taken from the same state dict the other implementations load.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
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

function node(opType, inputs, outputs, attrs = {}) {
  const attribute = Object.entries(attrs).map(([name, v]) =>
    Array.isArray(v)
      ? onnx.AttributeProto.create({ name, type: A.INTS, ints: v })
      : onnx.AttributeProto.create({ name, type: A.INT, i: v }),
  );
  return onnx.NodeProto.create({ opType, input: inputs, output: outputs, name: `${opType}_${outputs[0]}`, attribute });
}

function valueInfo(name, dims) {
  return onnx.ValueInfoProto.create({
    name,
    type: onnx.TypeProto.create({
      tensorType: onnx.TypeProto.Tensor.create({
        elemType: FLOAT,
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

function encode(graph) {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'attnlab-bench',
    opsetImport: [onnx.OperatorSetIdProto.create({ domain: '', version: 17 })],
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

// x (1, L, E) → out (1, L, E); state dict in PyTorch names (in_proj_weight (3E, E), in_proj_bias (3E),
// out_proj.weight (E, E), out_proj.bias (E)).
export function mhaModel(stateDict, E, H) {
  const d = E / H;
  const transposed = (w, rows, cols) => {
    const t = new Float32Array(rows * cols);
    for (let r = 0; r < rows; ++r) for (let c = 0; c < cols; ++c) t[c * rows + r] = w[r * cols + c];
    return t;
  };
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
