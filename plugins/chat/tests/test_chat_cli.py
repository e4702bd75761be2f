"""``aalis chat --script`` end to end: a real ``aalis`` process in a temporary directory."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

STAND_IN = "[offline stand-in, not a language model"


def script(tmp_path: Path, name: str, *lines: str) -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return name


def test_chat_on_the_embedded_default(
    tmp_path: Path, aalis: Callable[..., Any], sqlite_text: Callable[[Path], str]
) -> None:
    first = script(
        tmp_path,
        "first.txt",
        "I plan a trip to Lisbon in May.",
        "What budget do I need for Lisbon?",
        "/history",
        "/compress",
        "/history",
        "Book a hotel near the river.",
        "/clear -t summary",
        "/history",
    )
    run = aalis("chat", "--script", first)
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    # the banner names the store the conversation is written to
    assert out[0].startswith("chat in session 'cli' with stand-in, history in memory-sqlite (")
    assert out[0].endswith("aalis.db); /help for commands")

    replies = [line for line in out if line.startswith("assistant> ")]
    # three turns answered, each reply saying it is a stand-in, then three /history echoes
    turns = [line for line in replies if "You said" in line]
    assert all(STAND_IN in line for line in replies)
    assert 'You said: "I plan a trip to Lisbon in May."' in turns[0]
    assert 'You said: "Book a hotel near the river."' in turns[-1]

    # /history before the compression: the four messages
    first_history = out[out.index("you> /history") + 1 : out.index("you> /compress")]
    assert [line.split("> ", 1)[0] for line in first_history] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert first_history[0] == "user> I plan a trip to Lisbon in May."
    # /compress with the extractive summariser (no llm configured)
    assert out[out.index("you> /compress") + 1] == (
        "compressed: 4 messages archived, 0 kept; summary by extractive"
    )
    # /history after: the summary, the divider, nothing else
    second = out.index("you> /history", out.index("you> /compress"))
    after = out[second + 1 : out.index("you> Book a hotel near the river.")]
    assert after[0] == "summary (extractive):"
    assert after[1] == (
        "  [Extractive summary: sentences quoted offline from the conversation, what the user"
        " said first; no model wrote it.]"
    )
    assert any("Lisbon" in line for line in after[2:-1])
    # the user's words, not the stand-in's notice and echo
    assert not any("stand-in" in line for line in after[2:-1])
    assert after[-1] == "-- [4 earlier messages compressed into the summary] --"
    # /clear -t summary: one row, the summary only
    assert (
        out[out.index("you> /clear -t summary") + 1]
        == "ok memory-summary [summary]: Summary cleared"
    )
    last = out[out.index("you> /clear -t summary") + 2 :]
    assert last[0] == "you> /history"
    assert last[1] == "-- [4 earlier messages compressed into the summary] --"
    assert last[2] == "user> Book a hotel near the river."
    assert last[3].startswith("assistant> " + STAND_IN)

    # the messages are in the SQLite file under .aalis/, archived ones included
    db = tmp_path / ".aalis" / "aalis.db"
    assert db.is_file()
    stored = sqlite_text(db)
    for text in (
        "I plan a trip to Lisbon in May.",
        "What budget do I need for Lisbon?",
        "Book a hotel near the river.",
    ):
        assert text in stored

    # a second process sees the same session; /clear clears every type, then nothing is left
    second_run = aalis(
        "chat", "--script", script(tmp_path, "second.txt", "/history", "/clear", "/history")
    )
    assert second_run.returncode == 0, second_run.stderr
    out = second_run.stdout.splitlines()
    assert "user> Book a hotel near the river." in out
    clear_rows = out[out.index("you> /clear") + 1 : len(out) - 2]  # up to the last "/history"
    assert out[-2] == "you> /history"
    assert all(row.startswith("ok ") for row in clear_rows)
    assert "ok memory [context]: conversation history cleared" in clear_rows
    assert "ok memory-summary [summary]: Summary cleared" in clear_rows
    assert out[-1] == "(no messages in session 'cli')"
    assert "Book a hotel near the river." not in sqlite_text(db)


def test_errors_are_one_line_and_fail_the_run(tmp_path: Path, aalis: Callable[..., Any]) -> None:
    run = aalis(
        "chat",
        "--session",
        "other",
        "--script",
        script(tmp_path, "s.txt", "/bogus", "/clear -t nope", "hello"),
    )
    assert run.returncode == 1
    errors = run.stderr.strip().splitlines()
    assert errors[0] == "error: unknown command /bogus; try /help"
    assert errors[1].startswith("error: unknown clear type(s): nope (known: ")
    assert "summary" in errors[1]
    assert "Traceback" not in run.stderr
    banner = run.stdout.splitlines()[0]
    assert banner.startswith("chat in session 'other' with stand-in, history in memory-sqlite (")
    assert any(line.startswith("assistant> " + STAND_IN) for line in run.stdout.splitlines())


def test_aalis_compress_command(tmp_path: Path, aalis: Callable[..., Any]) -> None:
    assert (
        aalis(
            "chat", "--script", script(tmp_path, "s.txt", "Remember the Lisbon budget.")
        ).returncode
        == 0
    )
    run = aalis("compress", "cli")
    assert run.returncode == 0, run.stderr
    assert re.fullmatch(
        r"Compressed session 'cli': 2 messages archived, 0 kept; summary by extractive "
        r"\(\d+ characters\)\.",
        run.stdout.strip(),
    )
    run = aalis("compress", "cli")
    assert run.stdout.strip() == "Nothing to compress in session 'cli'."
    assert aalis("compress", "nobody").stdout.strip() == "Nothing to compress in session 'nobody'."


def test_chat_with_a_configured_model(
    tmp_path: Path, aalis: Callable[..., Any], model_server: Any
) -> None:
    (tmp_path / "aalis.toml").write_text(
        textwrap.dedent(
            f"""
            [plugins.llm-openai]
            base_url = "{model_server.base_url}"
            model = "test-model"
            context_window = 4096

            [plugins.memory-summary]
            history_limit = 4
            """
        ),
        encoding="utf-8",
    )
    lines = ["I plan a trip to Lisbon.", "Which month is best?", "And the budget?"]
    run = aalis("chat", "--script", script(tmp_path, "s.txt", *lines))
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    assert out[0].startswith("chat in session 'cli' with llm-openai:test-model, history in ")
    replies = [line for line in out if line.startswith("assistant> ")]
    assert len(replies) == 3
    assert all(line.startswith("assistant> Model reply #") for line in replies)
    assert not any(STAND_IN in line for line in replies)

    # history_limit = 4: the token_usage after the second reply (4 messages) started an
    # automatic compression, summarised by the configured model
    summary_requests = [
        r for r in model_server.requests if "running summary" in r["messages"][0]["content"]
    ]
    assert len(summary_requests) >= 1
    history = aalis(
        "chat", "--script", script(tmp_path, "h.txt", "/history", "One more question.")
    ).stdout
    lines = history.splitlines()
    assert lines[1:3] == ["you> /history", "summary (llm-openai:test-model):"]
    assert lines[3] == "  The user plans a trip to Lisbon."
    # a prompt is the summary + the history after it
    chat_requests = [
        r for r in model_server.requests if "running summary" not in r["messages"][0]["content"]
    ]
    assert all(r["max_tokens"] == 1024 for r in chat_requests)
    last = chat_requests[-1]["messages"]
    assert last[1] == {
        "role": "system",
        "content": "Summary of the earlier conversation:\nThe user plans a trip to Lisbon.",
    }
    assert last[-1] == {"role": "user", "content": "One more question."}
    assert not any("compressed into the summary" in str(m["content"]) for m in last)


FACTS = {
    "Hi, my name is Ana Ribeiro.": "Ana Ribeiro",
    "I live in Porto.": "Porto",
    "I'm flying to Berlin on 14 March, flight TP572.": "TP572",
    "My budget is 1800 euros.": "1800 euros",
    "I'm allergic to peanuts.": "peanuts",
    "My phone number is +351 912 345 678.": "912 345 678",
    "The report is due Friday 21 March.": "21 March",
    "I prefer a window seat.": "window seat",
}
SMALL_TALK = ("Thanks!", "Haha ok.", "Sorry, I got distracted.", "Cool.")


def test_the_offline_summary_keeps_what_the_user_said(
    tmp_path: Path, aalis: Callable[..., Any]
) -> None:
    # The default host (stand-in replies, extractive summary, automatic compression at 50
    # messages) over about 30 turns: the summary the model would see keeps the user's facts,
    # not the stand-in's notice and echo.
    lines: list[str] = []
    for fact in FACTS:
        lines.append(fact)
        lines.extend(SMALL_TALK[: 2 + len(lines) % 3])
    lines += ["/compress", "/history"]
    run = aalis("chat", "--script", script(tmp_path, "facts.txt", *lines))
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    shown = out[out.index("you> /history") + 1 :]
    summary = shown[: next(i for i, line in enumerate(shown) if line.startswith("--"))]
    assert summary[0] == "summary (extractive):"
    text = "\n".join(summary)
    for fact, pattern in FACTS.items():
        assert pattern in text, f"{fact!r} is not in the summary:\n{text}"
    assert STAND_IN not in text
    assert "You said" not in text
    assert not any(f"- user: {talk}" in text for talk in SMALL_TALK)


def test_the_user_messages_name_the_os_login_as_the_person(
    tmp_path: Path,
    aalis: Callable[..., Any],
    sqlite_text: Callable[[Path], str],
    monkeypatch: Any,
) -> None:
    monkeypatch.setenv("LOGNAME", "login-of-the-test")
    run = aalis("chat", "--script", script(tmp_path, "p.txt", "who am I?"))
    assert run.returncode == 0, run.stderr
    stored = sqlite_text(tmp_path / ".aalis" / "aalis.db")
    assert "login-of-the-test" in stored
    assert '"user_id"' in stored
