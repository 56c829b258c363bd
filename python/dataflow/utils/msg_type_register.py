"""Registry of user message types: msg type <-> Python class, with (de)serializers.

Type 65535 (``MSG_TYPE_PICKLED_MSG``) is pre-registered with the stdlib ``pickle``; it carries any
object whose class is not registered.

Thread-safety: registration takes a lock; lookups read dicts (safe under the GIL).
"""
from __future__ import annotations

import numbers
import pickle
import threading
from typing import Any, Callable, Optional

PICKLED_MSG_TYPE = 65535
_USER_DEFINE_START = 1024


class MsgTypeRegister:
    """Maps message types (>= 1024) to classes and their serialize/deserialize functions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._type_to_clz: dict[int, Any] = {PICKLED_MSG_TYPE: "__PickledMsg__"}
        self._clz_to_type: dict[Any, int] = {"__PickledMsg__": PICKLED_MSG_TYPE}
        self._serialize: dict[int, Callable[[Any], bytes]] = {PICKLED_MSG_TYPE: pickle.dumps}
        self._deserialize: dict[int, Callable[[Any], Any]] = {PICKLED_MSG_TYPE: pickle.loads}
        self._size: dict[int, Callable[[Any], int]] = {}
        self._writers: dict[int, Callable[[], Any]] = {}

    def register(
        self,
        msg_type: int,
        clz: type,
        serialize_func: Callable[[Any], bytes],
        deserialize_func: Callable[[Any], Any],
        size_func: Optional[Callable[[Any], int]] = None,
    ) -> None:
        """Register ``clz`` as ``msg_type`` (an int in [1024, 65535]); DfException(PARAM_INVALID) for a bad
        argument or a type or class registered otherwise already, as GE raises it."""
        from dataflow.utils.utils import DfException, check_type

        check_type("msg_type", msg_type, numbers.Integral, "int")  # GE takes int(msg_type)
        msg_type = int(msg_type)
        if not _USER_DEFINE_START <= msg_type <= PICKLED_MSG_TYPE:
            raise DfException(f"Argument msg_type must be in [{_USER_DEFINE_START}, {PICKLED_MSG_TYPE}], "
                              f"but got {msg_type}")
        for name, func in (("serialize_func", serialize_func), ("deserialize_func", deserialize_func)):
            if not callable(func):
                raise DfException(f"Argument {name} must be callable, but got {func!r}")
        if size_func is not None and not callable(size_func):
            raise DfException(f"Argument size_func must be callable or None, but got {size_func!r}")
        with self._lock:
            if msg_type in self._type_to_clz and self._type_to_clz[msg_type] != clz:
                raise DfException(f"msg_type:{msg_type} has been registered, class:{self._type_to_clz[msg_type]}.")
            if clz in self._clz_to_type and self._clz_to_type[clz] != msg_type:
                raise DfException(f"class:{clz} has been registered, msg_type:{self._clz_to_type[clz]}.")
            self._type_to_clz[msg_type] = clz
            self._clz_to_type[clz] = msg_type
            self._serialize[msg_type] = serialize_func
            self._deserialize[msg_type] = deserialize_func
            if size_func is not None:
                self._size[msg_type] = size_func

    def _register_builtin(self, msg_type: int, clz: type, serialize_func: Callable[[Any], Any],
                          deserialize_func: Callable[[Any], Any], writer: Optional[Callable[[], Any]] = None) -> None:
        """Register one of GE's own types below the user range (the torch plugin's 1023); idempotent.
        ``writer`` makes objects that write a value straight into a UDF's output message
        (``size(value)``, then ``write(buffer)``), saving the serialized copy."""
        from dataflow.utils.utils import DfException

        with self._lock:
            if self._type_to_clz.get(msg_type, clz) is not clz or self._clz_to_type.get(clz, msg_type) != msg_type:
                raise DfException(f"msg_type:{msg_type} or class:{clz} has been registered otherwise.")
            self._type_to_clz[msg_type] = clz
            self._clz_to_type[clz] = msg_type
            self._serialize[msg_type] = serialize_func
            self._deserialize[msg_type] = deserialize_func
            if writer is not None:
                self._writers[msg_type] = writer

    def _writer(self, msg_type: int) -> Optional[Any]:
        """A new writer for ``msg_type`` (``_register_builtin``'s), or None."""
        make = self._writers.get(msg_type)
        return make() if make is not None else None

    def registered(self, msg_type: int) -> bool:
        """Whether ``msg_type`` has a deserializer."""
        return int(msg_type) in self._deserialize

    def get_msg_type(self, clz: Any) -> Optional[int]:
        """The msg type registered for ``clz``, or None."""
        try:
            return self._clz_to_type.get(clz)
        except TypeError:  # unhashable
            return None

    def get_serialize_func(self, msg_type: int) -> Optional[Callable[[Any], bytes]]:
        """The serializer of ``msg_type``, or None."""
        return self._serialize.get(int(msg_type))

    def get_deserialize_func(self, msg_type: int) -> Optional[Callable[[Any], Any]]:
        """The deserializer of ``msg_type``, or None."""
        return self._deserialize.get(int(msg_type))

    def get_size_func(self, msg_type: int) -> Optional[Callable[[Any], int]]:
        """The size function of ``msg_type``, or None."""
        return self._size.get(int(msg_type))


msg_type_register = MsgTypeRegister()
