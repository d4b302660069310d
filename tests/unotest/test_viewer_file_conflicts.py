"""No lost edits: ``GET``/``PUT /api/files`` carry a ``version``, a ``PUT`` with a stale
``baseVersion`` is refused with 409, the sentence and what is on disk now. A real
server on a free port and a real HTTP client (httpx), as in ``test_viewer_core``."""

from __future__ import annotations

import hashlib
import threading

import httpx
from test_viewer_core import SMOKE, Viewer, viewer  # noqa: F401  (viewer: the fixture)

URL = f"/api/files/{SMOKE}"


def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def test_the_file_and_the_save_answer_carry_its_version(viewer: Viewer) -> None:  # noqa: F811
    path = viewer.root / SMOKE
    opened = viewer.client.get(URL).json()
    assert opened["version"] == _version(path.read_bytes())
    saved = viewer.client.put(URL, json={"text": "// new\n", "baseVersion": opened["version"]})
    assert saved.status_code == 200, saved.text
    assert saved.json()["version"] == _version(b"// new\n") == _version(path.read_bytes())


def test_a_stale_base_version_is_409_with_the_text_on_disk(viewer: Viewer) -> None:  # noqa: F811
    path = viewer.root / SMOKE
    opened = viewer.client.get(URL).json()
    meanwhile = opened["text"].replace("const a = 1", "const a = 2")
    path.write_text(meanwhile, encoding="utf-8")
    refused = viewer.client.put(
        URL, json={"text": opened["text"] + "// mine\n", "baseVersion": opened["version"]}
    )
    assert refused.status_code == 409, refused.text
    assert refused.json() == {
        "error": f"{SMOKE} changed on disk since you opened it",
        "text": meanwhile,
        "version": _version(meanwhile.encode()),
    }
    assert path.read_text(encoding="utf-8") == meanwhile
    overwrite = {"text": "// mine\n", "baseVersion": refused.json()["version"]}
    assert viewer.client.put(URL, json=overwrite).status_code == 200
    assert path.read_text(encoding="utf-8") == "// mine\n"


def test_without_a_base_version_the_last_save_wins_as_before(viewer: Viewer) -> None:  # noqa: F811
    path = viewer.root / SMOKE
    path.write_text("// changed by an editor\n", encoding="utf-8")
    saved = viewer.client.put(URL, json={"text": "// curl\n"})
    assert saved.status_code == 200, saved.text
    assert path.read_text(encoding="utf-8") == "// curl\n"


def test_a_null_base_version_creates_only_a_new_file(viewer: Viewer) -> None:  # noqa: F811
    new = "/api/files/unotest/e2e/fresh.test.js"
    created = viewer.client.put(new, json={"text": "// fresh\n", "baseVersion": None})
    assert created.status_code == 200, created.text
    again = viewer.client.put(new, json={"text": "// other\n", "baseVersion": None})
    assert again.status_code == 409
    body = again.json()
    assert "exists already" in body["error"]
    assert (body["text"], body["version"]) == ("// fresh\n", created.json()["version"])
    bad = viewer.client.put(new, json={"text": "// x\n", "baseVersion": 7})
    assert bad.status_code == 400 and "baseVersion" in bad.json()["error"]


def test_concurrent_saves_from_one_version_exactly_one_wins(viewer: Viewer) -> None:  # noqa: F811
    base = viewer.client.get(URL).json()["version"]
    start = threading.Barrier(6)
    statuses: dict[int, int] = {}

    def put(n: int) -> None:
        headers = dict(viewer.client.headers)
        with httpx.Client(base_url=viewer.base, headers=headers, timeout=30) as client:
            start.wait()
            answer = client.put(URL, json={"text": f"// writer {n}\n", "baseVersion": base})
            statuses[n] = answer.status_code

    threads = [threading.Thread(target=put, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [n for n, status in statuses.items() if status == 200]
    assert len(winners) == 1, statuses
    assert sorted(statuses.values()) == [200] + [409] * 5
    assert (viewer.root / SMOKE).read_text() == f"// writer {winners[0]}\n"
