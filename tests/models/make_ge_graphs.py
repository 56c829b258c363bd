"""GE graph files (docs/formats.md, "GE graph file": the JSON document form,
weights inline) for the model-node tests: graphs of GE operators with GE's
op types, input, output and attribute names, which hflow lowers onto its
model executor. The operators' registered names come from hflow's own
prototypes (include/op_proto/all_ops.h), so a graph written here is what a
GE program building the same graph would save; every attribute a graph
sets is checked against them too. Each case's expected outputs come from
PyTorch eager computing GE's meaning of each operator (NHWC layouts, GE's
pads order top, bottom, left, right, TensorFlow's SAME padding, averages
over real pixels only where GE's are exclusive). Together the cases use
every operator all_ops.h declares (write() checks). Called by
make_onnx_models.py, which owns the manifest.
"""
import json
import os
import re

import numpy as np
import torch
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
F32 = np.float32
DTYPES = {np.dtype(np.float32): "DT_FLOAT", np.dtype(np.int32): "DT_INT32",
          np.dtype(np.int64): "DT_INT64", np.dtype(np.bool_): "DT_BOOL"}


def load_protos():
    """GE op type -> {"in", "dyn_in", "out", "dyn_out", "attrs"} from all_ops.h."""
    text = open(os.path.join(REPO, "include", "op_proto", "all_ops.h")).read()
    protos = {}
    for m in re.finditer(r"^HFLOW_GE_(UNARY|BINARY)_OP\((\w+)\);", text, re.M):
        ins = ["x"] if m.group(1) == "UNARY" else ["x1", "x2"]
        protos[m.group(2)] = {"in": ins, "dyn_in": [], "out": ["y"], "dyn_out": [],
                              "attrs": set()}
    # Not the templates (UnaryOp, BinaryOp), which follow "template <...>".
    for m in re.finditer(r"(?<!>\n)^class (\w+) : public Operator \{\n(.*?)^\};", text,
                         re.M | re.S):
        p = {"in": [], "dyn_in": [], "out": [], "dyn_out": [], "attrs": set()}
        for kind, name in re.findall(r"HFLOW_GE_(\w+)\((\w+)", m.group(2)):
            key = {"INPUT": "in", "DYNAMIC_INPUT": "dyn_in", "OUTPUT": "out",
                   "DYNAMIC_OUTPUT": "dyn_out"}.get(kind)
            if key:
                p[key].append(name)
            elif "ATTR" in kind:
                p["attrs"].add(name)
        protos[m.group(1)] = p
    return protos


def tensor_json(array):
    array = np.asarray(array)
    return {"dtype": DTYPES[array.dtype], "dims": list(array.shape),
            "values": array.reshape(-1).tolist()}


def attr_json(v):
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, float):
        return {"float": v}
    if isinstance(v, str):
        return {"dtype": v} if v.startswith("DT_") else {"string": v}
    if isinstance(v, list) and all(isinstance(e, int) for e in v):
        return {"ints": v}
    if isinstance(v, list):
        return {"floats": v}
    raise TypeError(v)


