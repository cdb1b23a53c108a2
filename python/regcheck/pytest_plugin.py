"""The regcheck pytest plugin (entry point ``pytest11``: ``regcheck``; also ``-p regcheck``).

Run the suite under the layer, which must be loaded before the interpreter starts::

    regcheck run pytest tests/

A test during which the layer reported an ``error`` finding fails, with the finding (rule,
call, message, call site) in its report. ``--regcheck-warnings=fail|report|ignore`` decides
for warnings (default ``report``: listed, the test passes). The terminal summary lists the
findings per test. Without the layer, the plugin says so in the header and does nothing else.

Known findings are silenced with a suppression file, as anywhere else
(``regcheck run --audit --suppressions known.supp pytest tests/``, or
``REGCHECK_SUPPRESSIONS``): a suppressed finding is not in the layer's findings log, so it
neither fails a test nor is listed (the layer's exit summary counts it as suppressed).
"""

from __future__ import annotations

from typing import Any, Dict, Generator, List, Optional

import pytest

import regcheck

RUN_HINT = "regcheck run pytest ..."


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("regcheck", "regcheck (Ascend memory registration checks)")
    group.addoption(
        "--regcheck-warnings",
        choices=("fail", "report", "ignore"),
        default="report",
        help="what a warning finding of regcheck does to the test: fail it, report it in the "
        "summary (default), or ignore it",
    )


class _Plugin:
    """Per-session state: the findings of each test, by phase."""

    def __init__(self, warnings: str) -> None:
        self.warnings = warnings
        self.per_test: Dict[str, List[regcheck.Finding]] = {}
        self.start = 0

    def relevant(self, f: regcheck.Finding) -> bool:
        if f.severity == "error":
            return True
        return f.severity == "warning" and self.warnings != "ignore"

    def failing(self, f: regcheck.Finding) -> bool:
        return f.severity == "error" or (f.severity == "warning" and self.warnings == "fail")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Generator[None, Any, None]:
        outcome = yield
        report = outcome.get_result()
        found = [f for f in regcheck.findings(since=self.start) if self.relevant(f)]
        self.start = max([self.start, regcheck.last_seq()])
        if not found:
            return
        self.per_test.setdefault(item.nodeid, []).extend(found)
        text = "\n".join(_describe(f) for f in found)
        bad = [f for f in found if self.failing(f)]
        if bad and report.passed:
            report.outcome = "failed"
            report.longrepr = f"regcheck reported {_count(bad)} during {report.when}:\n" + "\n".join(
                _describe(f) for f in bad
            )
        else:
            report.sections.append((f"regcheck findings ({report.when})", text))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.start = regcheck.last_seq()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.per_test:
            terminalreporter.write_sep("=", "regcheck: no findings")
            return
        terminalreporter.write_sep("=", "regcheck findings per test")
        for nodeid, found in self.per_test.items():
            terminalreporter.write_line(f"{nodeid}: {_count(found)}")
            for f in found:
                terminalreporter.write_line(f"    {f.severity}: [{f.rule}] {f.call} at {f.site}")


def _count(found: List[regcheck.Finding]) -> str:
    return f"{len(found)} finding" + ("" if len(found) == 1 else "s")


def _describe(f: regcheck.Finding) -> str:
    message = "\n".join(f"    {line.strip()}" if i == 0 else f"    {line}" for i, line in enumerate(f.message.splitlines()))
    lines = [f"{f.severity}: [{f.rule}] {f.call} at {f.site}", message]
    if f.python_site and f.call_site:
        lines.append(f"    native call site: {f.call_site}")
    return "\n".join(lines)


_problem: Optional[str] = None


def pytest_configure(config: pytest.Config) -> None:
    global _problem
    if config.pluginmanager.has_plugin("regcheck-session"):
        return
    try:
        loaded = regcheck.active()
    except RuntimeError as e:  # a regcheck library this module cannot read
        _problem = str(e)
        return
    if loaded:
        # Reading the findings log once makes every later finding keep its call site, also
        # those the layer no longer logs (beyond REGCHECK_MAX_REPEATS).
        regcheck.last_seq()
        config.pluginmanager.register(_Plugin(config.getoption("regcheck_warnings")), "regcheck-session")


def pytest_report_header(config: pytest.Config) -> Optional[str]:
    if _problem is not None:
        return f"regcheck: the layer is loaded but its findings cannot be read, nothing is checked: {_problem}"
    if config.pluginmanager.has_plugin("regcheck-session"):
        return (
            f"regcheck: the layer is loaded (regcheck {regcheck.version()}); error findings fail the test, "
            f"warnings: {config.getoption('regcheck_warnings')}"
        )
    return f"regcheck: the layer is not loaded in this process, nothing is checked; run `{RUN_HINT}`"
