"""GE's torch plugin on hflow: torch tensors as GE's type-1023 messages (a 1024-byte runtime tensor
descriptor, then the bytes), received without a copy; ``@df.npu_model`` functions and classes at
optimize_level 1 run eagerly with CPU torch in Python UDFs, fed and fetched as torch tensors, on every
cluster; GE's option errors. torch comes from Debian (python3-torch) for whichever python3 runs this.

Thread-safety: single-threaded test code.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dataflow as df
from dataflow.plugin.torch import torch_plugin as tp
from dataflow.utils.msg_type_register import msg_type_register

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.int16, torch.uint8, torch.int32,
          torch.int64, torch.bool, torch.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(2, 3), (), (0, 4), (1, 2, 1, 3)], ids=str)
def test_a_tensor_round_trips_as_ges_message(dtype, shape):
    t = (torch.arange(int(np.prod(shape)), dtype=torch.float64).reshape(shape) * 1.5).to(dtype)
    data = tp._serialize_with_torch_tensor(t)
    assert len(data) == 1024 + t.numel() * t.element_size()
    # GE's RuntimeTensorDesc: dtype at 16, rank and dims from 24, the data size at 568.
    (code,) = struct.unpack_from("<q", data, 16)
    assert code == tp.torch_to_dflow_dtype(dtype).dtype
    assert struct.unpack_from("<q", data, 24)[0] == len(shape)
    assert list(struct.unpack_from(f"<{len(shape)}q", data, 32)) == list(shape)
    assert struct.unpack_from("<Q", data, 568)[0] == t.numel() * t.element_size()
    back = tp._deserialize_with_torch_tensor(data)
    assert back.dtype == dtype and list(back.shape) == list(shape)
    assert torch.equal(back, t)


def test_a_received_tensor_views_the_message():
    buf = tp._serialize_with_torch_tensor(torch.zeros(4))
    t = tp._deserialize_with_torch_tensor(buf)
    buf[1024:1028] = struct.pack("<f", 7.0)
    assert t[0].item() == 7.0  # the same memory, not a copy


def test_only_cpu_tensors_are_sent():
    with pytest.raises(TypeError, match="please to cpu"):
        tp._serialize_with_torch_tensor(torch.empty(2, device="meta"))


def test_a_truncated_message_is_refused():
    data = tp._serialize_with_torch_tensor(torch.ones(8))
    with pytest.raises(ValueError, match="descriptor"):
        tp._deserialize_with_torch_tensor(data[:100])
    with pytest.raises(ValueError, match="holds"):
        tp._deserialize_with_torch_tensor(data[:1024 + 4])


@df.npu_model
def scale(x):
    return x * 2 + 1


@df.npu_model(num_returns=2)
def split(x):
    return x[:, :2], F.relu(x[:, 2:])


@df.npu_model(optimize_level=1)
class Resize(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size

    @df.method()
    def forward(self, image):
        return F.interpolate(image, size=(self.size, self.size), mode="bilinear")


def test_npu_model_registers_torch_tensors():
    assert msg_type_register.get_msg_type(torch.Tensor) == tp.MSG_TYPE_TORCH_TENSOR_MSG == 1023


def test_npu_model_nodes_run_torch_and_exchange_torch_tensors(cluster):
    data = df.FlowData()
    s = scale.fnode()
    r = Resize.fnode(4)
    p = split.fnode()
    assert s._attrs["_npu_sched_model"] == 1 and r._attrs["_npu_sched_model"] == 1
    a, b = p(r.forward(s(data)))
    g = df.FlowGraph([a, b])
    image = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(7))
    assert g.feed({data: image}) == 0
    outputs, code = g.fetch(timeout=30000)
    assert code == 0
    resized = F.interpolate(image * 2 + 1, size=(4, 4), mode="bilinear")
    assert all(isinstance(o, torch.Tensor) for o in outputs)
    assert torch.equal(outputs[0], resized[:, :2]) and torch.equal(outputs[1], F.relu(resized[:, 2:]))


def test_ges_option_errors():
    with pytest.raises(TypeError, match="param:optimize_level is not support in @npu_model when applied to a"):
        df.npu_model(optimize_level=2)(lambda x: x)
    with pytest.raises(TypeError, match="param:bad is not support in @npu_model."):
        df.npu_model(bad=1)(type("C", (), {}))
    with pytest.raises(TypeError, match="either a function or a class"):
        df.npu_model(num_returns=1)(3)

    @df.npu_model(optimize_level="1")
    class Level(torch.nn.Module):
        @df.method()
        def forward(self, x):
            return x

    with pytest.raises(TypeError, match="optimize_level must be a number"):
        Level.fnode()

    @df.npu_model(optimize_level=3)
    class Three(torch.nn.Module):
        @df.method()
        def forward(self, x):
            return x

    with pytest.raises(TypeError, match="optimize_level:3 is not support"):
        Three.fnode()

    @df.npu_model(optimize_level=2)
    class NoDescs(torch.nn.Module):
        @df.method()
        def forward(self, x):
            return x

    with pytest.raises(TypeError, match="input_descs is None"):
        NoDescs.fnode()


@df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [-1, 3, 4, 4])])
class Normalize(torch.nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean, self.std = mean, std

    @df.method()
    def forward(self, x):
        return (x - self.mean) / self.std


def test_optimize_level_2_runs_the_exported_module_on_the_model_executor(cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the export lands in ./Normalize_fnode_ws, as GE's does
    data = df.FlowData()
    n = Normalize.fnode(0.5, 0.25)
    assert n._attrs["_npu_sched_model"] == 1
    assert (tmp_path / "Normalize_fnode_ws" / "export.onnx").is_file()
    g = df.FlowGraph([split.fnode()(n.forward(scale.fnode()(data)))[0]])
    for batch in (1, 3):  # the negative dim is dynamic
        x = torch.rand(batch, 3, 4, 4, generator=torch.Generator().manual_seed(batch))
        assert g.feed({data: x}) == 0
        outputs, code = g.fetch(timeout=30000)
        assert code == 0
        want = ((x * 2 + 1) - 0.5) / 0.25
        assert isinstance(outputs[0], torch.Tensor)
        torch.testing.assert_close(outputs[0], want[:, :2], rtol=0, atol=1e-5)


@df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [2, 3])])
class Branchy(torch.nn.Module):
    @df.method()
    def forward(self, x):
        if x.sum() > 0:  # a branch on the data: a trace keeps only the example input's side
            return x * 2
        return x - 1


@df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [2, 3])])
class Broken(torch.nn.Module):
    @df.method()
    def forward(self, x):
        return x.no_such_method()


@df.npu_model(optimize_level=2, input_descs=[df.TensorDesc(df.DT_FLOAT, [2, 3])])
class Steady(torch.nn.Module):
    @df.method()
    def forward(self, x):
        return torch.sigmoid(x) * x.shape[1]  # a static shape: no tracer warning, exported


@pytest.mark.parametrize("cls, reason", [
    (Branchy, "its trace depends on the example input"),
    (Broken, "AttributeError"),
])
def test_a_module_that_cannot_be_exported_fails_at_build_naming_the_node(cls, reason, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(df.DfException) as e:
        cls.fnode()
    assert e.value.error_code == 145000  # PARAM_INVALID
    assert f"@npu_model node {cls.__name__}_fnode" in e.value.message
    assert reason in e.value.message and "optimize_level=1" in e.value.message
    assert not (tmp_path / f"{cls.__name__}_fnode_ws" / "export.onnx").exists()  # no model left to load


def test_a_traceable_module_still_exports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Steady.fnode()
    assert (tmp_path / "Steady_fnode_ws" / "export.onnx").is_file()