class Graph:
    """A GE graph under construction, ops registered as all_ops.h does."""

    def __init__(self, name, protos):
        self.name, self.protos = name, protos
        self.ops, self.inputs, self.outputs, self.types = [], [], [], set()

    def _op(self, name, type_, input_names, output_names, links=(), attrs=None):
        assert all(o["name"] != name for o in self.ops), "%s: two ops %s" % (self.name, name)
        op = {"name": name, "type": type_, "input_names": input_names,
              "output_names": output_names,
              "attrs": {k: attr_json(v) for k, v in (attrs or {}).items()}}
        op["inputs"] = [{"index": input_names.index(k), "op": s[0], "output": s[1]}
                        for k, s in links]
        self.ops.append(op)
        return op

    def data(self, name, array):
        array = np.asarray(array)
        op = self._op(name, "Data", ["x"], ["y"], attrs={"index": len(self.inputs)})
        op["descs"] = {"y": {"dtype": DTYPES[array.dtype], "dims": list(array.shape),
                             "format": "ND"}}
        self.inputs.append(name)
        return name

    def const(self, name, array):
        op = self._op(name, "Const", [], ["y"])
        op["attrs"]["value"] = {"tensor": tensor_json(array)}
        return name

    def op(self, type_, name, inputs, outputs=1, **attrs):
        """`inputs`: GE input name -> source op (or (op, output index)), a
        list of sources for a dynamic input. `outputs`: the count of a
        dynamic output. Returns the op's name, or its output names."""
        p = self.protos[type_]
        bad = [k for k in attrs if k not in p["attrs"]]
        assert not bad, "%s: %s has no attribute %s" % (self.name, type_, bad)
        # Inputs registered at construction, then dynamic entries appended
        # (create_dynamic_input_<name>), as ge::Operator does.
        names, links = list(p["in"]), []
        for k, src in inputs.items():
            if k in p["dyn_in"]:
                for i, s in enumerate(src):
                    names.append(k + str(i))
                    links.append((k + str(i), s))
            else:
                assert k in p["in"], "%s: %s has no input %s" % (self.name, type_, k)
                links.append((k, src))
        links = [(k, (s, 0) if isinstance(s, str) else s) for k, s in links]
        outs = list(p["out"]) + ["%s%d" % (d, i) for d in p["dyn_out"]
                                 for i in range(outputs)]
        self._op(name, type_, names, outs, links, attrs)
        self.types.add(type_)
        if p["dyn_out"] or len(outs) > 1:
            return [(name, i) for i in range(len(outs))]
        return name

    def output(self, *srcs):
        for s in srcs:
            s = (s, 0) if isinstance(s, str) else s
            self.outputs.append({"op": s[0], "index": s[1]})

    def json(self):
        return {"format": "hflow-ge-graph", "version": 1, "name": self.name,
                "inputs": self.inputs, "outputs": self.outputs, "ops": self.ops}


def t(a):
    return torch.from_numpy(np.asarray(a))


