#!/usr/bin/env python3
"""Writes the ONNX models the model-node tests run, with their inputs and
PyTorch eager's outputs, into OUTDIR (made at test time: random weights,
fixed seeds, nothing downloaded). Needs Debian's python3-torch,
python3-torchvision and python3-onnx.

OUTDIR/manifest.json lists each case:
  {"name", "file", "opset", "inputs": [npy...], "outputs": [npy...]}

Usage: make_onnx_models.py OUTDIR [CASE...]   (default: every case; the
name "extras" asks for the small onnx.helper models alone, "tf" for the
TensorFlow GraphDefs of make_tf_models.py, "ge" for the GE graph files of
make_ge_graphs.py)
"""
import io
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

warnings.filterwarnings("ignore")


class Elementwise(torch.nn.Module):
    def forward(self, x, y):
        a = x * y + x / (y.abs() + 1.0) - torch.sigmoid(x) + torch.tanh(y)
        b = torch.exp(torch.clamp(x, -2.0, 2.0)) + F.relu6(y * 4) - F.leaky_relu(x, 0.2)
        c = F.elu(y) + F.hardsigmoid(x) + F.hardswish(y) - torch.neg(x.abs())
        d = torch.sqrt(x.abs() + 0.5) + torch.pow(y.abs(), 2.0) + torch.erf(x)
        e = torch.floor(x * 3) + torch.ceil(y * 3) + torch.maximum(x, y) - torch.minimum(x, y)
        f = torch.where(x > y, x, y) + (x >= y).float() + (x < 0.1).float() + (x == x).float()
        g = torch.log(x.abs() + 1.0) + torch.reciprocal(y.abs() + 1.0) + torch.sign(x)
        return a + b + c + d + e + f + g, torch.sin(x) * torch.cos(y)


class Reductions(torch.nn.Module):
    def forward(self, x):
        return (x.mean(dim=(1, 2), keepdim=True), x.sum(dim=-1), x.amax(dim=1),
                x.amin(dim=0, keepdim=True), x.abs().add(0.5).prod(dim=2),
                torch.argmax(x, dim=1), F.softmax(x, dim=-1),
                F.log_softmax(x, dim=1))


class Shapes(torch.nn.Module):
    def forward(self, x, y):
        a = x.reshape(2, -1).transpose(0, 1).flatten()
        b = torch.cat([x, y], dim=1)
        c1, c2 = torch.split(b, [2, 4], dim=1)
        d = x[:, 1:3, ::2] + 1
        e = x.unsqueeze(0).squeeze(0).permute(2, 0, 1)
        f = y[:, :1].expand(2, 4, 5)
        g = F.pad(x, (1, 2, 0, 1), value=0.5)
        h = F.pad(x, (2, 1), mode="reflect")
        i = x.repeat(1, 2, 1)
        j = torch.index_select(x, 2, torch.tensor([4, 0, 2]))
        k = x.reshape(x.shape[0], x.shape[1] * x.shape[2])
        return a, c1, c2, d, e, f, g, h, i, j, k


class Nn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1, dilation=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8)
        self.conv1d = torch.nn.Conv1d(4, 6, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.inorm = torch.nn.InstanceNorm2d(8, affine=True)
        self.fc = torch.nn.Linear(8, 5)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)
            self.inorm.weight.uniform_(0.5, 1.5)

    def forward(self, x, s):
        y = F.relu(self.conv(x))
        y = self.dw(y)
        y = torch.sigmoid(self.bn(y)) + self.inorm(y)
        p = F.max_pool2d(y, 3, stride=2, padding=1, ceil_mode=True)
        q = F.avg_pool2d(y, 2, stride=2, count_include_pad=False)
        r = F.avg_pool2d(y, 3, stride=1, padding=1, count_include_pad=True)
        g = F.adaptive_avg_pool2d(y, 1).flatten(1)
        z = self.fc(g)
        m = torch.matmul(s, s.transpose(-1, -2))
        return p, q, r, z, F.softmax(z, dim=1), m, self.conv1d(x.mean(dim=3))


class MoreOps(torch.nn.Module):
    """The operators the networks above do not use."""

    def __init__(self):
        super().__init__()
        self.slope = torch.nn.Parameter(torch.tensor([0.1, 0.2, 0.3, 0.4]))

    def forward(self, x, y):
        logic = torch.logical_xor(x > 0, y > 0) | (~(x < y) & (y <= x))
        n = torch.arange(x.shape[0]).to(torch.float32)
        return (torch.fmod(x * 5, y.abs() + 1), logic.to(torch.float32), torch.round(x * 3),
                torch.isnan(x.log()), F.prelu(x, self.slope),
                F.softplus(y), torch.argmin(x, dim=1), torch.norm(x, dim=1),
                F.adaptive_max_pool2d(x.reshape(1, 1, 3, 4), 1), n, torch.sum(x * x, dim=0))


