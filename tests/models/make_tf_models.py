"""TensorFlow frozen GraphDefs for the model-node tests, written without
TensorFlow (Debian has none): hflow's copy of the GraphDef schema
(src/model/proto/tf_graph.proto) is compiled with protoc at test time and
the graphs are built message by message. Each case's expected outputs come
from PyTorch eager computing the same network in TensorFlow's NHWC layout
(SAME padding, AvgPool over real pixels only). Called by
make_onnx_models.py, which owns the manifest.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_schema():
    out = tempfile.mkdtemp(prefix="hflow_tf_pb2_")
    subprocess.run(["protoc", "--python_out=" + out, "-I", os.path.join(REPO, "src"),
                    "model/proto/tf_graph.proto"], check=True)
    sys.path.insert(0, out)
    from model.proto import tf_graph_pb2  # noqa: E402
    return tf_graph_pb2


class Graph:
    """A GraphDef under construction."""

    def __init__(self, pb):
        self.pb = pb
        self.g = pb.GraphDef()
        self.g.versions.producer = 1087

    def node(self, name, op, inputs=(), **attrs):
        n = self.g.node.add()
        n.name, n.op = name, op
        n.input.extend(inputs)
        for k, v in attrs.items():
            a = n.attr[k]
            if isinstance(v, bool):
                a.b = v
            elif isinstance(v, int):
                a.i = v
            elif isinstance(v, float):
                a.f = v
            elif isinstance(v, bytes):
                a.s = v
            elif isinstance(v, list):
                a.list.i.extend(v)
            elif isinstance(v, tuple) and v[0] == "type":
                a.type = v[1]
            elif isinstance(v, tuple) and v[0] == "shape":
                for d in v[1]:
                    a.shape.dim.add().size = d
            else:
                raise TypeError(k)
        return name

    def const(self, name, array):
        array = np.asarray(array)
        n = self.g.node.add()
        n.name, n.op = name, "Const"
        t = n.attr["value"].tensor
        t.dtype = {np.float32: self.pb.DT_FLOAT, np.int32: self.pb.DT_INT32,
                   np.int64: self.pb.DT_INT64}[array.dtype.type]
        for d in array.shape:
            t.tensor_shape.dim.add().size = d
        t.tensor_content = array.tobytes()
        n.attr["dtype"].type = t.dtype
        return name

    def placeholder(self, name, shape, dtype=None):
        return self.node(name, "Placeholder", dtype=("type", dtype or self.pb.DT_FLOAT),
                         shape=("shape", shape))


def same_pad(x, k, s):
    """TensorFlow's SAME padding of an NCHW tensor (the odd pixel at the end)."""
    pads = []
    for dim in (3, 2):
        size = x.shape[dim]
        out = (size + s - 1) // s
        total = max((out - 1) * s + k - size, 0)
        pads += [total // 2, total - total // 2]
    return pads


def nhwc(t):
    return t.permute(0, 2, 3, 1)


def cnn(pb, rng):
    g = Graph(pb)
    x = rng.standard_normal((1, 8, 8, 3)).astype(np.float32)
    w1 = rng.standard_normal((3, 3, 3, 4)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(4).astype(np.float32)
    w2 = rng.standard_normal((3, 3, 4, 2)).astype(np.float32) * 0.3
    bn = [rng.uniform(0.5, 1.5, 8).astype(np.float32), rng.standard_normal(8).astype(np.float32),
          rng.standard_normal(8).astype(np.float32) * 0.1, rng.uniform(0.5, 1.5, 8).astype(np.float32)]
    w3 = rng.standard_normal((8, 5)).astype(np.float32)
    b3 = rng.standard_normal(5).astype(np.float32)
    g.placeholder("x", [1, 8, 8, 3])
    g.const("w1", w1), g.const("b1", b1), g.const("w2", w2)
    for i, v in enumerate(bn):
        g.const("bn%d" % i, v)
    g.const("w3", w3), g.const("b3", b3), g.const("axes", np.array([1, 2], np.int32))
    g.node("conv1", "Conv2D", ["x", "w1"], strides=[1, 1, 1, 1], padding=b"SAME",
           data_format=b"NHWC", dilations=[1, 1, 1, 1])
    g.node("bias1", "BiasAdd", ["conv1", "b1"], data_format=b"NHWC")
    g.node("relu1", "Relu", ["bias1"])
    g.node("dw", "DepthwiseConv2dNative", ["relu1", "w2"], strides=[1, 2, 2, 1],
           padding=b"SAME", data_format=b"NHWC")
    g.node("relu6", "Relu6", ["dw"])
    g.node("bn", "FusedBatchNormV3", ["relu6", "bn0", "bn1", "bn2", "bn3"], epsilon=1e-3,
           is_training=False, data_format=b"NHWC")
    g.node("pool", "MaxPool", ["bn"], ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding=b"VALID")
    g.node("avg", "AvgPool", ["pool"], ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1], padding=b"SAME")
    g.node("avg2", "AvgPool", ["avg"], ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding=b"SAME")
    g.node("mean", "Mean", ["avg2", "axes"], keep_dims=False)
    g.node("fc", "MatMul", ["mean", "w3"], transpose_a=False, transpose_b=False)
    g.node("bias3", "BiasAdd", ["fc", "b3"])
    g.node("probs", "Softmax", ["bias3"])
    g.node("feat", "Identity", ["bn"])

    t = torch.from_numpy
    h = t(x).permute(0, 3, 1, 2)
    h = F.conv2d(F.pad(h, same_pad(h, 3, 1)), t(w1).permute(3, 2, 0, 1)) + t(b1)[:, None, None]
    h = F.relu(h)
    h = F.conv2d(F.pad(h, same_pad(h, 3, 2)), t(w2).permute(2, 3, 0, 1).reshape(8, 1, 3, 3),
                 stride=2, groups=4)
    h = F.batch_norm(torch.clamp(h, 0, 6), t(bn[2]), t(bn[3]), t(bn[0]), t(bn[1]), False, 0.0, 1e-3)
    feat = nhwc(h)
    h = F.max_pool2d(h, 2, 2)
    h = F.avg_pool2d(h, 3, 1, padding=1, count_include_pad=False)
    p = same_pad(h, 2, 1)
    h = F.avg_pool2d(F.pad(h, p), 2, 1) / F.avg_pool2d(F.pad(torch.ones_like(h), p), 2, 1)
    z = h.mean(dim=(2, 3)) @ t(w3) + t(b3)
    return g.g, [x], [F.softmax(z, dim=-1), feat]


def ops(pb, rng):
    g = Graph(pb)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = rng.standard_normal((2, 3, 4)).astype(np.float32)
    c = rng.standard_normal(4).astype(np.float32)
    g.placeholder("x", [2, 3, 4]), g.placeholder("y", [2, 3, 4])
    g.const("c", c), g.const("two", np.array(2.0, np.float32))
    g.const("shape", np.array([3, 8], np.int32)), g.const("zero", np.array(0, np.int32))
    g.const("last", np.array(-1, np.int32)), g.const("ax1", np.array([1], np.int32))
    g.const("paddings", np.array([[0, 0], [1, 0], [0, 2]], np.int32))
    g.const("perm", np.array([2, 0, 1], np.int32))
    g.node("a", "AddV2", ["x", "y"])
    g.node("b", "Sub", ["a", "c"])
    g.node("m", "Mul", ["b", "y"])
    g.node("d", "RealDiv", ["m", "two"])
    g.node("s", "Sigmoid", ["d"])
    g.node("t", "Tanh", ["x"])
    g.node("r", "Reshape", ["t", "shape"])
    g.node("e", "ExpandDims", ["r", "zero"])
    g.node("sq", "Squeeze", ["e"], squeeze_dims=[0])
    g.node("cat", "ConcatV2", ["s", "x", "last"], N=2)
    g.node("sum", "Sum", ["cat", "ax1"], keep_dims=True)
    g.node("cast", "Cast", ["sum"], DstT=("type", pb.DT_INT32))
    g.node("pad", "Pad", ["x", "paddings"])
    g.node("tr", "Transpose", ["x", "perm"])
    g.node("id", "Identity", ["a"])

    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    a = tx + ty
    s = torch.sigmoid((a - torch.from_numpy(c)) * ty / 2.0)
    sq = torch.tanh(tx).reshape(3, 8)
    cat = torch.cat([s, tx], dim=-1)
    cast = cat.sum(dim=1, keepdim=True).to(torch.int32)
    pad = F.pad(tx, (0, 2, 1, 0))
    return g.g, [x, y], [sq, cast, pad, tx.permute(2, 0, 1), a]


def add(pb, rng):
    """GE's add.pb sample: two float32 [3] placeholders added."""
    g = Graph(pb)
    a = rng.standard_normal(3).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    g.placeholder("a", [3]), g.placeholder("b", [3])
    g.node("add", "Add", ["a", "b"])
    return g.g, [a, b], [torch.from_numpy(a + b)]


def write(out):
    """Writes every case; returns their manifest entries."""
    pb = load_schema()
    rng = np.random.default_rng(0)
    entries = []
    for name, make in (("tf_cnn", cnn), ("tf_ops", ops), ("tf_add", add)):
        graph, inputs, expected = make(pb, rng)
        path = os.path.join(out, name + ".pb")
        with open(path, "wb") as f:
            f.write(graph.SerializeToString())
        entry = {"name": name, "file": path, "framework": "tensorflow", "opset": 0,
                 "inputs": [], "outputs": []}
        for kind, arrays in (("inputs", inputs), ("outputs", expected)):
            for i, v in enumerate(arrays):
                f = os.path.join(out, "%s.%s%d.npy" % (name, kind[0], i))
                np.save(f, v.numpy() if isinstance(v, torch.Tensor) else v)
                entry[kind].append(f)
        entries.append(entry)
    # Operators the front-end does not map (for the error tests).
    g = Graph(pb)
    g.placeholder("x", [3])
    g.node("erf", "Erf", ["x"])
    g.node("lgamma", "Lgamma", ["erf"])
    with open(os.path.join(out, "tf_unsupported.pb"), "wb") as f:
        f.write(g.g.SerializeToString())
    return entries
