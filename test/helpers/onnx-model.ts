// Builds small ONNX models for tests, encoded with protobufjs from the part of the
// ONNX schema (onnx/onnx.proto, proto2) that these graphs need. The models mimic a
// YOLOv8/v11 detection head: a constant prediction tensor [1, 4 + nc, N] plus values
// read from the input at known pixels, so a test can see where letterboxing put the
// image and what it padded with, through the real onnxruntime-node session.
import protobuf from 'protobufjs';

const ONNX_SUBSET = `
syntax = "proto2";
package onnx;
message AttributeProto {
  enum AttributeType { UNDEFINED = 0; FLOAT = 1; INT = 2; STRING = 3; TENSOR = 4; GRAPH = 5; FLOATS = 6; INTS = 7; }
  optional string name = 1;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  repeated int64 ints = 8;
  optional AttributeType type = 20;
}
message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  optional string name = 8;
  optional bytes raw_data = 9;
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { optional int32 elem_type = 1; optional TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
}
message ValueInfoProto { optional string name = 1; optional TypeProto type = 2; }
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  repeated AttributeProto attribute = 5;
}
message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message OperatorSetIdProto { optional string domain = 1; optional int64 version = 2; }
message ModelProto {
  optional int64 ir_version = 1;
  optional string producer_name = 2;
  optional GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
}
`;

const FLOAT = 1;
const INT64 = 7;
export const ModelProto = protobuf.parse(ONNX_SUBSET).root.lookupType('onnx.ModelProto');

/** output[0, row, anchor] += mean of input channel `channel` over the input-pixel region [x0, x1) × [y0, y1). */
export interface InputProbe {
  channel: 0 | 1 | 2;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  row: number;
  anchor: number;
  /** Multiplier of the probed mean (default 1). */
  gain?: number;
}

export interface TestModelSpec {
  inputWidth: number;
  inputHeight: number;
  /** Constant predictions, rows of 4 + nc (cx, cy, w, h, class scores…), each with N anchors. */
  base: number[][];
  probes?: InputProbe[];
  /** 'channels-first' is Ultralytics' [1, 4 + nc, N]; 'anchors-first' the transposed [1, N, 4 + nc]. */
  layout?: 'channels-first' | 'anchors-first';
  /** Reshape the output to this shape at the end (to build a model with an unexpected output). */
  reshapeOutput?: number[];
}

export function floatTensor(name: string, dims: number[], values: ArrayLike<number>) {
  const raw = Buffer.from(new Float32Array(values).buffer);
  return { name, dims, dataType: FLOAT, rawData: raw };
}

export function int64Tensor(name: string, values: number[]) {
  const raw = Buffer.from(new BigInt64Array(values.map(BigInt)).buffer);
  return { name, dims: [values.length], dataType: INT64, rawData: raw };
}

export function valueInfo(name: string, dims: (number | string)[]) {
  return {
    name,
    type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  };
}

/** Serialized ONNX model bytes (opset 13). */
export function buildYoloTestModel(spec: TestModelSpec): Uint8Array {
  const rows = spec.base.length;
  const anchors = spec.base[0]!.length;
  const nodes: object[] = [];
  const inits: object[] = [floatTensor('base', [1, rows, anchors], spec.base.flat())];
  let current = 'base';
  (spec.probes ?? []).forEach((p, k) => {
    inits.push(int64Tensor(`starts${k}`, [0, p.channel, p.y0, p.x0]));
    inits.push(int64Tensor(`ends${k}`, [1, p.channel + 1, p.y1, p.x1]));
    const mask = new Float32Array(rows * anchors);
    mask[p.row * anchors + p.anchor] = p.gain ?? 1;
    inits.push(floatTensor(`mask${k}`, [1, rows, anchors], mask));
    nodes.push({ opType: 'Slice', input: ['images', `starts${k}`, `ends${k}`], output: [`region${k}`], name: `slice${k}` });
    nodes.push({
      opType: 'ReduceMean',
      input: [`region${k}`],
      output: [`mean${k}`],
      name: `mean${k}`,
      attribute: [
        { name: 'axes', ints: [1, 2, 3], type: 7 },
        { name: 'keepdims', i: 1, type: 2 },
      ],
    });
    nodes.push({ opType: 'Mul', input: [`mean${k}`, `mask${k}`], output: [`scaled${k}`], name: `mul${k}` });
    nodes.push({ opType: 'Add', input: [current, `scaled${k}`], output: [`sum${k}`], name: `add${k}` });
    current = `sum${k}`;
  });
  // The probes' [1,1,1,1] means broadcast against [1, rows, N] to rank 4: take the [1, rows, N] back out.
  if (spec.probes?.length) {
    inits.push(int64Tensor('shape3', [1, rows, anchors]));
    nodes.push({ opType: 'Reshape', input: [current, 'shape3'], output: ['pred'], name: 'to3d' });
    current = 'pred';
  }
  if (spec.layout === 'anchors-first') {
    nodes.push({
      opType: 'Transpose',
      input: [current],
      output: ['transposed'],
      name: 'transpose',
      attribute: [{ name: 'perm', ints: [0, 2, 1], type: 7 }],
    });
    current = 'transposed';
  }
  if (spec.reshapeOutput) {
    inits.push(int64Tensor('outshape', spec.reshapeOutput));
    nodes.push({ opType: 'Reshape', input: [current, 'outshape'], output: ['reshaped'], name: 'reshape_out' });
    current = 'reshaped';
  }
  nodes.push({ opType: 'Identity', input: [current], output: ['output0'], name: 'out' });

  const model = {
    irVersion: 7,
    producerName: 'cropwalk-test',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'yolo-test',
      node: nodes,
      initializer: inits,
      input: [valueInfo('images', [1, 3, spec.inputHeight, spec.inputWidth])],
      output: [{ name: 'output0', type: { tensorType: { elemType: FLOAT } } }],
    },
  };
  const err = ModelProto.verify(model);
  if (err) throw new Error(`test model does not fit the ONNX schema: ${err}`);
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}
