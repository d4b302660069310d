"""The built-ins of issue 13 as a user meets them: ``unotest e2e`` and ``unotest check``.

A small TodoMVC-like page (served from ``tmp_path`` on 127.0.0.1) is tested the way a
ported Playwright suite would test it: state read with ``evaluate``, negated and list
assertions, ``expect_class``, ``dispatch_event`` and ``blur``. A second scenario fails on
a negated expectation whose "still there" text is a secret: its ``step:fail`` must be a
valid protocol event naming the target and what was expected and found, and the secret
must appear nowhere the run wrote.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from events import read_events
from protocol_keys import PROTOCOL_KINDS
from protocol_schemas import validate
from sites import (
    E2E,
    check_errors,
    config_yaml,
    e2e_json,
    scenario_source,
    write_project,
)

from runner.project.signatures import BROWSER_SIGNATURES

SECRET = "s3cr3t-T0ken-4711"
MASK = "********"

TODO_PAGE = """<!doctype html>
<title>Todos</title>
<input id=new placeholder="What needs to be done?">
<ul id=list></ul>
<p id=left></p>
<p id=status>Saving</p>
<script>
  const list = document.querySelector('#list');
  const input = document.querySelector('#new');
  let todos = JSON.parse(localStorage.getItem('todos') || '[]');
  function render() {
    list.innerHTML = '';
    todos.forEach((todo, i) => {
      const li = document.createElement('li');
      li.textContent = todo.title;
      li.className = todo.done ? 'todo completed' : 'todo';
      li.addEventListener('click', () => { todos[i].done = !todos[i].done; save(); });
      list.append(li);
    });
    document.querySelector('#left').textContent =
      todos.filter(t => !t.done).length + ' items left';
  }
  function save() { localStorage.setItem('todos', JSON.stringify(todos)); render(); }
  input.addEventListener('keydown', e => {
    if (e.key === 'Enter' && input.value.trim()) {
      todos.push({title: input.value.trim(), done: false});
      input.value = '';
      save();
    }
  });
  input.addEventListener('blur', () => input.classList.add('touched'));
  input.addEventListener('focus', () => input.classList.remove('touched'));
  list.addEventListener('clear-completed', () => { todos = todos.filter(t => !t.done); save(); });
  render();
  setTimeout(() => { document.querySelector('#status').textContent = 'Saved'; }, 300);
</script>
"""

PORTED = r"""  goto("todo.html")
  expect_not_text(css("#status"), "Saving")
  const field = "What needs to be done?"
  for (const title of ["milk", "bread", "eggs"]) {
    fill(field, title)
    press(field, "Enter")
  }
  expect_text(css("#list li"), ["milk", "bread", /^eg/])
  expect_not_count(css("#list li"), 2)
  click(text("milk"))
  expect_class(css("#list li"), ["todo completed", "todo", /^todo$/])
  expect_contains_class(css("#list li"), ["completed", "todo", "todo"])
  expect_not_contains_class(css("#list li").last(), "completed")
  expect_contains(css("#list li"), ["mil", "rea", "g"])
  const stored = evaluate("() => JSON.parse(localStorage.getItem('todos'))")
  expect_equal(stored[0], {title: "milk", done: true})
  expect_equal(len(stored), 3)
  const left = evaluate(css("#left"), "(e, suffix) => e.textContent + suffix", "!")
  expect_equal(left, "2 items left!")
  focus(field)
  expect_not_class(css("#new"), "touched")
  blur(field)
  expect_class(css("#new"), "touched")
  dispatch_event(css("#list"), "clear-completed")
  expect_text(css("#list li"), ["bread", "eggs"])
  expect_not_visible(text("milk"))
  evaluate("(t) => localStorage.setItem('token', t)", env("API_TOKEN"))
  const token = evaluate("() => localStorage.getItem('token')")
  log("@@ token " + token)
  log("@@ done " + json(evaluate("() => JSON.parse(localStorage.getItem('todos')).length")))
"""

STILL_THERE = r"""  goto("todo.html")
  expect_text(css("#status"), "Saved", {timeout: 5000})
  const put = "(t) => { document.querySelector('#status').textContent = t; return t }"
  const shown = evaluate(put, env("API_TOKEN"))
  expect_not_contains(css("#status"), "T0ken")
