"""``expect_poll`` with matchers, ``expect_to_pass``, built-ins passed by name and the
Playwright meanings of ``expect_class`` / ``expect_contains_class``, as a user meets
them: ``unotest e2e --json`` on real Chromium, and ``unotest check``.

The site (written to ``tmp_path``, served on 127.0.0.1) is TodoMVC-shaped: a new todo is
saved to ``localStorage`` a while after Enter, so ``expect_poll(read_todos,
contains("buy milk"))`` passes only by polling; ``ready.html`` turns ready after a
while (``expect_to_pass`` retries a helper until it does: the attempts' failed steps are
written caught, never as the run's failure); ``go.html`` navigates to ``done.html``
after a while (``expect_poll(url, contains("/done.html"))``) and ``hello.html`` opens an
alert (``expect_poll(dialog_message, "Hello")``). The scenarios that must fail check
the message, the place and the caught steps of a give-up.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from events import read_events
from sites import E2E, check_errors, config_yaml, e2e_json, scenario_source, write_project

SITE = {
    "site/todo.html": """<!doctype html>
<title>Todos</title>
<input id=new placeholder="What needs to be done?">
<ul id=list></ul>
<script>
  const list = document.querySelector('#list');
  const input = document.querySelector('#new');
  let todos = [];
  function render() {
    list.innerHTML = '';
    todos.forEach((todo, i) => {
      const li = document.createElement('li');
      li.textContent = todo.title;
      li.className = todo.completed ? 'todo completed' : 'todo';
      li.addEventListener('click', () => { todos[i].completed = true; render(); });
      list.append(li);
    });
  }
  input.addEventListener('keydown', e => {
    if (e.key !== 'Enter') return;
    const title = input.value.trim();
    input.value = '';
    // saved a while later, as an app that waits for its server
    setTimeout(() => {
      todos.push({title, completed: false});
      localStorage.setItem('todos', JSON.stringify(todos));
      render();
    }, 600);
  });
</script>
""",
    "site/ready.html": """<!doctype html>
<title>Ready</title>
<p id=status>loading</p>
<div id=panel class="panel loading">panel</div>
<div id=fixed class="card  wide">fixed</div>
<script>
  setTimeout(() => {
    document.querySelector('#status').textContent = 'ready';
    document.querySelector('#panel').className = 'panel ready';
  }, 1200);
</script>
""",
    "site/go.html": """<!doctype html>
<title>Going</title><p>going</p>
<script>setTimeout(() => { location.href = 'done.html'; }, 700);</script>
""",
    "site/done.html": "<!doctype html><title>Done</title><p>done</p>\n",
    "site/hello.html": """<!doctype html>
<title>Hello</title><p id=status>hi</p>
<script>setTimeout(() => alert('Hello'), 400);</script>
""",
}

HELPERS = """\
function read_todos() {
  return json(evaluate("localStorage.getItem('todos')"))
}

function todo_list() {
  return json_parse(evaluate("localStorage.getItem('todos') || '[]'"))
}

function check_ready() {
  expect_text(css("#status"), "ready", { timeout: 150 })
  expect_contains_class(css("#panel"), "ready", { timeout: 150 })
}

function status_is(what) {
  expect_text(css("#status"), what, { timeout: 150 })
}
"""
HELPER_FILE = f"{E2E}/_helpers/pages.js"
READY_LINE = 10  # expect_text in check_ready
STATUS_LINE = 15  # expect_text in status_is

TODOS = """\
  goto("todo.html")
  fill("What needs to be done?", "buy milk")
  press("What needs to be done?", "Enter")
  expect_poll(read_todos, contains("buy milk"))
  expect_poll(todo_list, contains(matches_object({ title: "buy milk", completed: false })))
  expect_equal(len(todo_list()), greater_or_equal(1))
  expect_not_equal(todo_list(), has_length(0))
  expect_class(css("#list li"), "todo")
  click(text("buy milk"))
  expect_class(css("#list li"), "todo completed")
  expect_class(css("#list li"), /\\bcompleted$/)
  expect_contains_class(css("#list li"), "completed todo")
  expect_not_class(css("#list li"), "completed")
  expect_not_contains_class(css("#list li"), "editing")
  expect_class(css("#list li"), ["todo completed"])
  expect_contains_class(css("#list li"), ["completed"])
  log("@@ " + type_of(read_todos) + " " + json(todo_list()))
