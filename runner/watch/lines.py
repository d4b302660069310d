"""The watch daemon without ``--json``: each bus event as readable lines on a terminal.

A subscriber of the same bus as the socket and ``--json``: what a person reads is the
same sequence the tools get, worded (project-relative paths, the reason chain as
arrows, one line per run, what took over after an error).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from runner.text import one_line

__all__ = ["LinePrinter"]


class LinePrinter:
    def __init__(self, root: Path, out: TextIO = sys.stdout) -> None:
        self.root = root.as_posix().rstrip("/") + "/"
        self.out = out
        self.keys = False

    def rel(self, path: str) -> str:
        return path[len(self.root) :] if path.startswith(self.root) else path

    def __call__(self, event: dict[str, Any]) -> None:
        handler: Callable[[dict[str, Any]], list[str]] | None = getattr(
            self, "_" + event["type"].replace(".", "_"), None
        )
        if handler is None:
            return  # a type this printer does not know: consumers ignore unknown types
        for line in handler(event):
            print(one_line(line) if line else line, file=self.out, flush=True)

    def _daemon_started(self, event: dict[str, Any]) -> list[str]:
        server = event.get("server")
        where = f"events on {server['host']}:{server['port']}" if server else "no socket"
        lines = [f"watching {event['root']} ({event['indexedFiles']} files; {where})"]
        if self.keys:
            lines.append("keys: Enter re-runs the last batch, a all, f failed, q quits")
        return lines

    def _daemon_stopped(self, event: dict[str, Any]) -> list[str]:
        return [f"stopped ({event.get('reason')})"]

    def _watch_change(self, event: dict[str, Any]) -> list[str]:
        return [f"{event['kind']:>7}  {self.rel(event['path'])}"]

    def _batch_started(self, event: dict[str, Any]) -> list[str]:
        entries = event["plan"]
        count = sum(len(entry["testFiles"]) for entry in entries)
        lines = ["", f"{event['batchId']} ({event['trigger']}): {count} scenario(s)"]
        for entry in entries:
            for test_file, name in zip(entry["testFiles"], entry["scenarios"], strict=False):
                for reason in entry["reasons"].get(test_file, []):
                    lines.append(f"  {name}  ← {self._reason(reason)}")
        for miss in event["unmatched"]:
            lines.append(f"  nothing for {self.rel(miss['file'])}: {miss['reason']}")
        return lines

    def _reason(self, reason: dict[str, Any]) -> str:
        kind = reason["kind"]
        if kind == "importer":
            files = " → ".join(self.rel(f) for f in reason.get("chain", []))
            via = ", ".join(reason.get("via", []))
            by_name = ", by name" if reason.get("byName") else ""
            return f"{files} ({via}{by_name})"
        if kind == "changed":
            return f"saved {self.rel(reason.get('changedFile', ''))}"
        return str(reason.get("message", kind))

    def _run_finished(self, event: dict[str, Any]) -> list[str]:
        result = event["result"]
        seconds = result.get("durationMs", 0) / 1000
        line = f"  {result['status']:>9}  {result['scenario']}  {seconds:.2f} s"
        if result.get("runDir"):
            line += f"  {result['runDir']}"
        lines = [line]
        failure = result["cases"][0].get("failureMessage") if result.get("cases") else None
        if failure and result["status"] != "passed":
            lines.append(f"             {failure}")
        return lines

    def _batch_finished(self, event: dict[str, Any]) -> list[str]:
        result = event["result"]
        counts = ", ".join(f"{n} {s}" for s, n in result["counts"].items() if n)
        return [f"{event['batchId']} {result['status']}" + (f": {counts}" if counts else "")]

    def _error(self, event: dict[str, Any]) -> list[str]:
        detail = f" ({event['detail']})" if event.get("detail") else ""
        took_over = f"; {event['degradedTo']}" if event.get("degradedTo") else ""
        return [f"! {event['scope']}: {event['message']}{detail}{took_over}"]