def rnd(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(F32)


def same_pad(size, k, s):
    """TensorFlow's SAME padding (begin, end) of one dim: the odd pixel at the end."""
    out = (size + s - 1) // s
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def exclusive_avg(h, pads, k, s):
    """Average over the real pixels of each window; pads (left, right, top, bottom)."""
    return (F.avg_pool2d(F.pad(h, pads), k, s) /
            F.avg_pool2d(F.pad(torch.ones_like(h), pads), k, s))


def nchw(a):
    return a.permute(0, 3, 1, 2)


def nhwc(a):
    return a.permute(0, 2, 3, 1)


def cnn(g, rng):
    """An NHWC network (TensorFlow's layout) and an NCHW one (ONNX's)."""
    x = rnd(rng, 1, 8, 8, 3)
    x2 = rnd(rng, 1, 3, 9, 9)
    w1, b1 = rnd(rng, 3, 3, 3, 4, scale=0.3), rnd(rng, 4)
    bn = [rng.uniform(0.5, 1.5, 4).astype(F32), rnd(rng, 4), rnd(rng, 4, scale=0.1),
          rng.uniform(0.5, 1.5, 4).astype(F32)]
    dw = rnd(rng, 3, 3, 4, 2, scale=0.3)
    w3, b3 = rnd(rng, 32, 5, scale=0.3), rnd(rng, 5)
    w4, b4 = rnd(rng, 4, 3, 3, 3, scale=0.3), rnd(rng, 4)
    g.data("x", x), g.data("x2", x2)
    for name, v in (("w1", w1), ("b1", b1), ("dw", dw), ("w3", w3), ("b3", b3),
                    ("w4", w4), ("b4", b4), ("shape", np.array([1, -1], np.int32))):
        g.const(name, v)
    bn_in = {"scale": "bn_scale", "offset": "bn_offset", "mean": "bn_mean",
             "variance": "bn_variance"}
    for v, name in zip(bn, bn_in.values()):
        g.const(name, v)
    g.op("Conv2D", "conv1", {"x": "x", "filter": "w1"}, strides=[1, 1, 1, 1],
         pads=[1, 1, 1, 1])
    g.op("BiasAdd", "bias1", {"x": "conv1", "bias": "b1"})
    g.op("BatchNorm", "bn", dict(bn_in, x="bias1"), epsilon=1e-3, is_training=False)
    g.op("Relu", "relu1", {"x": ("bn", 0)})
    g.op("DepthwiseConv2D", "dwconv", {"x": "relu1", "filter": "dw"},
         strides=[1, 2, 2, 1], pads=[0, 1, 0, 1])
    g.op("Relu6", "relu6", {"x": "dwconv"})
    g.op("MaxPool", "pool", {"x": "relu6"}, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
         padding="VALID")
    g.op("AvgPool", "avg", {"x": "pool"}, ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1],
         padding="SAME")
    g.op("Reshape", "flat", {"x": "avg", "shape": "shape"})
    g.op("MatMul", "fc", {"x1": "flat", "x2": "w3", "bias": "b3"})
    g.op("SoftmaxV2", "probs", {"x": "fc"})
    g.op("Conv2D", "conv2", {"x": "x2", "filter": "w4", "bias": "b4"}, strides=[1, 1, 1, 1],
         pads=[1, 1, 0, 2], dilations=[1, 1, 2, 1], data_format="NCHW")
    g.op("BatchNorm", "bn2", dict(bn_in, x="conv2"), data_format="NCHW", is_training=False)
    g.op("MaxPoolV3", "pool2", {"x": ("bn2", 0)}, ksize=[1, 1, 3, 3], strides=[1, 1, 2, 2],
         pads=[1, 1, 1, 1], ceil_mode=True)
    g.op("AvgPoolV2", "avg2", {"x": "pool2"}, ksize=[1, 1, 2, 2], strides=[1, 1, 1, 1],
         pads=[0, 1, 0, 1])
    g.output("probs", "dwconv", "avg2")

    def batch_norm(h, eps):
        return F.batch_norm(h, t(bn[2]), t(bn[3]), t(bn[0]), t(bn[1]), False, 0.0, eps)

    h = F.conv2d(F.pad(nchw(t(x)), (1, 1, 1, 1)), t(w1).permute(3, 2, 0, 1))
    h = F.relu(batch_norm(h + t(b1)[:, None, None], 1e-3))
    dwc = F.conv2d(F.pad(h, (0, 1, 0, 1)), t(dw).permute(2, 3, 0, 1).reshape(8, 1, 3, 3),
                   stride=2, groups=4)
    h = F.max_pool2d(torch.clamp(dwc, 0, 6), 2, 2)
    h = exclusive_avg(h, (1, 1, 1, 1), 3, 1)
    z = nhwc(h).reshape(1, -1) @ t(w3) + t(b3)
    h2 = F.conv2d(F.pad(t(x2), (0, 2, 1, 1)), t(w4), t(b4), dilation=(2, 1))
    h2 = F.max_pool2d(batch_norm(h2, 1e-4), 3, 2, padding=1, ceil_mode=True)
    h2 = exclusive_avg(h2, (0, 1, 0, 1), 2, 1)
    return [x, x2], [F.softmax(z, dim=-1), nhwc(dwc), h2]