"""

READY = """\
  goto("ready.html")
  expect_to_pass(check_ready, { timeout: 15000 })
  expect_class(css("#panel"), "panel ready")
  expect_class(css("#fixed"), "card  wide")
  log("@@ ready")
"""

NAVIGATES = """\
  goto("go.html")
  expect_poll(url, contains("/done.html"))
  expect_poll(title, "Done")
  goto("hello.html")
  expect_poll(dialog_message, "Hello")
  expect_to_pass(status_is, { args: ["hi"] })
  log("@@ " + url().slice(-10))
"""

GIVES_UP = """\
  goto("ready.html")
  expect_to_pass(status_is, { timeout: 1500, args: ["finished"] })
"""  # status_is waits 150 ms a call: under load the page may not be ready yet

POLL_GIVES_UP = """\
  goto("go.html")
  expect_poll(url, contains("/nowhere"), { timeout: 2500, intervals: [200] })
"""

CLASS_IS_EXACT = """\
  goto("ready.html")
  expect_contains_class(css("#fixed"), "wide card")
  expect_class(css("#fixed"), "card wide", { timeout: 300 })
"""

SCENARIOS = {
    "todos": TODOS,
    "ready": READY,
    "navigates": NAVIGATES,
    "gives-up": GIVES_UP,
    "poll-gives-up": POLL_GIVES_UP,
    "class-is-exact": CLASS_IS_EXACT,
}
FAILURE_LINE = 6  # the scenario's second statement (three header lines, the function)


def _failed_steps(project: Path, result: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """Each ``step:fail`` of the run: the file and line of the step it closes (the open
    step it pairs with), and whether it was caught."""
    events = read_events(project / result["runDir"], finished=True)
    open_steps: list[tuple[str, int]] = []
    failed: list[tuple[str, int, bool]] = []
    for event in events:
        if event["kind"] == "step:started":
            open_steps.append((event["file"], event["line"]))
        elif event["kind"] == "step:ok":
            open_steps.pop()
        elif event["kind"] == "step:fail":
            failed.append((*open_steps.pop(), bool(event.get("caught"))))
    return failed


def _logged(output: str) -> list[str]:
    return [line[3:] for line in output.splitlines() if line.startswith("@@ ")]


def test_polls_retries_built_ins_by_name_and_classes(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 5000, "expect": 5000, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {name: scenario_source(name, body) for name, body in SCENARIOS.items()},
        helpers={"pages": HELPERS},
        files=SITE,
    )
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = dict(
            zip(SCENARIOS, pool.map(lambda n: e2e_json(project, n), SCENARIOS), strict=True)
        )

    # The TodoMVC case: the saved list is polled until it has the new item.
    code, result, output = runs["todos"]
    assert code == 0 and result["outcome"] == "completed", output
    assert _logged(output) == ['function [{"title":"buy milk","completed":false}]'], output
    assert _failed_steps(project, result) == []

    # expect_to_pass: attempts fail (caught, in the helper) until the page is ready.
    code, result, output = runs["ready"]
    assert code == 0 and result["outcome"] == "completed", output
    assert _logged(output) == ["ready"]
    failed = _failed_steps(project, result)
    assert failed and set(failed) <= {
        (HELPER_FILE, READY_LINE, True),
        (HELPER_FILE, READY_LINE + 1, True),
    }, failed

    # Built-ins passed by name: url, title, dialog_message (and a helper with args).
    code, result, output = runs["navigates"]
    assert code == 0 and result["outcome"] == "completed", output
    assert _logged(output) == ["hello.html"]


def test_give_ups_say_what_was_wanted_and_what_was_there(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 5000, "expect": 5000, "navigation": 10000, "scenario": 60000}
    failing = ("gives-up", "poll-gives-up", "class-is-exact")
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {name: scenario_source(name, SCENARIOS[name]) for name in failing},
        helpers={"pages": HELPERS},
        files=SITE,
    )
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = dict(zip(failing, pool.map(lambda n: e2e_json(project, n), failing), strict=True))

    # expect_to_pass gives up: the last attempt's error, at the expect_to_pass statement;
    # every attempt's failed step is caught, the statement's own is not.
    code, result, output = runs["gives-up"]
    assert code == 1 and result["outcome"] == "failed", output
    error = result["error"]
    assert (error["errorName"], error["line"], error["col"]) == (
        "AssertionError",
        FAILURE_LINE,
        2,
    ), error
    assert error["error"].startswith("expect_to_pass(status_is) gave up after 1500 ms ("), error
    last_call = (
        f"); the last call failed at {HELPER_FILE}:{STATUS_LINE}:2: "
        'expected <Locator css="#status"> to have text "finished", received '
    )
    assert error["error"].endswith((last_call + '"ready"', last_call + '"loading"')), error
    failed = _failed_steps(project, result)
    scenario_file = f"{E2E}/gives-up.test.js"
    assert failed[-1] == (scenario_file, FAILURE_LINE, False)
    assert len(failed) >= 3 and set(failed[:-1]) == {(HELPER_FILE, STATUS_LINE, True)}, failed

    # expect_poll with a built-in and a matcher: the last value it saw.
    code, result, output = runs["poll-gives-up"]
    assert code == 1, output
    error = result["error"]
    assert (error["errorName"], error["line"], error["col"]) == ("AssertionError", 6, 2)
    assert error["error"].startswith(
        'expect_poll(url) gave up after 2500 ms: expected a value containing "/nowhere", '
        f'last got "{static_site}/site/done.html" ('
    ), error

    # expect_class is the whole attribute, spaces as written (Playwright's toHaveClass).
    code, result, output = runs["class-is-exact"]
    assert code == 1, output
    error = result["error"]
    assert (error["errorName"], error["line"], error["col"]) == ("AssertionError", 7, 2)
    assert error["error"] == (
        'expected <Locator css="#fixed"> to have class "card wide", received "card  wide"'
    )


def test_check_knows_the_new_built_ins(tmp_path: Path) -> None:
    body = """\
  expect_contains_class(css("p"), "a", { timeout: 1 }, 4)
  expect_not_contains_class(css("p"), "a", { timout: 1 })
  expect_to_pass(check_ready, { timout: 1 })
  expect_poll(url(), contains("x"))
  expect_poll(status_is, 1)
  let f = url
  expect_poll(url, greater_than(1), { timeout: 5, intervals: [1], args: [] })
  expect_to_pass(dialog_message)
