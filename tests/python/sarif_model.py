"""Checks a SARIF log against the SARIF 2.1.0 object model, read from Debian's
golang-github-haya14busa-go-sarif-dev: Go types generated (by quicktype) from the official
SARIF 2.1.0 JSON schema, each property with its JSON name, its type and whether it is
required (no `omitempty`), each enumeration with its values. No schema file can be fetched
here; this model is the schema's, as a Debian package ships it.

What it checks: every object's properties are the schema's (property bags excepted: SARIF lets
them hold anything), required properties are there, each value has its property's type (object,
array, map, string, integer, number, boolean) and enumerations hold one of their values; and,
from the schema's constraints the model drops, that line numbers and indexes are >= 1 / >= 0.
Pure functions; no state.
"""
from __future__ import annotations

import re

GO_SARIF = "/usr/share/gocode/src/github.com/haya14busa/go-sarif/sarif/sarif.go"

_STRUCT = re.compile(r"^type (\w+) struct \{$")
_FIELD = re.compile(r'^\s+\w+\s+(\S+)\s+`json:"([^",]+)(,omitempty)?"`')
_ENUM = re.compile(r"^type (\w+) string$")
_ENUM_VALUE = re.compile(r'^\s+\w+ (\w+) = "([^"]*)"$')


class Model:
    """The object model: structs {name: {json: (go type, required)}} and enums {name: values}."""

    def __init__(self, path: str = GO_SARIF) -> None:
        self.structs: dict[str, dict[str, tuple[str, bool]]] = {}
        self.enums: dict[str, set[str]] = {}
        current = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if m := _STRUCT.match(line):
                    current = self.structs.setdefault(m.group(1), {})
                elif line == "}":
                    current = None
                elif current is not None and (m := _FIELD.match(line)):
                    current[m.group(2)] = (m.group(1), m.group(3) is None)
                elif m := _ENUM.match(line):
                    self.enums.setdefault(m.group(1), set())
                elif m := _ENUM_VALUE.match(line):
                    self.enums.setdefault(m.group(1), set()).add(m.group(2))
        if "Sarif" not in self.structs or "Result" not in self.structs:
            raise ValueError(f"{path}: no SARIF structs found (not go-sarif's sarif.go?)")

    def errors(self, log: dict) -> list[str]:
        """Every way `log` departs from the model, as 'path: what' lines; [] when valid."""
        out: list[str] = []
        self._value(log, "Sarif", "$", out)
        return out

    def _value(self, v, go: str, path: str, out: list[str]) -> None:
        go = go.lstrip("*")
        if go.startswith("[]"):
            if not isinstance(v, list):
                out.append(f"{path}: an array expected, got {type(v).__name__}")
                return
            for i, item in enumerate(v):
                self._value(item, go[2:], f"{path}[{i}]", out)
        elif go.startswith("map[string]"):
            if not isinstance(v, dict):
                out.append(f"{path}: an object expected, got {type(v).__name__}")
                return
            for k, item in v.items():
                self._value(item, go[len("map[string]"):], f"{path}.{k}", out)
        elif go == "string":
            if not isinstance(v, str):
                out.append(f"{path}: a string expected, got {v!r}")
        elif go == "int64":
            if not isinstance(v, int) or isinstance(v, bool):
                out.append(f"{path}: an integer expected, got {v!r}")
            else:
                self._minimum(v, path, out)
        elif go == "float64":
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                out.append(f"{path}: a number expected, got {v!r}")
        elif go == "bool":
            if not isinstance(v, bool):
                out.append(f"{path}: a boolean expected, got {v!r}")
        elif go == "interface{}":
            pass
        elif go in self.enums:
            if v not in self.enums[go]:
                out.append(f"{path}: {v!r} is not one of {sorted(self.enums[go])}")
        elif go in self.structs:
            self._object(v, go, path, out)
        else:
            out.append(f"{path}: the model has no type {go}")

    def _object(self, v, name: str, path: str, out: list[str]) -> None:
        if not isinstance(v, dict):
            out.append(f"{path}: a {name} object expected, got {type(v).__name__}")
            return
        fields = self.structs[name]
        for key, (go, required) in fields.items():
            if required and key not in v:
                out.append(f"{path}: {name} requires '{key}'")
        for key, item in v.items():
            if key in fields:
                self._value(item, fields[key][0], f"{path}.{key}", out)
            elif name != "PropertyBag":  # property bags hold anything
                out.append(f"{path}: {name} has no property '{key}'")

    @staticmethod
    def _minimum(v: int, path: str, out: list[str]) -> None:
        key = path.rsplit(".", 1)[-1]
        if key in ("startLine", "endLine", "startColumn", "endColumn") and v < 1:
            out.append(f"{path}: {v} is below the schema's minimum 1")
        elif key.endswith("Index") and v < -1:
            out.append(f"{path}: {v} is below the schema's minimum -1")