def nn(g, rng):
    """Matrix products, normalization, softmax and the other pools."""
    a, b, m = rnd(rng, 2, 3, 4), rnd(rng, 2, 5, 4), rnd(rng, 2, 3, 6, 6)
    w5, bias4 = rnd(rng, 5, 4), rnd(rng, 4)
    gamma, beta = rng.uniform(0.5, 1.5, 4).astype(F32), rnd(rng, 4)
    w54, b5, w63 = rnd(rng, 5, 4), rnd(rng, 5), rnd(rng, 6, 3)
    c3 = rnd(rng, 3)
    g.data("a", a), g.data("b", b), g.data("m", m)
    for name, v in (("w5", w5), ("bias4", bias4), ("gamma", gamma), ("beta", beta),
                    ("w54", w54), ("b5", b5), ("w63", w63), ("c3", c3),
                    ("shape64", np.array([6, 4], np.int64))):
        g.const(name, v)
    g.op("BatchMatMul", "bmm", {"x1": "a", "x2": "b"}, adj_x2=True)
    g.op("BatchMatMulV2", "bmm2", {"x1": "bmm", "x2": "w5", "bias": "bias4"})
    g.op("LayerNorm", "ln", {"x": "bmm2", "gamma": "gamma", "beta": "beta"},
         begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-5)
    g.op("LogSoftmaxV2", "logsm", {"logits": "a"}, axes=[1])
    g.op("Reshape", "a64", {"x": "a", "shape": "shape64"})
    g.op("MatMulV2", "mm2", {"x1": "a64", "x2": "w54", "bias": "b5"}, transpose_x2=True)
    g.op("MatMul", "mm", {"x1": "a64", "x2": "w63"}, transpose_x1=True)
    g.op("BiasAdd", "mb", {"x": "m", "bias": "c3"}, data_format="NCHW")
    g.op("MaxPool", "mp", {"x": "mb"}, ksize=[1, 1, 3, 3], strides=[1, 1, 2, 2],
         padding="SAME", data_format="NCHW")
    g.op("AvgPoolV2", "ap_same", {"x": "m"}, ksize=[1, 1, 3, 3], strides=[1, 1, 2, 2],
         padding_mode="SAME")
    g.op("AvgPoolV2", "ap_incl", {"x": "m"}, ksize=[1, 1, 3, 3], strides=[1, 1, 1, 1],
         pads=[1, 1, 1, 1], exclusive=False)
    g.op("MaxPoolV3", "mp_valid", {"x": "m"}, ksize=[1, 1, 2, 2], strides=[1, 1, 2, 2],
         padding_mode="VALID")
    g.op("MaxPoolV3", "mp_global", {"x": "m"}, ksize=[1, 1, 1, 1], strides=[1, 1, 1, 1],
         global_pooling=True)
    g.op("GlobalAveragePool", "gap", {"x": "m"})
    g.op("AdaptiveAvgPool2d", "aap", {"x": "mb"}, output_size=[1, 1])
    g.output("ln", "logsm", "mm2", "mm", "mp", "ap_same", "ap_incl", "mp_valid",
             "mp_global", "gap", "aap")

    ta, tm = t(a), t(m)
    bmm2 = ta @ t(b).transpose(1, 2) @ t(w5) + t(bias4)
    a64 = ta.reshape(6, 4)
    mb = tm + t(c3)[:, None, None]
    pad = same_pad(6, 3, 2)
    mp = F.max_pool2d(F.pad(mb, pad + pad, value=-float("inf")), 3, 2)
    return [a, b, m], [
        F.layer_norm(bmm2, (4,), t(gamma), t(beta), 1e-5), F.log_softmax(ta, dim=1),
        a64 @ t(w54).T + t(b5), a64.T @ t(w63), mp, exclusive_avg(tm, pad + pad, 3, 2),
        F.avg_pool2d(tm, 3, 1, padding=1, count_include_pad=True), F.max_pool2d(tm, 2, 2),
        tm.amax(dim=(2, 3), keepdim=True), tm.mean(dim=(2, 3), keepdim=True),
        mb.mean(dim=(2, 3), keepdim=True)]


