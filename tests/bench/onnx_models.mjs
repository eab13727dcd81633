// The ONNX attention graphs the benchmark gives onnxruntime-web, written with onnx-proto:
//   explicit:  Transpose(K), MatMul(Q, Kᵀ), Div(√d), [Add(causal mask)], Softmax, MatMul(·, V)
//              (opset 17; the mask is ConstantOfShape(-inf) + Trilu(upper, k=1), folded at load)
//   attention: the opset-23 Attention op on (1, 1, T, d) inputs, with scale and is_causal.
// Not a test: model bytes only.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { onnx } = require("onnx-proto");

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

function valueInfo(name, dims) {
  return onnx.ValueInfoProto.create({
    name,
    type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((dimValue) => ({ dimValue })) } } },
  });
}

function floatTensor(name, dims, values) {
  return onnx.TensorProto.create({ name, dims, dataType: FLOAT, floatData: values });
}

function attr(name, value) {
  if (Array.isArray(value)) return onnx.AttributeProto.create({ name, ints: value, type: onnx.AttributeProto.AttributeType.INTS });
  if (value instanceof onnx.TensorProto) return onnx.AttributeProto.create({ name, t: value, type: onnx.AttributeProto.AttributeType.TENSOR });
  if (Number.isInteger(value) && name !== "scale") return onnx.AttributeProto.create({ name, i: value, type: onnx.AttributeProto.AttributeType.INT });
  return onnx.AttributeProto.create({ name, f: value, type: onnx.AttributeProto.AttributeType.FLOAT });
}

function node(opType, input, output, attributes = {}) {
  return onnx.NodeProto.create({ opType, input, output, name: output[0],
    attribute: Object.entries(attributes).map(([k, v]) => attr(k, v)) });
}

function model(graph, opset, irVersion) {
  const m = onnx.ModelProto.create({ irVersion, producerName: "attention-explainer-bench", graph,
    opsetImport: [{ domain: "", version: opset }] });
  return onnx.ModelProto.encode(m).finish();
}

/** Transpose, MatMul, Div, [Add mask], Softmax, MatMul on (T, d) inputs Q, K, V -> Y (T, d). */
export function explicitAttention(T, d, causal) {
  const nodes = [
    node("Transpose", ["K"], ["Kt"], { perm: [1, 0] }),
    node("MatMul", ["Q", "Kt"], ["S"]),
    node("Div", ["S", "sqrt_d"], ["S_scaled"]),
  ];
  const initializer = [floatTensor("sqrt_d", [], [Math.sqrt(d)])];
  let logits = "S_scaled";
  if (causal) {
    initializer.push(onnx.TensorProto.create({ name: "mask_shape", dims: [2], dataType: INT64, int64Data: [T, T] }));
    nodes.push(node("ConstantOfShape", ["mask_shape"], ["minus_inf"], { value: floatTensor("value", [1], [-Infinity]) }));
    initializer.push(onnx.TensorProto.create({ name: "one", dims: [], dataType: INT64, int64Data: [1] }));
    nodes.push(node("Trilu", ["minus_inf", "one"], ["mask"], { upper: 1 }));
    nodes.push(node("Add", ["S_scaled", "mask"], ["S_masked"]));
    logits = "S_masked";
  }
  nodes.push(node("Softmax", [logits], ["P"], { axis: -1 }));
  nodes.push(node("MatMul", ["P", "V"], ["Y"]));
  const graph = onnx.GraphProto.create({ name: "attention", node: nodes, initializer,
    input: ["Q", "K", "V"].map((n) => valueInfo(n, [T, d])), output: [valueInfo("Y", [T, d])] });
  return model(graph, 17, 8);
}

/** The opset-23 Attention op on (1, 1, T, d) inputs: Y = softmax(Q Kᵀ · scale [+ causal]) V. */
export function attentionOp(T, d, causal) {
  const nodes = [node("Attention", ["Q", "K", "V"], ["Y"], { is_causal: causal ? 1 : 0, scale: 1 / Math.sqrt(d) })];
  const graph = onnx.GraphProto.create({ name: "attention23", node: nodes,
    input: ["Q", "K", "V"].map((n) => valueInfo(n, [1, 1, T, d])), output: [valueInfo("Y", [1, 1, T, d])] });
  return model(graph, 23, 11);
}
