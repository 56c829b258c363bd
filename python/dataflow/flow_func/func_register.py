"""Which methods of a UDF class are proc functions, with their "i0,i1,o0" mapping strings.

``proc_wrapper("i0,o0")`` records (module, class, method) -> mapping here at class-definition time;
``FuncProcessPoint(py_func=Cls)`` reads it back.

Thread-safety: guarded by a lock.
"""
from __future__ import annotations

import threading
from typing import Any, Optional


class FlowFuncInfos:
    """The functions of one UDF class: name -> mapping string, plus pyflow extras."""

    def __init__(self) -> None:
        self._name_to_params: dict[str, str] = {}
        self._running_resources_info: list[dict] = []
        self._func_object: Any = None
        self._env_hook_func: Any = None
        self._visible_device_enable: Any = None

    def add_func_params(self, func_name: str, func_params: str) -> None:
        """Record a function and its mapping string."""
        self._name_to_params[func_name] = func_params

    def get_all_func_params(self) -> dict[str, str]:
        """Function name -> mapping string, in definition order."""
        return dict(self._name_to_params)

    def add_running_resources_info(self, kind: str, num: Any) -> None:
        """Record a resource request (accepted, not modelled by hflow)."""
        self._running_resources_info.append({"type": kind, "num": num})

    def get_running_resources_info(self) -> list[dict]:
        """The recorded resource requests."""
        return list(self._running_resources_info)

    def set_func_object(self, func_object: Any) -> None:
        """The object whose methods run."""
        self._func_object = func_object

    def get_func_object(self) -> Any:
        """The object whose methods run."""
        return self._func_object

    def set_env_hook_func(self, env_hook_func: Any) -> None:
        """Accepted, not used by hflow (UDFs run in this process)."""
        self._env_hook_func = env_hook_func

    def get_env_hook_func(self) -> Any:
        """The recorded env hook."""
        return self._env_hook_func

    def set_visible_device_enable(self, enable: Any) -> None:
        """Accepted, not used by hflow."""
        self._visible_device_enable = enable

    def get_visible_device_enable(self) -> Any:
        """The recorded flag."""
        return self._visible_device_enable


class FlowFuncRegister:
    """Process-wide record of UDF classes' proc functions."""

    _lock = threading.Lock()
    _name_dict: dict[tuple[str, str], FlowFuncInfos] = {}

    @classmethod
    def register_flow_func(cls, module_name: str, clz_name: str, func_name: str, params: str) -> None:
        """Record ``func_name`` of class ``clz_name`` with mapping ``params``."""
        with cls._lock:
            cls._name_dict.setdefault((module_name, clz_name), FlowFuncInfos()).add_func_params(func_name, params)

    @classmethod
    def get_flow_func(cls, module_name: str, clz_name: str) -> Optional[dict[str, str]]:
        """Function name -> mapping of a class, or None when it has none."""
        with cls._lock:
            infos = cls._name_dict.get((module_name, clz_name))
        return None if infos is None else infos.get_all_func_params()

    @classmethod
    def register_flow_func_infos(cls, module_name: str, clz_name: str, infos: FlowFuncInfos) -> None:
        """Replace a class's record."""
        with cls._lock:
            cls._name_dict[(module_name, clz_name)] = infos

    @classmethod
    def get_flow_func_infos(cls, module_name: str, clz_name: str) -> Optional[FlowFuncInfos]:
        """A class's record, or None."""
        with cls._lock:
            return cls._name_dict.get((module_name, clz_name))