def elementwise(g, rng):
    """Unary and binary maths, comparisons, logic, Select and Cast."""
    a = rnd(rng, 2, 3, 4)
    b = rng.uniform(0.5, 2.0, (2, 3, 4)).astype(F32)
    g.data("a", a), g.data("b", b)
    g.const("lo", np.array(-0.5, F32)), g.const("hi", np.array(0.5, F32))
    g.const("four", np.array(4.0, F32))
    ta, tb = t(a), t(b)
    unary_a = {  # op: (attrs, PyTorch)
        "Relu": ({}, F.relu(ta)), "Sigmoid": ({}, torch.sigmoid(ta)),
        "Tanh": ({}, torch.tanh(ta)), "Abs": ({}, ta.abs()), "Neg": ({}, -ta),
        "Erf": ({}, torch.erf(ta)), "Floor": ({}, ta.floor()), "Ceil": ({}, ta.ceil()),
        "Round": ({}, ta.round()), "Rint": ({}, ta.round()), "Sign": ({}, ta.sign()),
        "Sin": ({}, ta.sin()), "Cos": ({}, ta.cos()), "Softplus": ({}, F.softplus(ta)),
        "Softsign": ({}, F.softsign(ta)), "Elu": ({"alpha": 0.5}, F.elu(ta, 0.5)),
        "LeakyRelu": ({"negative_slope": 0.2}, F.leaky_relu(ta, 0.2)),
        "Gelu": ({}, F.gelu(ta)), "Swish": ({"scale": 1.5}, ta * torch.sigmoid(1.5 * ta)),
        "HardSwish": ({}, F.hardswish(ta)), "Identity": ({}, ta),
        "Square": ({}, ta * ta), "Exp": ({}, ta.exp()),
    }
    unary_b = {
        "Sqrt": ({}, tb.sqrt()), "Rsqrt": ({}, tb.rsqrt()), "Reciprocal": ({}, 1 / tb),
        "Log": ({}, tb.log()),
    }
    outs, expected = [], []
    for src, table in (("a", unary_a), ("b", unary_b)):
        for op, (attrs, want) in table.items():
            outs.append(g.op(op, op.lower(), {"x": src}, **attrs))
            expected.append(want)
    # HardSigmoid names its input and output input_x, output_y; GE's
    # default alpha is 0.16666666.
    outs.append(g.op("HardSigmoid", "hsig", {"input_x": "a"}))
    expected.append(torch.clamp(ta * 0.16666666 + 0.5, 0, 1))
    outs.append(g.op("Exp", "exp2", {"x": "a"}, base=2.0, scale=0.5, shift=0.1))
    expected.append(torch.pow(2.0, 0.5 * ta + 0.1))
    outs.append(g.op("Log", "log10", {"x": "b"}, base=10.0, scale=2.0, shift=1.0))
    expected.append(torch.log10(2.0 * tb + 1.0))
    outs.append(g.op("Relu6", "relu6", {"x": g.op("Mul", "a4", {"x1": "a", "x2": "four"})}))
    expected.append(torch.clamp(4 * ta, 0, 6))
    binary = {
        "Add": ta + tb, "AddV2": ta + tb, "Sub": ta - tb, "Mul": ta * tb, "Div": ta / tb,
        "RealDiv": ta / tb, "Maximum": torch.maximum(ta, tb),
        "Minimum": torch.minimum(ta, tb), "SquaredDifference": (ta - tb) ** 2,
        "Mod": torch.fmod(ta, tb), "FloorMod": torch.remainder(ta, tb),
        "Equal": ta.round() == ta.floor(), "Less": ta < tb, "Greater": ta > tb,
        "LessEqual": ta <= tb, "GreaterEqual": ta >= tb, "NotEqual": ta != tb,
    }
    for op, want in binary.items():
        x1, x2 = ("round", "floor") if op == "Equal" else ("a", "b")
        outs.append(g.op(op, op.lower() + "_ab", {"x1": x1, "x2": x2}))
        expected.append(want)
    outs.append(g.op("Pow", "pow", {"x1": "b", "x2": "a"}))
    expected.append(tb ** ta)
    lt, gt, ne = "less_ab", "greater_ab", "notequal_ab"
    outs.append(g.op("LogicalAnd", "and", {"x1": lt, "x2": ne}))
    expected.append((ta < tb) & (ta != tb))
    outs.append(g.op("LogicalOr", "or", {"x1": lt, "x2": gt}))
    expected.append((ta < tb) | (ta > tb))
    outs.append(g.op("LogicalNot", "not", {"x": lt}))
    expected.append(~(ta < tb))
    outs.append(g.op("Select", "select", {"condition": lt, "x1": "a", "x2": "b"}))
    expected.append(torch.where(ta < tb, ta, tb))
    outs.append(g.op("SelectV2", "select2", {"condition": lt, "then": "b", "else": "a"}))
    expected.append(torch.where(ta < tb, tb, ta))
    outs.append(g.op("IsNan", "isnan", {"x": g.op("Log", "log_a", {"x": "a"})}))
    expected.append(torch.isnan(ta.log()))
    outs.append(g.op("Cast", "to_int", {"x": "a4"}, dst_type=3))  # DT_INT32
    expected.append((4 * ta).to(torch.int32))
    outs.append(g.op("Cast", "to_float", {"x": lt}, dst_type=0))  # DT_FLOAT
    expected.append((ta < tb).float())
    outs.append(g.op("AddN", "addn", {"x": ["a", "b", "a"]}, N=3))
    expected.append(ta + tb + ta)
    outs.append(g.op("ClipByValue", "clip",
                     {"x": "a", "clip_value_min": "lo", "clip_value_max": "hi"}))
    expected.append(torch.clamp(ta, -0.5, 0.5))
    g.output(*outs)
    return [a, b], expected


