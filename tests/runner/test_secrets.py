"""Secrets (runner.md §5): masking values and their encoded forms, and ``env()``.

A secret-named ``.env`` key is masked from the moment the file is loaded; a process
variable only once a scenario reads it; ``PWD`` never.
"""

import base64
import json
import threading
import time
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from runner.project.secrets import (
    MASK,
    MASK_MARGIN,
    EnvSecrets,
    RunEnvironment,
    SecretMasker,
    cut_masked,
)


def masker_with(*values: str) -> SecretMasker:
    masker = SecretMasker()
    for value in values:
        masker.add(value)
    return masker


# --- SecretMasker -------------------------------------------------------------------


def test_mask_is_eight_stars() -> None:
    assert MASK == "********"


def test_raw_value_is_masked_everywhere() -> None:
    masker = masker_with("s3cr3t-pass")
    assert masker.mask("login with s3cr3t-pass") == f"login with {MASK}"
    assert masker.mask("s3cr3t-passs3cr3t-pass and s3cr3t-pass") == f"{MASK}{MASK} and {MASK}"


@pytest.mark.parametrize(
    "encode",
    [
        lambda b: base64.b64encode(b).decode(),
        lambda b: base64.b64encode(b).decode().rstrip("="),
        lambda b: base64.urlsafe_b64encode(b).decode(),
        lambda b: base64.urlsafe_b64encode(b).decode().rstrip("="),
    ],
    ids=["standard", "standard-unpadded", "urlsafe", "urlsafe-unpadded"],
)
def test_base64_forms_are_masked(encode: object) -> None:
    secret = "p>s?w~rd\u00e9!"  # '+' in standard Base64, '-' in URL-safe, one '=' of padding
    encoded = encode(secret.encode("utf-8"))  # type: ignore[operator]
    assert encoded != secret
    masker = masker_with(secret)
    assert masker.mask(f"header: {encoded};") == f"header: {MASK};"


