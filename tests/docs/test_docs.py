"""The documentation's examples are real: every code block is checked, most are run.

Markers on the line right before a fenced block say how it is checked (HTML comments, so
GitHub does not render them):

- ``<!-- test: run -->``: a Python block that is a whole script; it runs in a temporary
  folder and must exit 0.
- ``<!-- test: shell -->``: a shell block; it runs with bash (``set -e``) in a temporary
  folder that has ``.venv`` and ``examples`` linked in, ``.venv/bin`` first on PATH.
- ``<!-- excerpt: PATH -->``: the block appears verbatim in the repository file PATH.
- ``<!-- file: PATH -->``: the block is the whole repository file PATH.

Without a marker, every Python block must still compile and every TOML block must parse
and, unless it is a ``pyproject.toml`` excerpt, be an ``aalis.toml`` the installed plugins
accept. Relative links must lead to existing files and headings.
"""

from __future__ import annotations

import ast
import math
import re
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The pages these tests cover (others' pages are linked to, and checked by their owners).
PAGES = [
    "README.md",
    "docs/index.md",
    "docs/host/quickstart.md",
    "docs/host/configuration.md",
    "docs/host/providers.md",
    "docs/host/mongodb.md",
    "docs/host/export-import.md",
    "docs/host/serve.md",
    "docs/host/facts.md",
    "docs/plugins/writing.md",
    "docs/backends/implementing.md",
    "docs/reference/memory-contract.md",
    "docs/reference/llm-contract.md",
    "docs/reference/turn.md",
    "docs/reference/transfer.md",
    "docs/reference/hooks.md",
    "docs/reference/errors.md",
    "docs/reference/conformance.md",
    "docs/host/wheels.md",
    "docs/integrations/langchain.md",
    "docs/integrations/llamaindex.md",
    "docs/integrations/mcp.md",
    "docs/integrations/openai-agents.md",
    "docs/integrations/langgraph.md",
    "docs/integrations/pydantic-ai.md",
    "docs/integrations/google-adk.md",
    "docs/integrations/side-by-side.md",
    "examples/aalis-plugin-notes/README.md",
]

_MARKER = re.compile(r"<!--\s*(test|excerpt|file):\s*(.*?)\s*-->")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


@attrs.frozen
class Block:
    """One fenced code block of a page."""

    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    marker: tuple[str, str] | None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def read_blocks(page: str) -> list[Block]:
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        if lines[index].startswith("```"):
            start = index
            lang = lines[index][3:].strip()
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].startswith("```"):
                body.append(lines[index])
                index += 1
            marker = None
            previous = start - 1
            while previous >= 0 and not lines[previous].strip():
                previous -= 1
            if previous >= 0:
                found = _MARKER.fullmatch(lines[previous].strip())
                if found:
                    marker = (found.group(1), found.group(2))
            blocks.append(Block(page, start + 1, lang, "\n".join(body) + "\n", marker))
        index += 1
    return blocks


BLOCKS = [block for page in PAGES for block in read_blocks(page)]


def blocks(lang: str, marker: tuple[str, str] | str | None = "any") -> list[Block]:
    return [
        b
        for b in BLOCKS
        if b.lang == lang
        and (marker == "any" or b.marker == marker or (b.marker and b.marker[0] == marker))
    ]


def ids(items: list[Block]) -> list[str]:
    return [str(b) for b in items]


