"""``--reporter junit=PATH``: JUnit XML as CI systems read it, built from the envelopes.

A sink of the run's event log: it keeps the envelopes JUnit reads as they are emitted
and writes the file once the run has ended. One ``<testsuite>`` (the ``suite_start``'s
name: the collection), one ``<testcase>`` per ``test_end``, in the order
``run_start.scenarios`` lists them (the collection's, not the order they ran in), named
as Playwright's JUnit reporter names a test: ``name`` its title (``test_end.title``,
the scenario's description line with its ``@tags``; the scenario's name when it has
none), ``classname`` the scenario's name (its path under ``unotest/e2e/``):

- ``failed`` and ``interrupted`` (``test_end.outcome``): a ``<failure>`` with its place
  (``chain``, else ``location``), ``step`` and ``bundle_path``, and a ``<rerunFailure>``
  for each earlier attempt (its ``retry``); ``flaky``: a ``<flakyFailure>`` for each
  failed attempt, as Maven Surefire and pytest-rerunfailures write them;
- ``aborted``: an ``<error>``; ``skipped``: a ``<skipped>`` with its reason;
- ``run_dir`` and ``steps``: a ``<system-out>`` naming the scenario's run directory
  and outlining its titled steps (``step(title, fn)``: each with its outcome, time and
  error, nested as they ran); a failure inside titled steps names them (``in step: Log
  in › Fill the form``).
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from runner.protocol import JSONObject
from runner.run.result import chain_text, error_chain
from runner.store.envelope import Envelope
from unotest.reporters.report_file import write_report

__all__ = ["JUnitReport", "render"]

_READS = frozenset({"run_start", "suite_start", "retry", "test_end", "run_end"})


class JUnitReport:
    """A sink keeping the envelopes JUnit reads; :meth:`finish` writes the XML to
    ``path``, ``started`` (seconds since the epoch) being the testsuite's timestamp."""

    def __init__(self, path: Path, started: float) -> None:
        self.path = path
        self.started = started
        self.events: list[Envelope] = []

    def __call__(self, event: Envelope) -> None:
        if event["type"] in _READS:
            self.events.append(event)

    def finish(self) -> None:
        write_report(self.path, render(self.events, self.started))


def render(events: Iterable[Envelope], started: float) -> str:
    """The JUnit XML document of a run's envelopes."""
    run = _Run()
    for event in events:
        run.add(event)
    cases = run.ordered()
    outcomes = [case.outcome for case in cases]
    # The same totals on <testsuites> and on its one <testsuite>, as CI systems read either.
    totals = {
        "tests": str(len(outcomes)),
        "failures": str(sum(1 for o in outcomes if o in ("failed", "interrupted"))),
        "errors": str(outcomes.count("aborted")),
        "skipped": str(outcomes.count("skipped")),
        "time": _seconds(run.duration_ns),
    }
    suites = ET.Element("testsuites", {"name": "unotest", **totals})
    timestamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started))
    suite = ET.SubElement(
        suites, "testsuite", {"name": run.suite, **totals, "timestamp": timestamp}
    )
    for case in cases:
        case.write(suite)
    _xml_safe(suites)
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _seconds(duration_ns: object) -> str:
    """Nanoseconds as JUnit's seconds (an int over an int is rounded once: the same
    float as the milliseconds over 1000 were)."""
    ns = duration_ns if isinstance(duration_ns, int) else 0
    return f"{ns / 1_000_000_000:.3f}"


