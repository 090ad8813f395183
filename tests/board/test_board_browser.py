"""The public board as headless Chromium renders it from a real HTTP server on 127.0.0.1.

The ledger is tests/signer/world.py's (`jurat run` with sim judges: accepts, a reject, an
escalation and its adjudication, SHIP / WARN / BLOCK, a superseded review). Checked in the
browser: one row per receipt, honest failures beside passes, a receipt, its proof, the
checkpoint and the keys downloaded by clicking the page's links verify with the `jurat
verify` command printed beside the receipt (and the openssl recipe printed under it), and
the page requests nothing outside its own origin.
"""

from __future__ import annotations

import functools
import http.server
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurat.ledger import open_ledger
from tests.report.browser import CHROMIUM, CHROMIUM_ARGS
from tests.signer.world import World, build_world, jurat


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("world"))


@pytest.fixture(scope="module")
def board(world: World) -> Path:
    out = world.root / "board"
    done = jurat("board", world.url, "--out", str(out), "--key", str(world.pub),
                 cwd=world.root, check_codes=(0,))
    assert "13 signed verdicts, 13 with an inclusion proof" in done.stdout, done.stdout
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.fixture
def served(board: Path) -> Iterator[str]:
    """The board directory over HTTP on 127.0.0.1 (a real server, an ephemeral port)."""
    handler = functools.partial(_Quiet, directory=str(board))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _receipts_in(world: World) -> int:
    with open_ledger(world.url, create=False) as ledger:
        return sum(1 for _ in ledger.receipts())


