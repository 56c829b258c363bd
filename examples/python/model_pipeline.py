"""A model in a DataFlow graph: an ONNX file as a node, then Python post-processing.

                    ┌──────────── logits [2,3]                 (output 0)
    images ── net ──┤
    [2,1,8,8]       └── top1 ── [(class, probability), ...]  (output 1)

    net:  GraphProcessPoint(ONNX): conv 3x3 -> relu -> maxpool 2 -> linear 64->3
    top1: @df.pyflow: softmax, then each row's most likely class

The model is a tiny torch network with fixed weights (seeded), exported
with torch.onnx.export into a temporary folder when the example runs
(nothing is downloaded). `net` runs the ONNX file on the model executor;
`top1` turns each batch's logits into (class, probability) pairs. The
example feeds three batches of two images and prints, per batch, the
logits' shape and the top-1 pairs, then whether the graph's logits match
the same network run eagerly in torch.
"""
import os
import tempfile
import warnings

import numpy as np
import torch

import dataflow as df

SEED = 1
BATCH, CLASSES = 2, 3


class TinyNet(torch.nn.Module):
    """conv 1->4 (3x3) -> relu -> maxpool 2 -> linear 64->3, weights drawn from a seeded generator."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 4 * 4, CLASSES)
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.rand(p.shape, generator=g) * 2 - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
        return self.fc(y.flatten(1))


def export(net: torch.nn.Module, folder: str) -> str:
    """``net`` as an ONNX file in ``folder`` (fixed input shape [BATCH, 1, 8, 8])."""
    path = os.path.join(folder, "tiny_net.onnx")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, torch.zeros(BATCH, 1, 8, 8), path, input_names=["images"],
                          output_names=["logits"], opset_version=13)
    return path


@df.pyflow
def top1(logits):
    """Each row's most likely class and its softmax probability."""
    x = logits.numpy()
    e = np.exp(x - x.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    return [(int(c), float(probs[i, c])) for i, c in enumerate(probs.argmax(axis=1))]


def main() -> None:
    net = TinyNet(SEED).eval()
    g = torch.Generator().manual_seed(SEED + 1)
    batches = [torch.rand(BATCH, 1, 8, 8, generator=g) for _ in range(3)]
    with tempfile.TemporaryDirectory() as folder:
        model_file = export(net, folder)
        df.init({"ge.exec.deviceId": "0"})
        images = df.FlowData(name="images")
        net_node = df.FlowNode(input_num=1, output_num=1, name="net")
        net_node.add_process_point(df.GraphProcessPoint(df.Framework.ONNX, model_file))
        logits = net_node(images)
        graph = df.FlowGraph([logits, top1.fnode()(logits)])
        matches = True
        for i, batch in enumerate(batches):
            assert graph.feed({images: df.Tensor(batch.numpy())}) == 0
            outputs, ret = graph.fetch(timeout=30000)
            assert ret == 0, f"fetch returned {ret}"
            got = outputs[0].numpy()
            picks = ", ".join(f"class {c} (p={p:.2f})" for c, p in outputs[1])
            print(f"batch {i}: logits {list(got.shape)}, top-1: {picks}")
            with torch.no_grad():
                want = net(batch).numpy()
            matches = matches and np.allclose(got, want, rtol=1e-4, atol=1e-5)
        print("matches torch eager:", matches)
        df.finalize()


if __name__ == "__main__":
    main()
