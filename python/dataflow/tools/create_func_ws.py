"""``python3 -m dataflow.tools.create_func_ws``: GE's command that creates a UDF workspace.

    python3 -m dataflow.tools.create_func_ws -f sub:i0:i1:o0,add:i2:o1 -c Clz -w ./ws

``-f/--functions`` (required) lists the functions and the node inputs (``iN``) and outputs
(``oN``) each one takes, ``stream_input`` marking a function that gets its input queues;
``-c/--clz_name`` names the Python class (default: made from the function names); ``-w/--workspace``
is the folder (default: the current one). The command prints its arguments, checks them, asks for
confirmation ("y" or "yes", any case; anything else, or no input at all, prints "exit" and writes
nothing) and writes the workspace (func_ws_creator.py). A bad argument raises ValueError from
``main`` (GE's behaviour, which its tests check); run as a program, it prints the message and exits
with status 2 instead of a traceback.

Thread-safety: a command-line entry point; ``main`` reads stdin and writes files.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

from dataflow.tools.func_ws_creator import FuncWsCreator


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m dataflow.tools.create_func_ws",
                                     description="Create a UDF workspace whose functions are a Python class's "
                                                 "methods, for hflow to build and run.")
    parser.add_argument("-f", "--functions", required=True, type=str,
                        help="functions with their input and output indexes, e.g. sub:i0:i2:o0,add:i1:i3:o1:o0 "
                             "(add :stream_input for a function that gets its input queues)")
    parser.add_argument("-c", "--clz_name", required=False, default="", type=str,
                        help="the Python class name (default: the first four function names, title-cased)")
    parser.add_argument("-w", "--workspace", required=False, default="", type=str,
                        help="the workspace folder (default: the current folder)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Parse ``argv`` (default: the command line), confirm, and create the workspace."""
    args = _parser().parse_args(argv)
    print(f"args: functions={args.functions}, clz_name={args.clz_name}, workspace={args.workspace}")
    creator = FuncWsCreator(args.functions, args.clz_name, args.workspace)  # checks before asking
    path = os.path.abspath(args.workspace)
    try:
        confirmation = input(f"will create workspace in path '{path}', please enter Yes(y) to confirm:")
    except EOFError:
        confirmation = ""
    if confirmation.lower() in ("y", "yes"):
        print("create function workspace begin")
        creator.generate()
        print("create function workspace finish")
        print(f"compile config: {creator.get_config_file()}")
    else:
        print("exit")


if __name__ == "__main__":
    try:
        main()
    except (ValueError, TypeError) as e:
        print(f"create_func_ws: error: {e}", file=sys.stderr)
        sys.exit(2)
