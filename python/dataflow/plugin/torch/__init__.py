"""GE's torch plugin on hflow: torch tensors as messages, and ``npu_model`` (see ``torch_plugin``)."""