@dataclass
class _Case:
    """A ``test_end`` and the ``retry`` events of its failed attempts."""

    data: JSONObject
    retries: list[JSONObject] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.data.get("name"))

    @property
    def title(self) -> str:
        """The testcase's name: the scenario's title, else its name (no description line)."""
        return _text(self.data.get("title")) or self.name

    @property
    def outcome(self) -> str:
        """The run's own outcome (``interrupted``, ``aborted``... are all ``failed``
        statuses), from the status when the envelope does not say it."""
        outcome = _text(self.data.get("outcome"))
        if outcome is not None:
            return outcome
        status = self.data.get("status")
        return "failed" if status == "failed" else "skipped" if status == "skipped" else "completed"

    def write(self, suite: ET.Element) -> None:
        data = self.data
        case = ET.SubElement(
            suite,
            "testcase",
            classname=self.name,
            name=self.title,
            time=_seconds(data.get("duration_ns")),
        )
        if self.outcome in ("failed", "interrupted"):
            self._failure(case)
            self._attempts(case, "rerunFailure")
        elif data.get("status") == "flaky":
            self._attempts(case, "flakyFailure")
        elif self.outcome == "aborted":
            ET.SubElement(case, "error", message="aborted", type="aborted")
        elif self.outcome == "skipped":
            ET.SubElement(case, "skipped", message=_text(data.get("error_message")) or "skipped")
        out: list[str] = []
        run_dir = _text(data.get("run_dir"))
        if run_dir:
            out.append(f"run directory: {run_dir}")
        steps = self.steps
        if steps:
            out.append("steps:")
            out.extend(_step_lines(steps, 1))
        if out:
            ET.SubElement(case, "system-out").text = "\n".join(out)

    @property
    def steps(self) -> list[JSONObject]:
        """The test's titled steps (``test_end.steps``), each an object."""
        steps = self.data.get("steps")
        return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []

    def _failure(self, case: ET.Element) -> None:
        data = self.data
        message = _text(data.get("error_message")) or self.outcome
        location = _location(data)
        error_name = data.get("error_name")
        node = ET.SubElement(
            case,
            "failure",
            # The place first, as CI shows the message alone: the scenario's own line,
            # then each helper down to where it failed.
            message=f"{location}: {message}" if location else message,
            type=str(error_name) if error_name is not None else self.outcome,
        )
        details = [message]
        if location:
            details.append(f"at {location}")
        path = _failed_path(self.steps)
        if path:
            details.append(f"in step: {' › '.join(path)}")
        if data.get("step"):
            details.append(f"step: {data['step']}")
        if data.get("bundle_path"):
            details.append(f"bundle: {data['bundle_path']}")
        node.text = "\n".join(details)

    def _attempts(self, case: ET.Element, tag: str) -> None:
        """The failed attempts as Maven Surefire and pytest-rerunfailures write them:
        ``<flakyFailure>`` (the test passed later) or ``<rerunFailure>`` (it never did),
        each with its message, type and a ``<stackTrace>`` naming the attempt's run."""
        names = self.data.get("retry_error_names")
        error_names = names if isinstance(names, list) else []
        for index, retry in enumerate(self.retries):
            outcome = _text(retry.get("outcome")) or "failed"
            message = _text(retry.get("error_message")) or outcome
            error_name = _text(error_names[index]) if index < len(error_names) else None
            node = ET.SubElement(case, tag, message=message, type=error_name or outcome)
            trace = f"attempt {retry.get('attempt')}: {message}"
            run_id = _text(retry.get("run_id"))
            if run_id:
                trace += f"\nrun: {run_id}"
            ET.SubElement(node, "stackTrace").text = trace


class _Run:
    """What JUnit reads of a run's envelopes, folded as they come."""

    def __init__(self) -> None:
        self.suite = ""
        self.order: dict[str, int] = {}
        self.duration_ns: object = 0
        self.cases: list[_Case] = []
        self.retries: dict[str, list[JSONObject]] = {}

    def add(self, event: Envelope) -> None:
        kind, data = event["type"], event["data"]
        listed = data.get("scenarios")
        if kind == "run_start" and isinstance(listed, list):
            for index, name in enumerate(listed):
                self.order.setdefault(str(name), index)
        elif kind == "suite_start" and not self.suite:
            self.suite = str(data.get("name") or "")
        elif kind == "retry":
            self.retries.setdefault(str(data.get("name")), []).append(data)
        elif kind == "test_end":
            self.cases.append(_Case(data, self.retries.pop(str(data.get("name")), [])))
        elif kind == "run_end":
            self.duration_ns = data.get("duration_ns")

    def ordered(self) -> list[_Case]:
        """The listed order; a test the list does not name after, as it ended."""
        unlisted = len(self.order)
        return sorted(self.cases, key=lambda case: self.order.get(case.name, unlisted))


# What XML 1.0 cannot hold even escaped (C0 controls but tab and newlines, U+FFFE...).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(root: ET.Element) -> None:
    """Every text and attribute written as CI can parse it: a message with an ESC (a
    thrown ANSI colour) made the whole file malformed; such a character is written as
    its escape (``\\x1b``) instead."""

    def safe(text: str) -> str:
        return _NOT_XML.sub(lambda m: repr(m.group())[1:-1], text)

    for element in root.iter():
        if element.text:
            element.text = safe(element.text)
        for key, value in element.attrib.items():
            element.attrib[key] = safe(value)


def _children(step: JSONObject) -> list[JSONObject]:
    steps = step.get("steps")
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def _step_lines(steps: list[JSONObject], depth: int) -> list[str]:
    """``  ✓ Log in (120 ms)``, a failed one with its error, children indented."""
    lines: list[str] = []
    for step in steps:
        failed = step.get("status") == "failed"
        duration = step.get("duration_ms")
        took = f" ({duration:.0f} ms)" if isinstance(duration, int | float) else ""
        error = _text(step.get("error"))
        said = f": {error.splitlines()[0]}" if failed and error else ""
        lines.append(f"{'  ' * depth}{'✗' if failed else '✓'} {step.get('title')}{took}{said}")
        lines.extend(_step_lines(_children(step), depth + 1))
    return lines


def _failed_path(steps: list[JSONObject]) -> list[str]:
    """The titles from the last failed titled step down to the innermost failed one
    inside it: where in the test's own words the failure happened."""
    for step in reversed(steps):
        if step.get("status") == "failed":
            return [str(step.get("title")), *_failed_path(_children(step))]
    return []


def _location(data: JSONObject) -> str | None:
    """Where the test failed as every report writes it: its ``chain`` from the
    scenario's own line, else the error's own ``location`` (``file:line:col``)."""
    chain = error_chain({"chain": data.get("chain")})
    if chain:
        return chain_text(chain)
    return _text(data.get("location"))