def test_the_four_base64_variants_differ_for_this_secret() -> None:
    raw = "p>s?w~rd\u00e9!".encode()
    forms = {
        base64.b64encode(raw).decode(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    }
    assert len(forms) == 4
    assert forms <= masker_with(raw.decode()).forms


@pytest.mark.parametrize("user", ["a:", "ab:", "abc:", "alice:"])
def test_a_secret_inside_a_longer_base64_text_is_masked(user: str) -> None:
    secret = "correct-horse-battery"
    basic = base64.b64encode(f"{user}{secret}".encode()).decode()
    masked = masker_with(secret).mask(f"Authorization: Basic {basic}")
    assert MASK in masked
    # What is left of the encoding cannot hold more than a couple of the secret's bytes.
    left = masked.split("Basic ")[1].replace(MASK, "")
    assert len(left) <= len(base64.b64encode(user.encode())) + 4


@pytest.mark.parametrize(
    "encoded",
    [
        quote("p@ss word/&=+", safe=""),
        quote_plus("p@ss word/&=+"),
        quote("p@ss word/&=+", safe="").lower(),
    ],
    ids=["quote", "quote_plus", "lowercase-hex"],
)
def test_url_encoded_forms_are_masked(encoded: str) -> None:
    masker = masker_with("p@ss word/&=+")
    assert masker.mask(f"https://x.test/login?pw={encoded}&next=/") == (
        f"https://x.test/login?pw={MASK}&next=/"
    )


def test_javascript_encode_uri_component_form_is_masked() -> None:
    # encodeURIComponent leaves ! ' ( ) * unescaped, unlike Python's quote(safe="").
    secret = "a b!c'd(e)f*g"
    masker = masker_with(secret)
    assert masker.mask("?q=a%20b!c'd(e)f*g") == f"?q={MASK}"
    assert masker.mask(f"?q={quote(secret, safe='')}") == f"?q={MASK}"


def test_json_escaped_form_is_masked() -> None:
    secret = 'quote"back\\slash'
    masker = masker_with(secret)
    assert masker.mask('{"password": "quote\\"back\\\\slash"}') == f'{{"password": "{MASK}"}}'


def test_only_forms_that_differ_and_are_long_enough_are_registered() -> None:
    masker = masker_with("abcd")
    assert "abcd" in masker.forms
    assert all(len(form) >= 4 for form in masker.forms)
    # URL-encoding "abcd" changes nothing: no extra form for it.
    assert quote("abcd", safe="") == "abcd"


@pytest.mark.parametrize("value", ["", "a", "ab", "abc"])
def test_short_values_are_ignored(value: str) -> None:
    masker = masker_with(value)
    assert not masker
    assert masker.values == ()
    assert masker.mask(f"x{value}y abc") == f"x{value}y abc"


def test_four_characters_are_masked() -> None:
    assert masker_with("abcd").mask("xabcdx") == f"x{MASK}x"


def test_overlapping_secrets_longer_first() -> None:
    masker = masker_with("pass", "password123")
    assert masker.mask("password123") == MASK
    assert masker.mask("password1234 pass") == f"{MASK}4 {MASK}"
    masker = masker_with("password123", "pass")  # order of registration does not matter
    assert masker.mask("password123") == MASK


def test_overlapping_occurrences_leave_no_fragment() -> None:
    masker = masker_with("abcdef", "defghi")
    assert masker.mask("xabcdefghiy") == f"x{MASK}y"
    masker = masker_with("aaaab", "baaaa")
    assert masker.mask("aaaabaaaa") == MASK


def test_a_value_added_later_is_masked_afterwards() -> None:
    masker = masker_with("first-secret")
    assert masker.mask("second-secret") == "second-secret"
    masker.add("second-secret")
    assert masker.mask("first-secret second-secret") == f"{MASK} {MASK}"


def test_regex_characters_are_literal() -> None:
    masker = masker_with("a.b*c(d)")
    assert masker.mask("axbbbcd a.b*c(d)") == f"axbbbcd {MASK}"


def test_values_and_bool() -> None:
    masker = SecretMasker()
    assert not masker
    assert len(masker.values) == 0
    masker.add("one-secret")
    masker.add("two-secret")
    masker.add("one-secret")
    assert masker
    assert list(masker.values) == ["one-secret", "two-secret"]


def test_no_secret_fast_path_returns_the_same_text() -> None:
    masker = SecretMasker()
    text = "x" * 1_000_000
    assert masker.mask(text) is text
    data = {"a": ["b", {"c": "d"}]}
    assert masker.mask_data(data) is data


def test_no_match_returns_the_same_text() -> None:
    masker = masker_with("hunter2!")
    text = "nothing to hide here " * 1000
    assert masker.mask(text) is text


def test_masking_a_large_text_is_fast() -> None:
    masker = masker_with(*(f"secret-value-{i:03}" for i in range(50)))
    text = "lorem ipsum dolor sit amet " * 40_000  # ~1 MB
    started = time.perf_counter()
    assert masker.mask(text) == text
    assert time.perf_counter() - started < 2.0


def test_mask_data_on_nested_data() -> None:
    masker = masker_with("tok-12345")
    data = {
        "url": "https://x.test/?t=tok-12345",
        "tok-12345": "as a key",
        "nested": [{"vars": ("tok-12345", 7, None, True, 1.5)}, ["deep", ["tok-12345!"]]],
        "count": 3,
    }
    assert masker.mask_data(data) == {
        "url": f"https://x.test/?t={MASK}",
        MASK: "as a key",
        "nested": [{"vars": (MASK, 7, None, True, 1.5)}, ["deep", [f"{MASK}!"]]],
        "count": 3,
    }
    assert data["url"] == "https://x.test/?t=tok-12345"  # the original is untouched


def test_mask_data_survives_a_cycle() -> None:
    masker = masker_with("tok-12345")
    cyclic: list[object] = ["tok-12345"]
    cyclic.append(cyclic)
    assert masker.mask_data(cyclic) == [MASK, "[Circular]"]


def test_shared_but_acyclic_data_is_masked_each_time() -> None:
    masker = masker_with("tok-12345")
    shared = ["tok-12345"]
    assert masker.mask_data([shared, shared]) == [[MASK], [MASK]]


def test_concurrent_add_and_mask() -> None:
    masker = SecretMasker()
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                masker.mask("value-0000 value-0199 some text")
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    for i in range(200):
        masker.add(f"value-{i:04}")
    stop.set()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(masker.values) == 200
    assert masker.mask("value-0000 value-0199") == f"{MASK} {MASK}"


# --- RunEnvironment -----------------------------------------------------------------


@pytest.fixture
def dotenv(tmp_path: Path) -> Path:
    folder = tmp_path / "unotest"
    folder.mkdir()
    return folder / ".env"


def environment(
    dotenv: Path, text: str | None = None, **process: str
) -> tuple[RunEnvironment, SecretMasker]:
    if text is not None:
        dotenv.write_text(text, encoding="utf-8")
    masker = SecretMasker()
    return RunEnvironment(process, dotenv, masker), masker


def test_process_env_wins_over_dotenv(dotenv: Path) -> None:
    env, _ = environment(dotenv, "BASE=from-file\nONLY_FILE=file\n", BASE="from-process")
    assert env.get("BASE") == "from-process"
    assert env.get("ONLY_FILE") == "file"
    assert env.get("MISSING") is None


def test_an_empty_process_value_still_wins(dotenv: Path) -> None:
    env, _ = environment(dotenv, "BASE=from-file\n", BASE="")
    assert env.get("BASE") == ""


def test_a_missing_dotenv_is_fine(dotenv: Path) -> None:
    env, masker = environment(dotenv, None, USER_NAME="me")
    assert env.get("USER_NAME") == "me"
    assert env.warnings == []
    assert not masker


def test_secret_named_dotenv_keys_are_masked_at_load(dotenv: Path) -> None:
    env, masker = environment(
        dotenv,
        "API_TOKEN=tok-abcdef\ndb_password=hunter2hunter2\nSessionId=sess-9999\nUSER=alice-smith\n",
    )
    assert set(masker.values) == {"tok-abcdef", "hunter2hunter2", "sess-9999"}
    assert masker.mask("tok-abcdef hunter2hunter2 sess-9999 alice-smith") == (
        f"{MASK} {MASK} {MASK} alice-smith"
    )
    assert env.secret_names() == ["API_TOKEN", "SessionId", "db_password"]


def test_non_secret_dotenv_keys_are_not_masked(dotenv: Path) -> None:
    env, masker = environment(dotenv, "BASE_URL=http://localhost:3000\nUSERNAME=alice\n")
    assert not masker
    assert env.get("BASE_URL") == "http://localhost:3000"
    assert not masker
    assert env.secret_names() == []


def test_pwd_is_not_secret(dotenv: Path) -> None:
    env, masker = environment(dotenv, "PWD=/home/alice/project\n", PWD="/home/alice/project")
    assert env.get("PWD") == "/home/alice/project"
    assert not masker
    assert env.secret_names() == []


def test_a_process_secret_is_masked_only_after_it_is_read(dotenv: Path) -> None:
    env, masker = environment(dotenv, "", GITHUB_TOKEN="ghp_abcdef123456", HOME="/home/me")
    assert masker.mask("ghp_abcdef123456") == "ghp_abcdef123456"
    assert env.secret_names() == []
    assert env.get("GITHUB_TOKEN") == "ghp_abcdef123456"
    assert masker.mask("ghp_abcdef123456") == MASK
    assert env.secret_names() == ["GITHUB_TOKEN"]
    env.get("HOME")
    assert masker.values == ("ghp_abcdef123456",)


def test_a_process_secret_overriding_the_file_is_masked_when_read(dotenv: Path) -> None:
    env, masker = environment(dotenv, "API_KEY=file-key-1\n", API_KEY="process-key-2")
    assert masker.values == ("file-key-1",)
    assert env.get("API_KEY") == "process-key-2"
    assert set(masker.values) == {"file-key-1", "process-key-2"}


def test_a_line_without_equals_warns_and_does_not_crash(dotenv: Path) -> None:
    env, masker = environment(
        dotenv, "GOOD=1\nJUSTAKEY\nthis is not a line\nSECRET_X=abcdef\n", JUSTAKEY="p"
    )
    assert env.get("GOOD") == "1"
    assert env.get("SECRET_X") == "abcdef"
    assert env.get("JUSTAKEY") == "p"
    assert len(env.warnings) == 2
    assert env.warnings[0].startswith("unotest/.env:2: ")
    assert env.warnings[1].startswith("unotest/.env:3: ")
    assert all(w.endswith("ignored") for w in env.warnings)
    # The content of an unparsable line is not echoed: it may be a pasted secret.
    assert "this is not a line" not in " ".join(env.warnings)
    assert masker.values == ("abcdef",)


def test_a_key_without_value_is_not_set(dotenv: Path) -> None:
    env, _ = environment(dotenv, "EMPTY=\nNOVALUE\n")
    assert env.get("EMPTY") == ""
    assert env.get("NOVALUE") is None


def test_export_lines(dotenv: Path) -> None:
    env, masker = environment(dotenv, "export BASE=http://a\nexport AUTH_HEADER='Bearer xyz123'\n")
    assert env.get("BASE") == "http://a"
    assert env.get("AUTH_HEADER") == "Bearer xyz123"
    assert masker.values == ("Bearer xyz123",)
    assert env.warnings == []


def test_no_interpolation(dotenv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME_SECRET", "leaked")
    env, _ = environment(dotenv, "A=one\nB=${A}-${HOME_SECRET}\n")
    assert env.get("B") == "${A}-${HOME_SECRET}"


def test_quotes_comments_and_escapes(dotenv: Path) -> None:
    env, masker = environment(
        dotenv,
        "# a comment\n\nA='single # not a comment'\nB=\"two\\nlines\"\nC=plain # comment\n"
        'PASSWORD="with spaces and #hash"\n',
    )
    assert env.get("A") == "single # not a comment"
    assert env.get("B") == "two\nlines"
    assert env.get("C") == "plain"
    assert masker.values == ("with spaces and #hash",)
    assert env.warnings == []


def test_the_last_repeated_key_wins(dotenv: Path) -> None:
    env, _ = environment(dotenv, "A=1\nA=2\n")
    assert env.get("A") == "2"


def test_a_non_utf8_dotenv_warns(dotenv: Path) -> None:
    dotenv.write_bytes(b"A=1\nPASSWORD=caf\xe9\n")
    env, masker = environment(dotenv)
    assert env.get("A") is None
    assert len(env.warnings) == 1
    assert env.warnings[0].startswith("unotest/.env:2: ")
    assert "ignored" in env.warnings[0]
    assert not masker


def test_an_unreadable_dotenv_warns(dotenv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dotenv.write_text("A=1\n", encoding="utf-8")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    env, _ = environment(dotenv)
    assert env.get("A") is None
    assert len(env.warnings) == 1
    assert "Permission denied" in env.warnings[0]
    assert env.warnings[0].startswith("unotest/.env: ")


def test_a_directory_named_dotenv_warns(dotenv: Path) -> None:
    dotenv.mkdir()
    env, _ = environment(dotenv)
    assert len(env.warnings) == 1
    assert "ignored" in env.warnings[0]


def test_dotenv_parse_problems_do_not_reach_stderr(
    dotenv: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    environment(dotenv, "not a line at all\n")
    captured = capfd.readouterr()
    assert "python-dotenv" not in captured.err


def test_short_dotenv_secrets_are_not_masked(dotenv: Path) -> None:
    env, masker = environment(dotenv, "API_KEY=abc\n")
    assert env.get("API_KEY") == "abc"
    assert not masker
    assert env.secret_names() == ["API_KEY"]


def test_cut_masked_never_keeps_the_start_of_a_secret_even_when_masking_shrinks() -> None:
    """Masking shrinks text (each secret becomes 8 characters), so the masked head of a
    value full of secrets can end before the cut; a secret straddling the head's end
    must still not leave its first characters, and a recorder's truncated head must
    never keep its tail."""
    masker = SecretMasker()
    secret = "S3CRET-" + "x" * 93
    masker.add(secret)
    crowded = json.dumps([{"t": secret}] * 400)
    cut = cut_masked(crowded, 4096, masker.mask)
    assert "S3CRET" not in cut and len(cut) == 4096 and cut.endswith("…")
    for offset in range(0, 9000, 7):
        text = "a" * offset + secret + "b" * 50
        for limit in (100, 200, 4096):
            assert "S3CRET" not in cut_masked(text, limit, masker.mask)
            head = text[: limit + MASK_MARGIN]
            kept = cut_masked(head, limit, masker.mask, truncated=True)
            assert "S3CRET" not in kept and len(kept) <= limit and kept.endswith("…")
    assert cut_masked("short", 10, masker.mask) == "short"


def test_env_secrets_follow_the_env_file_and_leave_the_process_environment_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A viewer masks what it serves with the project's ``.env`` secrets as they are
    now: one added or changed while it runs is masked from then on; its own process
    environment is not the runs' and is left out."""
    monkeypatch.setenv("VIEWER_ONLY_TOKEN", "not-from-the-project")
    env = tmp_path / "unotest" / ".env"
    env.parent.mkdir()
    secrets = EnvSecrets(tmp_path)
    assert secrets.masker().mask("s3cr3t-one") == "s3cr3t-one"  # no .env yet
    env.write_text("API_TOKEN=s3cr3t-one\n")
    masker = secrets.masker()
    assert masker.mask("a s3cr3t-one b") == f"a {MASK} b"
    assert secrets.masker() is masker  # unchanged: not read again
    env.write_text("API_TOKEN=s3cr3t-two-longer\n")
    assert secrets.masker().mask("s3cr3t-two-longer") == MASK
    assert secrets.masker().mask("not-from-the-project") == "not-from-the-project"
