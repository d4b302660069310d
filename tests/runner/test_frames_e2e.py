"""Elements inside an iframe (Playwright's ``locator.contentFrame()`` /
``page.frameLocator()``): ``css("#chat").frame().find(label("Message"))``, in real
Chromium; a frame used as an element is one sentence saying what to write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sites import config_yaml, scenario_source, unotest_env, write_project

OUTER = """<!doctype html>
<title>Support</title>
<h1>Support</h1>
<iframe id=chat src="chat.html" title="Chat"></iframe>
"""

INNER = """<!doctype html>
<title>Chat</title>
<label>Message <input id=m></label>
<button onclick="document.querySelector('#log').textContent = 'sent: ' + m.value">Send</button>
<p id=log></p>
"""

CHAT = r"""  goto("support.html")
  const chat = css("#chat").frame()
  fill(chat.find(label("Message")), "hi there")
  click(chat.find(role("button", "Send")))
  expect_text(chat.find(css("#log")), "sent: hi there")
  expect_count(chat.find(role("button")), 1)
  try { click(chat) } catch (e) { log("@@ " + e.message) }
"""


def test_an_element_in_an_iframe_is_found_through_frame(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 3000, "expect": 2000, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {"chat": scenario_source("chat", CHAT, fn="test_chat")},
        files={"site/support.html": OUTER, "site/chat.html": INNER},
    )
    done = subprocess.run(
        [sys.executable, "-m", "unotest", "e2e", "chat", "--json"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=150,
    )
    result = json.loads(done.stdout)
    assert done.returncode == 0 and result["outcome"] == "completed", done.stdout + done.stderr
    # log() of a --json run: its output events
    events = project / result["runDir"] / "events.ndjson"
    output = [json.loads(line)["data"].get("text", "") for line in events.read_text().splitlines()]
    said = [text[3:] for text in output if text.startswith("@@ ")]
    assert len(said) == 1 and said[0].endswith(
        '<Locator css="#chat" >> frame> is the document of an iframe, not an element: name '
        'an element in it with .find(), e.g. css("iframe").frame().find(label("Name"))'
    ), output
