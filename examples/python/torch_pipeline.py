"""Torch tensors through a DataFlow graph: Python stages and an @df.npu_model.

    x ── standardize ── Mlp.forward ── classify ──┬── probabilities  (output 0)
    [n,4]                                         └── labels         (output 1)

    standardize: @df.pyflow function, torch tensor in and out
    Mlp:         @df.npu_model nn.Module, optimize_level=2: exported to
                 ONNX, run on the model executor
    classify:    @df.pyflow function, 2 outputs: softmax and argmax

`@df.npu_model` registers torch tensors as messages (GE's type 1023), so
`feed` takes torch tensors, every stage gets and returns them, and `fetch`
gives torch tensors back. `Mlp` is an nn.Module with seeded weights at
optimize_level=2: `Mlp.fnode(seed)` exports it once with torch.onnx.export
to ./Mlp_fnode_ws/export.onnx (in the current folder, where GE writes it
too) and the model executor runs it; the batch dim, -1 in input_descs, is
dynamic. (At optimize_level=1, the default, it would run eagerly with CPU
torch in a Python UDF.) The example feeds batches of 2 and 3 rows and
prints what each fetch gave, then whether it all matches the same steps
run eagerly in torch.
"""
import warnings

import torch
import torch.nn.functional as F

import dataflow as df

SEED = 7
FEATURES, HIDDEN, CLASSES = 4, 8, 3


def seeded_mlp(seed: int) -> torch.nn.Sequential:
    """Linear 4->8, relu, linear 8->3, weights drawn from a generator seeded with ``seed``."""
    net = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 2 - 1)
    return net.eval()


@df.pyflow
def standardize(x):
    """Each row to zero mean and unit variance."""
    return (x - x.mean(dim=1, keepdim=True)) / x.std(dim=1, keepdim=True)


@df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [-1, FEATURES])])
class Mlp(torch.nn.Module):
    """The seeded MLP as a node: exported to ONNX and run on the model executor."""

    def __init__(self, seed):
        super().__init__()
        self.net = seeded_mlp(seed)

    @df.method()
    def forward(self, x):
        return self.net(x)


@df.pyflow(num_returns=2)
def classify(logits):
    """Softmax probabilities and the most likely class of each row."""
    return F.softmax(logits, dim=1), logits.argmax(dim=1)


def eager(x: torch.Tensor) -> tuple:
    """The graph's steps in plain torch: (probabilities, labels)."""
    with torch.no_grad():
        logits = seeded_mlp(SEED)((x - x.mean(dim=1, keepdim=True)) / x.std(dim=1, keepdim=True))
    return F.softmax(logits, dim=1), logits.argmax(dim=1)


def main() -> None:
    df.init({"ge.exec.deviceId": "0"})
    x = df.FlowData(name="x")
    with warnings.catch_warnings():  # torch.onnx.export's tracer warnings
        warnings.simplefilter("ignore")
        mlp = Mlp.fnode(SEED)
    probabilities, labels = classify.fnode()(mlp.forward(standardize.fnode()(x)))
    graph = df.FlowGraph([probabilities, labels])
    g = torch.Generator().manual_seed(SEED + 1)
    matches = True
    for i, rows in enumerate((2, 3)):
        batch = torch.randn(rows, FEATURES, generator=g)
        assert graph.feed({x: batch}) == 0
        (probs, classes), ret = graph.fetch(timeout=30000)
        assert ret == 0, f"fetch returned {ret}"
        print(f"batch {i}: x {list(batch.shape)} -> probabilities {list(probs.shape)} {probs.dtype}, "
              f"labels {list(classes.shape)} {classes.dtype}")
        top = ", ".join(f"{p:.2f}" for p in probs.max(dim=1).values.tolist())
        print(f"batch {i}: labels {classes.tolist()}, max probabilities [{top}]")
        want_probs, want_labels = eager(batch)
        matches = (matches and isinstance(probs, torch.Tensor) and torch.equal(classes, want_labels)
                   and torch.allclose(probs, want_probs, rtol=1e-4, atol=1e-5))
    print("matches torch eager:", matches)
    df.finalize()


if __name__ == "__main__":
    main()
