"""The page in a real browser: Debian's chromium driven by Playwright (no browser download).

It opens the page with the printed token, checks the timeline of a compressed session, presses
Compress and waits for the update to arrive over the event stream (the button itself does not
reload the timeline), sees an outside change arrive live, presses Clear and reads the rows.
Clear, Undo and Forget each ask first, naming what goes: the tests meet each dialog, cancel
(nothing changes), then accept.
Screenshots go to ``$AALIS_SCREENSHOT_DIR`` (docs/host/img when refreshing the docs) or to
the test's temporary directory.

Without chromium the test is skipped on a developer machine and fails under CI (``CI`` set),
since CI installs it (.ci/run).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aalis_api_memory import compression, memory
from aalis_plugin_serve.testing import Served
from aalis_schema_message import Message

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
XSS = '<img src=x onerror="window.__xss = 1"><script>window.__xss = 2</script>'


def chromium() -> str:
    path = os.environ.get("AALIS_CHROMIUM") or shutil.which("chromium")
    if path is None:
        message = "chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
async def page(tmp_path: Path) -> AsyncIterator[Any]:
    executable = chromium()
    playwright_api = pytest.importorskip("playwright.async_api")
    async with playwright_api.async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        context = await browser.new_context(viewport={"width": 1200, "height": 820})
        page = await context.new_page()
        page.set_default_timeout(15_000)
        try:
            yield page
        finally:
            await browser.close()


async def answer_next_dialog(page: Any, *, accept: bool) -> list[str]:
    """Answer the next confirm() of the page; the list receives its question."""
    questions: list[str] = []

    async def answer(dialog: Any) -> None:
        questions.append(dialog.message)
        if accept:
            await dialog.accept()
        else:
            await dialog.dismiss()

    page.once("dialog", answer)
    return questions


def shots(tmp_path: Path) -> Path:
    target = Path(os.environ.get("AALIS_SCREENSHOT_DIR") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    return target


def turns(start: int, count: int) -> list[tuple[str, str]]:
    pairs = []
    for index in range(start, start + count):
        pairs.append(
            (
                "user",
                f"Day {index}: we land in Lisbon at {9 + index % 8}:00, budget {index * 50} EUR.",
            )
        )
        pairs.append(("assistant", f"Noted for day {index}."))
    return pairs


async def test_timeline_compress_live_update_and_clear(
    served: Served, page: Any, tmp_path: Path
) -> None:
    await served.save("trip", *turns(1, 8), start=1_700_000_000_000, step=60_000)
    await served.host.capability(compression).use.compress("trip")
    await served.save("trip", ("user", XSS), *turns(9, 2), start=1_700_001_000_000, step=60_000)
    await served.save("other", ("user", "another session"), start=1_600_000_000_000)
    out = shots(tmp_path)

    await page.goto(f"{served.url}/?token={served.token}")
    assert page.url == f"{served.url}/"  # the token went into a cookie, out of the address
    await page.wait_for_selector("#live:not(.off)")
    await page.click('#sessions button[data-session="trip"]')
    await page.wait_for_selector("#timeline li.summarised")
    # Only the conversation itself is preselected for a clear.
    checked = await page.locator("#clear-types input:checked").evaluate_all(
        "inputs => inputs.map(i => i.value)"
    )
    assert checked == ["context"]
    # Nobody is named in this session's messages: no Forget control.
    assert not await page.locator("#persons").is_visible()
    assert await page.locator("#timeline li.divider").count() == 1
    assert await page.locator("#timeline li.active").count() >= 5
    summary = await page.locator("#summary-text").text_content()
    assert summary
    assert summary != "(no summary)"
    # Stored text is shown as text, never run as markup.
    assert await page.locator("#timeline img, #timeline script").count() == 0
    assert await page.evaluate("window.__xss") is None
    assert await page.get_by_text(XSS).count() == 1
    await page.screenshot(path=str(out / "serve-timeline.png"), full_page=True)

    # Compress: the page learns of the new divider from the event stream only.
    await page.click("#compress")
    await page.locator("#timeline li.divider").nth(1).wait_for()
    assert await page.locator("#timeline li.divider").count() == 2
    await page.wait_for_selector("#rows strong:text-is('Compressed')")

    # A change made elsewhere (here: by the host) arrives live too.
    await served.save(
        "trip", ("user", "a message saved while the page is open"), start=1_700_002_000_000
    )
    await served.host.emit("history_changed", session_id="trip")
    await page.wait_for_selector("text=a message saved while the page is open")
    await page.screenshot(path=str(out / "serve-compressed.png"), full_page=True)

    # Clear asks first, naming the session and the types; cancelled, nothing goes.
    await page.check('#clear-types input[value="summary"]')
    items = await page.locator("#timeline li").count()
    questions = await answer_next_dialog(page, accept=False)
    await page.click("#clear")
    await page.wait_for_selector("#rows strong:text-is('Clear cancelled: nothing was removed')")
    assert len(questions) == 1
    assert '"trip"' in questions[0]
    assert "(context)" in questions[0]
    assert "(summary)" in questions[0]
    assert await page.locator("#timeline li").count() == items
    assert await served.host.capability(memory).use.get_history("trip", 5)

    questions = await answer_next_dialog(page, accept=True)
    await page.click("#clear")
    await page.wait_for_selector("#rows strong:text-is('Cleared')")
    assert len(questions) == 1
    rows = await page.locator("#rows .row").all_text_contents()
    assert any(row.startswith("ok context") for row in rows), rows
    assert any(row.startswith("ok summary") for row in rows), rows
    await page.wait_for_selector("#counts:has-text('no session')")
    assert await page.locator('#sessions button[data-session="trip"]').count() == 0
    assert await page.locator('#sessions button[data-session="other"]').count() == 1
    await page.screenshot(path=str(out / "serve-cleared.png"), full_page=True)


async def test_undo_and_forget_ask_first_and_name_what_goes(
    served: Served, page: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = served.host.capability(memory).use
    alice = {"platform": "cli", "user_id": "alice"}
    for ts, role, text in [
        (1_700_000_000_000, "user", "first question about Porto"),
        (1_700_000_060_000, "assistant", "first answer"),
        (1_700_000_120_000, "user", "second question about Faro"),
        (1_700_000_180_000, "assistant", "second answer"),
    ]:
        meta = alice if role == "user" else {"platform": "cli"}
        await store.save_message(
            "dm", Message(role=role, content=text, timestamp=ts, metadata=meta)
        )
    out = shots(tmp_path)

    await page.goto(f"{served.url}/?token={served.token}")
    await page.wait_for_selector("#live:not(.off)")
    await page.click('#sessions button[data-session="dm"]')
    await page.wait_for_selector("#timeline li.active")
    forget = page.locator('#person-list button[data-person="cli:alice"]')
    await forget.wait_for()
    assert await forget.text_content() == "Forget cli:alice…"

    # Undo names the session and the messages that go; cancelled, nothing goes.
    questions = await answer_next_dialog(page, accept=False)
    await page.click("#undo")
    await page.wait_for_selector("#rows strong:text-is('Undo cancelled: nothing was removed')")
    assert '"dm"' in questions[0]
    assert "user: second question about Faro" in questions[0]
    assert "assistant: second answer" in questions[0]
    assert "first" not in questions[0]
    assert len(await store.get_history("dm", 10)) == 4

    questions = await answer_next_dialog(page, accept=True)
    await page.click("#undo")
    await page.wait_for_selector("#rows strong:text-is('Undone')")
    await page.wait_for_selector("text=second question about Faro", state="detached")
    assert [m.content for m in await store.get_history("dm", 10)] == [
        "first question about Porto",
        "first answer",
    ]
    await page.screenshot(path=str(out / "serve-undone.png"), full_page=True)

    # Forget names the person; cancelled, nothing goes; accepted, the person is gone from
    # every layer and the page shows a row per layer.
    questions = await answer_next_dialog(page, accept=False)
    await forget.click()
    await page.wait_for_selector("#rows strong:text-is('Forget cancelled: nothing was removed')")
    assert questions[0].startswith("Forget cli:alice everywhere?")
    questions = await answer_next_dialog(page, accept=True)
    await forget.click()
    await page.wait_for_selector("#rows strong:text-is('Forgotten: cli:alice')")
    rows = await page.locator("#rows .row").all_text_contents()
    assert any(row.startswith("ok ") and "[memory]" in row for row in rows), rows
    assert await store.get_history("dm", 10) == []


async def test_the_facts_panel_shows_history_edits_and_retracts(
    served: Served, page: Any, tmp_path: Path
) -> None:
    from aalis_schema_message import new_message_id

    store = served.host.capability(memory).use
    ada = {"platform": "cli", "user_id": "ada"}
    for ts, text in [
        (1_700_000_000_000, "I live in Paris."),
        (1_700_000_060_000, "I moved to Berlin."),
    ]:
        message = Message(
            id=new_message_id(), role="user", content=text, timestamp=ts, metadata=ada
        )
        await store.save_message("me", message)
        await served.host.emit("memory_messages_saved", session_id="me", messages=[message])
    deriver = served.host.plugin("user-relation").active()[0]  # type: ignore[union-attr]
    assert await deriver.settle(5.0)

    await page.goto(f"{served.url}/?token={served.token}")
    await page.click('#sessions button[data-session="me"]')
    await page.wait_for_selector("#facts-box:not([hidden])")
    facts = page.locator("#facts li.fact")
    assert await facts.count() == 2
    old = (await facts.nth(0).text_content()) or ""
    assert old.startswith("city: Paris")
    assert "superseded" in old
    assert "Edit" not in old  # a superseded fact is history: nothing to edit
    current = (await facts.nth(1).text_content()) or ""
    assert current.startswith("city: Berlin")
    assert "current since" in current

    # Edit: the typed value supersedes Berlin, which stays in the history.
    async def type_munich(dialog: Any) -> None:
        await dialog.accept("Munich")

    page.once("dialog", type_munich)
    await facts.nth(1).locator("button", has_text="Edit").click()
    await page.wait_for_selector("#facts li.fact:has-text('city: Munich')")
    assert await page.locator("#facts li.fact").count() == 3

    # Retract asks first; cancelled, nothing goes; accepted, Berlin is current again.
    munich = page.locator("#facts li.fact:has-text('city: Munich')")
    questions = await answer_next_dialog(page, accept=False)
    await munich.locator("button", has_text="Retract").click()
    await page.wait_for_timeout(300)
    assert questions[0].startswith("Retract city: Munich?")
    assert await page.locator("#facts li.fact").count() == 3
    await answer_next_dialog(page, accept=True)
    await munich.locator("button", has_text="Retract").click()
    await page.wait_for_selector("#facts li.fact:has-text('city: Munich')", state="detached")
    berlin = (await page.locator("#facts li.fact:has-text('city: Berlin')").text_content()) or ""
    assert "current since" in berlin
    await page.screenshot(path=str(shots(tmp_path) / "serve-facts.png"), full_page=True)