# --------------------------------------------------------------------------------------
# links
# --------------------------------------------------------------------------------------


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.add(github_slug(line.lstrip("#")))
    return found


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_lead_somewhere(page: str) -> None:
    source = ROOT / page
    text = re.sub(r"```.*?```", "", source.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path_part, _, anchor = target.partition("#")
        path = (source.parent / path_part).resolve() if path_part else source
        if not path.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target} (no heading #{anchor})")
    assert not broken, f"{page}: broken links: {broken}"


def test_every_page_is_reachable_from_the_index() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    linked = {(ROOT / "docs" / t.partition("#")[0]).resolve() for t in _LINK.findall(index)}
    pages = [p for p in (ROOT / "docs").rglob("*.md") if p.name != "index.md"]
    missing = [str(p.relative_to(ROOT)) for p in pages if p.resolve() not in linked]
    assert not missing, f"docs/index.md does not link to {missing}"


# --------------------------------------------------------------------------------------
# Python blocks
# --------------------------------------------------------------------------------------

PYTHON = blocks("python")


@pytest.mark.parametrize("block", PYTHON, ids=ids(PYTHON))
def test_python_blocks_compile(block: Block) -> None:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    compile(textwrap.dedent(block.text), str(block), "exec", flags=flags)


RUNNABLE = blocks("python", ("test", "run"))


def test_there_are_runnable_examples() -> None:
    assert len(RUNNABLE) >= 2


@pytest.mark.parametrize("block", RUNNABLE, ids=ids(RUNNABLE))
def test_runnable_python_blocks_run(
    block: Block, sandbox: Path, user_env: Callable[..., dict[str, str]]
) -> None:
    script = sandbox / "example.py"
    script.write_text(block.text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=sandbox,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{block} failed:\n{result.stdout}\n{result.stderr}"
    for expected in re.findall(r"#\s*(\[.*\])\s*$", block.text, flags=re.M):
        assert expected in result.stdout, f"{block}: expected output {expected}"


EXCERPTS = [b for b in BLOCKS if b.marker and b.marker[0] in ("excerpt", "file")]


@pytest.mark.parametrize("block", EXCERPTS, ids=ids(EXCERPTS))
def test_excerpts_are_taken_from_the_real_files(block: Block) -> None:
    assert block.marker is not None
    kind, path = block.marker
    source = (ROOT / path).read_text(encoding="utf-8")
    if kind == "file":
        assert block.text == source, f"{block} differs from {path}"
    else:
        assert block.text in source, f"{block} is not (any more) in {path}"


# --------------------------------------------------------------------------------------
# TOML blocks
# --------------------------------------------------------------------------------------

TOML = blocks("toml")


@pytest.mark.parametrize("block", TOML, ids=ids(TOML))
def test_toml_blocks_are_valid_configuration(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tomllib.loads(block.text)
    if "project" in data or "build-system" in data or (block.marker or ("",))[0] == "excerpt":
        return  # a pyproject.toml excerpt, not an aalis.toml
    from aalis_core import Host

    monkeypatch.setenv("AALIS_MONGODB_URI", "mongodb://user:secret@127.0.0.1:1/")
    monkeypatch.setenv("AALIS_POSTGRES_URI", "postgresql://user:secret@127.0.0.1:1/agents")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    Host(data)  # discovers the installed plugins and validates every table; starts nothing


# --------------------------------------------------------------------------------------
# shell blocks
# --------------------------------------------------------------------------------------

SHELL = blocks("sh", ("test", "shell"))


@pytest.mark.parametrize("block", SHELL, ids=ids(SHELL))
def test_shell_blocks_run(
    block: Block, run_shell: Callable[[str], subprocess.CompletedProcess[str]]
) -> None:
    run_shell(block.text)


# --------------------------------------------------------------------------------------
# outputs shown in the pages
# --------------------------------------------------------------------------------------


def _text_block_starting(page: str, prefix: str) -> str:
    (block,) = [b for b in read_blocks(page) if b.lang == "text" and b.text.startswith(prefix)]
    return block.text


def test_two_providers_output_is_what_the_script_prints(
    sandbox: Path, user_env: Callable[..., dict[str, str]]
) -> None:
    shown = _text_block_starting("docs/host/providers.md", "journal: memory -> ")
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "two_providers.py"), str(sandbox)],
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == shown


def test_config_error_shown_in_the_quickstart_is_real(
    sandbox: Path, user_env: Callable[..., dict[str, str]]
) -> None:
    shown = _text_block_starting("docs/host/quickstart.md", "Error: aalis.toml:").strip()
    (sandbox / "aalis.toml").write_text("[host]\nhook_timeout = 0\n")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("aalis")), "plugins"],
        cwd=sandbox,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == shown


async def test_the_get_history_example_of_the_contract_holds() -> None:
    from aalis_plugin_memory_inmemory import InMemoryMemory
    from aalis_schema_message import Message

    def conv(role: str, text: str) -> Message:
        return Message(role=role, content=text)

    def marker() -> Message:
        return Message(role="notice", kind="event-marker", content="marker")

    store: Any = InMemoryMemory()
    for message in [
        conv("user", "u1"),
        conv("assistant", "a1"),
        marker(),
        conv("user", "u2"),
        marker(),
        conv("assistant", "a2"),
    ]:
        await store.save_message("s", message)
    assert [m.content for m in await store.get_history("s", 2)] == ["marker", "u2", "marker", "a2"]
    assert len(await store.get_history("s", 5)) == 6
    assert await store.get_history("s", 0) == []
    assert len(await store.get_history("s", math.inf)) == 6