"""


def _every_text(folder: Path) -> str:
    """Every text file under ``folder`` (a screenshot shows what the page showed)."""
    return "\n".join(
        path.read_text(errors="replace")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.suffix != ".png"
    )


def test_a_ported_suite_runs_and_a_negated_failure_is_reported_masked(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 5000, "expect": 1500, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {
            "ported": scenario_source("ported", PORTED, fn="test_ported"),
            "still-there": scenario_source("still-there", STILL_THERE, fn="test_still_there"),
        },
        files={"site/todo.html": TODO_PAGE, "unotest/.env": f"API_TOKEN={SECRET}\n"},
    )
    with ThreadPoolExecutor(max_workers=2) as pool:
        ported, still = pool.map(lambda name: e2e_json(project, name), ["ported", "still-there"])

    code, result, output = ported
    assert code == 0 and result["outcome"] == "completed", output
    logs = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    assert logs == [f"token {MASK}", "done 2"], output
    assert SECRET not in output + _every_text(project / result["runDir"])

    code, result, output = still
    assert code == 1 and result["outcome"] == "failed", output
    wanted = (
        'expected <Locator css="#status"> not to contain text "T0ken", '
        f'still received "{MASK}" after 1500 ms'
    )
    error = result["error"]
    assert (error["errorName"], error["line"], error["col"]) == ("AssertionError", 9, 2), error
    assert error["error"] == wanted, error
    run_dir = project / result["runDir"]
    events = read_events(run_dir, finished=True)
    for event in events:
        if event["kind"] in PROTOCOL_KINDS:
            validate("RunArtifact", event)
    failed = [e for e in events if e["kind"] == "step:fail"]
    assert [(e["errorName"], e["error"]) for e in failed] == [("AssertionError", wanted)]
    started = [e for e in events if e["kind"] == "step:started"]
    assert started[-1]["text"] == 'expect_not_contains(css("#status"), "T0ken")'
    runtime = json.loads((run_dir / "runtime.json").read_text())
    assert runtime["lastFailure"]["error"] == {"message": wanted, "name": "AssertionError"}
    assert f"{E2E}/still-there.test.js:9:2: AssertionError: " in output, output
    bundle = project / result["bundlePath"]
    assert json.loads((bundle / "error.json").read_text())["vars"]["shown"] == f'"{MASK}"'
    for where, text in [
        ("the output", output),
        ("the run directory", _every_text(run_dir)),
        ("the failure bundle", _every_text(bundle)),
    ]:
        assert SECRET not in text, f"the secret leaked into {where}"


# --- unotest check knows the new built-ins ------------------------------------------------

NEW_BUILTINS = {
    "evaluate": "1 to 3 arguments",
    "dispatch_event": "2 to 3 arguments",
    "blur": "1 argument",
    "expect_class": "2 to 3 arguments",
    "expect_not_visible": "1 to 2 arguments",
    "expect_not_hidden": "1 to 2 arguments",
    "expect_not_text": "2 to 3 arguments",
    "expect_not_contains": "2 to 3 arguments",
    "expect_not_value": "2 to 3 arguments",
    "expect_not_count": "2 to 3 arguments",
    "expect_not_checked": "1 to 2 arguments",
    "expect_not_unchecked": "1 to 2 arguments",
    "expect_not_enabled": "1 to 2 arguments",
    "expect_not_disabled": "1 to 2 arguments",
    "expect_not_attr": "3 to 4 arguments",
    "expect_not_class": "2 to 3 arguments",
}


def test_every_retrying_target_expectation_has_a_negated_twin() -> None:
    positive = {
        name.removeprefix("expect_")
        for name in BROWSER_SIGNATURES
        if name.startswith("expect_") and not name.startswith("expect_not_")
    }
    negated = {name.removeprefix("expect_not_") for name in BROWSER_SIGNATURES if "_not_" in name}
    assert negated == positive  # expect_url and expect_title too (issue 30)
    for name, arity in BROWSER_SIGNATURES.items():
        if name.startswith("expect_not_"):
            twin = "expect_" + name.removeprefix("expect_not_")
            assert arity == BROWSER_SIGNATURES[twin], name
    assert set(NEW_BUILTINS) <= set(BROWSER_SIGNATURES)


def test_check_knows_the_arity_of_every_new_builtin(tmp_path: Path) -> None:
    too_many = "".join(f"  {name}(1, 2, 3, 4, 5)\n" for name in NEW_BUILTINS)
    fine = (
        '  evaluate("1")\n  evaluate("(x) => x", 1)\n  evaluate(css("p"), "(e, x) => x", 1)\n'
        '  dispatch_event("p", "click")\n  dispatch_event("p", "keydown", {key: "a"})\n'
        '  expect_text(css("li"), ["a", /b/])\n'
    )
    project = write_project(
        tmp_path,
        config_yaml(None),
        {
            "too-many": scenario_source("too-many", too_many),
            "none": scenario_source("none", "".join(f"  {n}()\n" for n in NEW_BUILTINS)),
            "fine": scenario_source("fine", fine),
        },
    )
    problems = check_errors(project)
    by_file: dict[str, list[tuple[int, str]]] = {}
    for problem in problems:
        by_file.setdefault(problem["path"], []).append((problem["line"], problem["message"]))
    assert f"{E2E}/fine.test.js" not in by_file, by_file
    expected_many = [
        (5 + i, f"TypeError: {name}() takes {arity} but got 5")
        for i, (name, arity) in enumerate(NEW_BUILTINS.items())
    ]
    assert by_file[f"{E2E}/too-many.test.js"] == expected_many
    expected_none = [
        (5 + i, f"TypeError: {name}() takes {arity} but got 0")
        for i, (name, arity) in enumerate(NEW_BUILTINS.items())
    ]
    assert by_file[f"{E2E}/none.test.js"] == expected_none
