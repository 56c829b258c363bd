"""dataflow.utils.log: GE's functions and levels, the level from ASCEND_GLOBAL_LOG_LEVEL, lines on
stderr (not stdout) naming the caller's file."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

import dataflow.utils.log as df_log


def test_ge_api_names_and_levels() -> None:
    assert (df_log.DEBUG, df_log.INFO, df_log.WARNING, df_log.ERROR) == (
        logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR)
    for name in df_log.__all__:
        assert hasattr(df_log, name), name
    assert df_log.get_logger().name == "DATAFLOW"
    assert df_log.get_logger() is df_log.get_logger()


def test_set_and_get_level() -> None:
    old = df_log.get_log_level()
    try:
        df_log.set_log_level(df_log.INFO)
        assert df_log.get_log_level() == df_log.INFO
        df_log.set_log_level("ERROR")
        assert df_log.get_log_level() == df_log.ERROR
    finally:
        df_log.set_log_level(old)


def test_every_function_logs_at_its_level() -> None:
    old = df_log.get_log_level()
    df_log.set_log_level(df_log.DEBUG)
    try:
        with _Capture() as cap:
            df_log.debug("debug %d", 1)
            df_log.info("info")
            df_log.warning("warning")
            df_log.error("error")
            df_log.log(df_log.INFO, "info again")
        assert cap.lines == ["DEBUG:DATAFLOW:debug 1", "INFO:DATAFLOW:info", "WARNING:DATAFLOW:warning",
                             "ERROR:DATAFLOW:error", "INFO:DATAFLOW:info again"]
        # The record names the caller, not the log module.
        assert {r.filename for r in cap.records} == {os.path.basename(__file__)}
    finally:
        df_log.set_log_level(old)


class _Capture(logging.Handler):
    """Collects the DATAFLOW logger's records as GE's tests read them (LEVEL:name:message)."""

    def __enter__(self) -> "_Capture":
        self.records: list[logging.LogRecord] = []
        df_log.get_logger().addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        df_log.get_logger().removeHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    @property
    def lines(self) -> list[str]:
        return [f"{r.levelname}:{r.name}:{r.getMessage()}" for r in self.records]


SCRIPT = """
import dataflow.utils.log as l
print("level", l.get_log_level())
l.debug("d-line"); l.info("i-line"); l.warning("w-line"); l.error("e-line")
"""


@pytest.mark.parametrize("env, level, shown", [
    (None, logging.WARNING, ["w-line", "e-line"]),
    ("0", logging.DEBUG, ["d-line", "i-line", "w-line", "e-line"]),
    ("1", logging.INFO, ["i-line", "w-line", "e-line"]),
    ("3", logging.ERROR, ["e-line"]),
    ("4", logging.CRITICAL + 1, []),
    ("bogus", logging.WARNING, ["w-line", "e-line"]),
])
def test_level_from_environment_and_lines_on_stderr(env, level, shown) -> None:
    environ = dict(os.environ)
    environ.pop("ASCEND_GLOBAL_LOG_LEVEL", None)
    if env is not None:
        environ["ASCEND_GLOBAL_LOG_LEVEL"] = env
    run = subprocess.run([sys.executable, "-c", SCRIPT], env=environ, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [f"level {level}"]  # nothing of the log on stdout
    found = [w for w in ["d-line", "i-line", "w-line", "e-line"] if w in run.stderr]
    assert found == shown, run.stderr
    for line in run.stderr.splitlines():
        # GE's format: [LEVEL] DATAFLOW(pid,process):time [file:line]thread function: message
        assert line.startswith("[") and "] DATAFLOW(" in line and "[<string>:" in line, line