def shapes(g, rng):
    """Layout, shape, slicing, reduction and index operators."""
    x = rnd(rng, 2, 3, 4)
    off = np.array([0, 1, 0], np.int32)
    paddings = np.array([[0, 1], [1, 0], [0, 0]], np.int32)
    g.data("x", x), g.data("off", off), g.data("paddings", paddings)
    i32 = lambda name, v: g.const(name, np.array(v, np.int32))  # noqa: E731
    for name, v in (("perm", [2, 0, 1]), ("minus1", -1), ("zero", 0), ("one", 1),
                    ("two", 2), ("axes02", [0, 2]), ("last", [-1]), ("ax1", [1]),
                    ("idx", [2, 0]), ("idx0", [1, 0]), ("offsets", [0, 1, 1]),
                    ("size", [2, -1, 2]), ("size2", [-1, 2, 3]), ("mult", [1, 2, 1]),
                    ("pads", [[0, 0], [1, 0], [0, 2]]), ("pads_nc", [[0, 1, 1], [0, 1, 2]]),
                    ("sizes", [1, 3]), ("bshape", [2, 3, 4]), ("dims", [2, 3]),
                    ("begin", [0, 0, 3]), ("end", [2, 3, 0]), ("strides", [1, 2, -1])):
        i32(name, v)
    col = rnd(rng, 3, 1)
    g.const("col", col), i32("bshape2", [3, 5])
    for name, v in (("cv", 1.5), ("fillv", 2.5), ("start", 1.0), ("limit", 7.0),
                    ("delta", 1.5)):
        g.const(name, np.array(v, F32))
    tx = t(x)
    cases = [  # (type, name, inputs, attrs, PyTorch)
        ("TransposeD", "trd", {"x": "x"}, {"perm": [1, 2, 0]}, tx.permute(1, 2, 0)),
        ("TransposeD", "trd_back", {"x": "trd"}, {"perm": [2, 0, 1]}, tx),
        ("Transpose", "tr", {"x": "x", "perm": "perm"}, {}, tx.permute(2, 0, 1)),
        ("ConcatV2", "cat", {"x": ["x", "trd_back"], "concat_dim": "minus1"}, {"N": 2},
         torch.cat([tx, tx], -1)),
        ("ConcatD", "catd", {"x": ["x", "x"]}, {"concat_dim": 0, "N": 2},
         torch.cat([tx, tx], 0)),
        ("Concat", "cat1", {"concat_dim": "one", "x": ["x", "x", "x"]}, {"N": 3},
         torch.cat([tx] * 3, 1)),
        ("ConcatV2D", "catv2d", {"x": ["x", "x"]}, {"concat_dim": 2}, torch.cat([tx] * 2, 2)),
        ("Pack", "pack", {"x": ["x", "x"]}, {"axis": 1, "N": 2}, torch.stack([tx, tx], 1)),
        ("ExpandDims", "ed", {"x": "x", "axis": "zero"}, {}, tx[None]),
        ("Squeeze", "sq", {"x": "ed"}, {"axis": [0]}, tx),
        ("Unsqueeze", "us", {"x": "x"}, {"axes": [1]}, tx[:, None]),
        ("SqueezeV2", "sq2", {"x": "us"}, {"axis": [1]}, tx),
        ("UnsqueezeV2", "us2", {"x": "x"}, {"axis": [3]}, tx[..., None]),
        ("SqueezeV3", "sq3", {"x": "us2", "axes": "last"}, {}, tx),
        ("UnsqueezeV3", "us3", {"x": "x", "axes": "ax1"}, {}, tx[:, None]),
        ("ReduceMeanD", "rmeand", {"x": "x"}, {"axes": [1], "keep_dims": True},
         tx.mean(1, keepdim=True)),
        ("ReduceMean", "rmean", {"x": "x", "axes": "axes02"}, {}, tx.mean((0, 2))),
        ("ReduceSum", "rsum", {"x": "x", "axes": "axes02"}, {"keep_dims": True},
         tx.sum((0, 2), keepdim=True)),
        ("ReduceSumD", "rsumd", {"x": "x"}, {"axes": [-1]}, tx.sum(-1)),
        ("ReduceMax", "rmax", {"x": "x", "axes": "last"}, {}, tx.amax(-1)),
        ("ReduceMaxD", "rmaxd", {"x": "x"}, {"axes": [0, 1]}, tx.amax((0, 1))),
        ("ReduceMin", "rmin", {"x": "x", "axes": "ax1"}, {}, tx.amin(1)),
        ("ReduceMinD", "rmind", {"x": "x"}, {"axes": [2]}, tx.amin(2)),
        ("ReduceProd", "rprod", {"x": "x", "axes": "ax1"}, {}, tx.prod(1)),
        ("ReduceProdD", "rprodd", {"x": "x"}, {"axes": [0], "keep_dims": True},
         tx.prod(0, keepdim=True)),
        ("ArgMaxV2", "amax", {"x": "x", "dimension": "one"}, {}, tx.argmax(1)),
        ("ArgMin", "amin", {"x": "x", "dimension": "minus1"}, {"dtype": "DT_INT32"},
         tx.argmin(-1).int()),
        ("ArgMaxD", "amaxd", {"x": "x"}, {"dimension": 2, "dtype": "DT_INT32"},
         tx.argmax(2).int()),
        ("ArgMinD", "amind", {"x": "x"}, {"dimension": 0}, tx.argmin(0)),
        ("GatherV2", "gather2", {"x": "x", "indices": "idx", "axis": "one"}, {},
         tx[:, [2, 0]]),
        ("GatherV2D", "gather2d", {"x": "x", "indices": "idx"}, {"axis": 2}, tx[:, :, [2, 0]]),
        ("Gather", "gather", {"x": "x", "indices": "idx0"}, {}, tx[[1, 0]]),
        ("Slice", "slice", {"x": "x", "offsets": "offsets", "size": "size"}, {},
         tx[0:2, 1:, 1:3]),
        ("Slice", "slice_rt", {"x": "x", "offsets": "off", "size": "size2"}, {},
         tx[0:, 1:3, 0:3]),
        ("SliceD", "sliced", {"x": "x"}, {"offsets": [1, 0, 2], "size": [1, 2, -1]},
         tx[1:2, 0:2, 2:]),
        ("StridedSlice", "ss", {"x": "x", "begin": "begin", "end": "end",
                                "strides": "strides"}, {"end_mask": 4},
         tx[0:2, 0:3:2].flip(2)),
        ("StridedSliceD", "ssd", {"x": "x"}, {"begin": [1, 0, 0], "end": [2, 3, 4],
                                             "strides": [1, 1, 2], "shrink_axis_mask": 1,
                                             "begin_mask": 2}, tx[1, :, 0:4:2]),
        ("Tile", "tile", {"x": "x", "multiples": "mult"}, {}, tx.repeat(1, 2, 1)),
        ("TileD", "tiled", {"x": "x"}, {"multiples": [2, 1, 1]}, tx.repeat(2, 1, 1)),
        ("Pad", "pad", {"x": "x", "paddings": "pads"}, {}, F.pad(tx, (0, 2, 1, 0))),
        ("Pad", "pad_rt", {"x": "x", "paddings": "paddings"}, {},
         F.pad(tx, (0, 0, 1, 0, 0, 1))),
        ("PadV2", "pad2", {"x": "x", "paddings": "pads", "constant_values": "cv"}, {},
         F.pad(tx, (0, 2, 1, 0), value=1.5)),
        ("PadV3", "pad3", {"x": "x", "paddings": "pads_nc"},
         {"mode": "reflect", "paddings_contiguous": False},
         F.pad(tx, (1, 2, 1, 1), mode="reflect")),
        ("Shape", "shape", {"x": "x"}, {}, torch.tensor([2, 3, 4], dtype=torch.int32)),
        ("Size", "size_of", {"x": "x"}, {"dtype": 9}, torch.tensor(24)),
        ("Fill", "fill", {"dims": "dims", "value": "fillv"}, {}, torch.full((2, 3), 2.5)),
        ("Range", "range", {"start": "start", "limit": "limit", "delta": "delta"}, {},
         torch.arange(1.0, 7.0, 1.5)),
        ("Expand", "expand", {"x": "col", "shape": "bshape"}, {}, t(col).expand(2, 3, 4)),
        ("BroadcastTo", "bcast", {"x": "col", "shape": "bshape2"}, {}, t(col).expand(3, 5)),
        ("BroadcastToD", "bcastd", {"x": "col"}, {"shape": [2, 3, 4]},
         t(col).expand(2, 3, 4)),
        ("Flatten", "flatten", {"x": "x"}, {}, tx.reshape(2, 12)),
        ("FlattenV2", "flatten2", {"x": "x"}, {"axis": 1}, tx.reshape(2, 12)),
        ("Identity", "id", {"x": "x"}, {}, tx),
    ]
    outs, expected = [], []
    for type_, name, inputs, attrs, want in cases:
        outs.append(g.op(type_, name, inputs, **attrs))
        expected.append(want)
    # Split family: dynamic outputs y0..
    for type_, name, inputs, attrs, parts in (
            ("Split", "split", {"split_dim": "two", "x": "x"}, {"num_split": 2},
             torch.split(tx, 2, 2)),
            ("SplitD", "splitd", {"x": "x"}, {"split_dim": 1, "num_split": 3},
             torch.split(tx, 1, 1)),
            ("SplitV", "splitv", {"x": "x", "size_splits": "sizes", "split_dim": "two"},
             {"num_split": 2}, torch.split(tx, [1, 3], 2)),
            ("SplitVD", "splitvd", {"x": "x"}, {"size_splits": [1, 1], "split_dim": 0,
                                                "num_split": 2}, torch.split(tx, 1, 0))):
        outs += g.op(type_, name, inputs, outputs=len(parts), **attrs)
        expected += list(parts)
    outs += g.op("Unpack", "unpack", {"x": "x"}, outputs=3, num=3, axis=1)
    expected += list(torch.unbind(tx, 1))
    g.output(*outs)
    return [x, off, paddings], expected