def test_the_board_renders_downloads_verify_and_stays_on_its_origin(
    world: World, served: str, tmp_path: Path
) -> None:
    if not CHROMIUM.exists():
        pytest.fail(f"Debian's chromium is not installed at {CHROMIUM}")
    from playwright.sync_api import Route, sync_playwright

    requested: list[str] = []

    def route(r: Route) -> None:
        requested.append(r.request.url)
        if r.request.url.startswith(served + "/"):
            r.continue_()
        else:
            r.abort()

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            context = browser.new_context(accept_downloads=True)
            context.route("**/*", route)
            page = context.new_page()
            page.goto(served + "/index.html", wait_until="load")
            # The table renders: one row per receipt, failing grades beside passes.
            rows = page.locator("table#verdicts tbody tr.verdict")
            assert rows.count() == _receipts_in(world) == 13
            outcomes = set(rows.evaluate_all("rs => rs.map(r => r.dataset.outcome)"))
            assert {"accept", "reject", "escalate", "SHIP", "WARN", "BLOCK"} <= outcomes
            assert page.locator("tr.verdict.superseded[data-artifact='sup']").count() == 1
            box = page.locator("table#verdicts").bounding_box()
            assert box is not None and box["width"] > 600 and box["height"] > 300
            # Why, as codes: a rubric reject under its threshold, a criteria BLOCK by its
            # criterion; no gate failed in this world, and the summary says so.
            bad = page.locator("tr.verdict.current[data-artifact='bad'] td.reasons")
            assert bad.locator("li.reason[data-code='below_threshold']").count() == 1
            block = page.locator("tr.verdict.current[data-artifact='block'] td.reasons")
            assert block.locator("li.reason[data-code='criterion_not_passed']").count() >= 1
            assert "No gate failures" in page.locator("#gate-failures").inner_text()
            # The adjudication: what the panel said, who decided otherwise and when; the
            # rationale stays private (bob did not publish it).
            note = page.locator("tr.verdict.current[data-artifact='esc2'] p.adjudication")
            assert "adjudicated: accept by bob at " in note.inner_text()
            assert page.locator("tr.verdict.current[data-artifact='esc2'] "
                                "p.rationale.private").count() == 1
            assert "the panel was too small" not in page.content()
            # Download the esc2 adjudicated accept's files by clicking, as a stranger would.
            row = page.locator("tr.verdict.current[data-artifact='esc2']")
            for link in (row.locator("a.receipt"), row.locator("a.proof"),
                         page.locator("a#checkpoint"), page.locator("a#public-key"),
                         page.locator("a#log-key"), page.locator("a#openssl-script")):
                with page.expect_download() as info:
                    link.click()
                info.value.save_as(downloads / info.value.suggested_filename)
            command = row.locator("code.verify-jurat").inner_text()
            openssl = row.locator("code.verify-openssl").text_content() or ""
        finally:
            browser.close()
    name = command.split()[2]
    assert (downloads / name).exists() and (downloads / f"{name}.proof.json").exists()
    assert command == (f"jurat verify {name} --key jurat.pub --checkpoint checkpoint.txt "
                       "--log-key jurat-log.pub")
    argv = shlex.split(command)
    assert argv[0] == "jurat"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "empty-config")}
    done = subprocess.run([sys.executable, "-m", "jurat", *argv[1:]], cwd=downloads, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8. ok   check inclusion proof" in done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith("verified: accept")
    if shutil.which("jq") and shutil.which("openssl"):
        ran = subprocess.run(shlex.split(openssl), cwd=downloads, capture_output=True,
                             text=True, timeout=60)
        assert ran.returncode == 0 and "Verified OK" in ran.stdout, ran.stdout + ran.stderr
    # Nothing but the page's own origin was asked for.
    assert requested and all(url.startswith(served + "/") for url in requested), requested


def test_a_tampered_download_does_not_verify(world: World, board: Path, tmp_path: Path) -> None:
    files = board / "files"
    name = next(p.name for p in files.glob("settle-rubric.ok1.*.sigstore.json"))
    for extra in (f"{name}.proof.json", "checkpoint.txt", "jurat.pub", "jurat-log.pub"):
        shutil.copy(files / extra, tmp_path / extra)
    data = (files / name).read_bytes().replace(b'"sig":"M', b'"sig":"N', 1)
    (tmp_path / name).write_bytes(data)
    done = jurat("verify", name, "--key", "jurat.pub", "--checkpoint", "checkpoint.txt",
                 "--log-key", "jurat-log.pub", cwd=tmp_path)
    assert done.returncode == 1


def test_the_page_fetches_nothing_by_construction(board: Path) -> None:
    html = (board / "index.html").read_text()
    assert "default-src 'none'" in html
    for needle in ("<script", "http://", "https://", "src=", "@import", "url("):
        assert needle not in html, needle


def test_the_report_shows_the_adjudication_and_the_operator_its_rationale(
    world: World, tmp_path: Path
) -> None:
    """The HTML report of the same ledger in Chromium: the adjudicated verdict says what the
    panel said, who decided otherwise and when, and keeps the unpublished rationale off the
    page; the operator section (``--operator``) lists it, marked private (issue 29)."""
    if not CHROMIUM.exists():
        pytest.fail(f"Debian's chromium is not installed at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    shown, operator = tmp_path / "report.html", tmp_path / "operator.html"
    for page_path, extra in ((shown, ()), (operator, ("--operator",))):
        done = jurat("report", world.url, "--html", str(page_path), *extra, cwd=world.root,
                     check_codes=(0,))
        assert "report:" in done.stderr, done.stderr
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            page = browser.new_page()
            page.goto(shown.as_uri(), wait_until="load")
            row = page.locator("tr.decision.current[data-artifact='esc2']")
            assert "adjudicated: accept by bob at " in row.locator("p.adjudication").inner_text()
            assert row.locator("p.rationale.private").count() == 1
            assert "the panel was too small" not in page.content()
            page.goto(operator.as_uri(), wait_until="load")
            table = page.locator("table#operator-adjudications")
            assert table.locator("tr[data-public='no']").count() == 1
            assert "the panel was too small" in table.inner_text()
        finally:
            browser.close()