"""
    project = write_project(
        tmp_path,
        config_yaml(None),
        {"bad": scenario_source("bad", body)},
        helpers={"pages": HELPERS},
    )
    found = [
        (p["line"], p["message"])
        for p in check_errors(project)
        if p["path"].endswith("bad.test.js")
    ]
    assert found == [
        (5, "TypeError: expect_contains_class() takes 2 to 3 arguments but got 4"),
        (
            6,
            "TypeError: expect_not_contains_class() has no option 'timout' (did you mean "
            "'timeout'?) (its options: soft, timeout)",
        ),
        (
            7,
            "TypeError: expect_to_pass() has no option 'timout' (did you mean 'timeout'?) "
            "(its options: args, intervals, soft, timeout)",
        ),
        (
            8,
            "TypeError: expect_poll() takes the function itself: write expect_poll(url, ...) "
            "without the ()",
        ),
        (
            9,
            "TypeError: expect_poll() calls status_is() without arguments, but it takes 1 "
            "argument: give them in its options ({args: [...]}) or poll a function without "
            "parameters",
        ),
        (
            10,
            "TypeError: 'url' is a built-in: call it as url(...); a built-in is a value only "
            "where a function is passed: expect_poll(url, ...), expect_to_pass(url), "
            'step("...", url), or an '
            "argument of a function of the scenario's file or of a helper",
        ),
    ]