class Integers(torch.nn.Module):
    def forward(self, a, b):
        return (a + b) * 3 - b, torch.maximum(a, b), (a > b).to(torch.int32), a.sum(dim=1)


def rand(*shape):
    return torch.randn(*shape)


def cases(only):
    torch.manual_seed(0)
    tv = torchvision.models
    yield "resnet18", tv.resnet18().eval(), (rand(1, 3, 224, 224),), 13
    yield "mobilenet_v2", tv.mobilenet_v2().eval(), (rand(1, 3, 96, 96),), 11
    enc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0), 2).eval()
    yield "transformer_opset17", enc, (rand(5, 2, 32),), 17
    yield "transformer_opset11", enc, (rand(5, 2, 32),), 11
    yield "elementwise", Elementwise(), (rand(3, 4, 5), rand(3, 4, 5)), 13
    yield "elementwise_opset17", Elementwise(), (rand(2, 6), rand(2, 6)), 17
    yield "reductions", Reductions(), (rand(3, 4, 5),), 13
    yield "reductions_opset11", Reductions(), (rand(3, 4, 5),), 11
    yield "shapes", Shapes(), (rand(2, 4, 5), rand(2, 2, 5)), 13
    yield "nn", Nn().eval(), (rand(2, 4, 12, 12), rand(2, 3, 6)), 13
    yield "more_ops", MoreOps(), (rand(3, 4), rand(3, 4)), 13
    yield "integers", Integers(), (torch.randint(-50, 50, (4, 6)),
                                   torch.randint(-50, 50, (4, 6))), 13
    yield "integers32", Integers(), (torch.randint(-50, 50, (4, 6), dtype=torch.int32),
                                     torch.randint(-50, 50, (4, 6), dtype=torch.int32)), 13


def extras(out):
    """Small models written with onnx.helper, for the semantics and error
    tests: each is named by its file."""
    import onnx
    from onnx import TensorProto, helper
    F32 = TensorProto.FLOAT

    def save(name, nodes, inputs, outputs, opset=13, inits=()):
        g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 7
        onnx.save(m, os.path.join(out, name + ".onnx"))

    vi = helper.make_tensor_value_info
    # GE's add.pb sample, as ONNX: float32 [3] + [3].
    save("add", [helper.make_node("Add", ["a", "b"], ["c"])],
         [vi("a", F32, [3]), vi("b", F32, [3])], [vi("c", F32, [3])])
    # Operators the executor does not run.
    save("unsupported", [helper.make_node("Det", ["a"], ["d"]),
                         helper.make_node("NonZero", ["a"], ["n"]),
                         helper.make_node("Det", ["a"], ["e"])],
         [vi("a", F32, [2, 2])],
         [vi("d", F32, []), vi("n", TensorProto.INT64, [2, None]),
          vi("e", F32, [])])
    relu = [helper.make_node("Relu", ["a"], ["r"])]
    io = ([vi("a", F32, [4])], [vi("r", F32, [4])])
    save("opset9", relu, *io, opset=9)
    save("opset18", relu, *io, opset=18)
    # Reshape of a dynamic input to [2, -1]: an odd length fails the kernel.
    # A trivial model: 64 B through Identity (the per-message cost).
    save("identity", [helper.make_node("Identity", ["a"], ["b"])],
         [vi("a", F32, [16])], [vi("b", F32, [16])])
    save("reshape_dyn", [helper.make_node("Reshape", ["a", "s"], ["r"])],
         [vi("a", F32, [None])], [vi("r", F32, [2, None])],
         inits=[helper.make_tensor("s", TensorProto.INT64, [2], [2, -1])])


def main():
    out = sys.argv[1]
    only = set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    manifest = []
    for name, module, inputs, opset in cases(only):
        if only and name not in only:
            continue
        with torch.no_grad():
            expected = module(*inputs)
        if isinstance(expected, torch.Tensor):
            expected = (expected,)
        path = os.path.join(out, name + ".onnx")
        names = ["x%d" % i for i in range(len(inputs))]
        torch.onnx.export(module, inputs, path, opset_version=opset,
                          input_names=names,
                          output_names=["y%d" % i for i in range(len(expected))])
        if name == "resnet18":
            # TorchScript of the same network: the benchmark's baseline.
            torch.jit.trace(module, inputs).save(os.path.join(out, name + ".pt"))
        entry = {"name": name, "file": path, "opset": opset,
                 "inputs": [], "outputs": []}
        for kind, tensors in (("inputs", inputs), ("outputs", expected)):
            for i, t in enumerate(tensors):
                f = os.path.join(out, "%s.%s%d.npy" % (name, kind[0], i))
                np.save(f, t.numpy())
                entry[kind].append(f)
        manifest.append(entry)
    if not only or "extras" in only:
        extras(out)
    if not only or "tf" in only:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import make_tf_models
        manifest += make_tf_models.write(out)
    if not only or "ge" in only:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import make_ge_graphs
        manifest += make_ge_graphs.write(out)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
