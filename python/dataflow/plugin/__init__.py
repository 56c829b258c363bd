"""Framework plugins of the dataflow package (GE's ``dataflow.plugin``): ``dataflow.plugin.torch``."""
