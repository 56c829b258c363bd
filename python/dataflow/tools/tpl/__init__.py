"""The text templates of ``dataflow.tools.create_func_ws`` and the one rule that fills them.

A template marks each value as ``@name@`` (CMake's ``configure_file`` style, which leaves CMake's
own ``${...}`` and C++'s braces alone); ``render`` replaces every marker and refuses a template
that still has one afterwards, so a misspelt marker fails loudly instead of reaching a user's file.

Thread-safety: pure functions on immutable strings.
"""
from __future__ import annotations

import re

_MARKER = re.compile(r"@([a-z_]+)@")


def render(template: str, **values: str) -> str:
    """``template`` with each ``@key@`` replaced by ``values[key]``; ValueError for a missing key."""

    def fill(m: re.Match) -> str:
        key = m.group(1)
        if key not in values:
            raise ValueError(f"template marker @{key}@ has no value (given: {sorted(values)})")
        return values[key]

    return _MARKER.sub(fill, template)