def write(out):
    """Writes every case; returns their manifest entries."""
    protos = load_protos()
    rng = np.random.default_rng(0)
    entries, used = [], set()
    for name, make in (("ge_cnn", cnn), ("ge_nn", nn), ("ge_elementwise", elementwise),
                       ("ge_shapes", shapes)):
        g = Graph(name, protos)
        with torch.no_grad():
            inputs, expected = make(g, rng)
        assert len(expected) == len(g.outputs), name
        used |= g.types
        path = os.path.join(out, name + ".json")
        with open(path, "w") as f:
            json.dump(g.json(), f)
        entry = {"name": name, "file": path, "framework": "ge_graph", "opset": 0,
                 "inputs": [], "outputs": []}
        for kind, arrays in (("inputs", inputs), ("outputs", expected)):
            for i, v in enumerate(arrays):
                f = os.path.join(out, "%s.%s%d.npy" % (name, kind[0], i))
                v = v.contiguous().numpy() if isinstance(v, torch.Tensor) else v
                np.save(f, v)
                entry[kind].append(f)
        entries.append(entry)
    uncovered = sorted(set(protos) - used - {"Data", "Const"})
    assert not uncovered, "GE operators no case uses: %s" % uncovered
    # An operator hflow does not lower (for the error tests).
    g = Graph("ge_unsupported", dict(protos, Lgamma=protos["Relu"]))
    g.data("x", np.zeros(3, F32))
    g.op("Lgamma", "lgamma", {"x": "x"})
    g.output("lgamma")
    with open(os.path.join(out, "ge_unsupported.json"), "w") as f:
        json.dump(g.json(), f)
    return entries
