"""The documentation: the site builds with ``mkdocs build --strict`` (a broken link, a page left
out of the nav or a docstring that does not match its signature fails), and the Python code
blocks of the README and of docs/ run.

A block that is an excerpt (it uses names defined elsewhere, or needs a server, a key or a
folder) is marked ``<!-- fragment -->`` on the line before its opening fence, or listed in
``FRAGMENTS`` below by the start of its first line; every other block must run offline as
written. The README is the front page; each README link to a file must point at one that exists.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
_BLOCK = re.compile(
    r"(?P<before>[^\n]*)\n(?P<indent>[ \t]*)```python\n(?P<code>.*?)\n[ \t]*```", re.S
)
_PROVIDER_ENV = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ADK_RX_MODEL",
)

# Blocks of docs/ and the README that are excerpts of a larger program (first line -> why it does
# not run alone).
FRAGMENTS = {
    "from adk_rx.tools import never_blocks": "an excerpt: the tool's module",
    "from adk_rx import App, LlmAgent": "uses HANDBOOK, a long text defined elsewhere",
    "from adk_rx.usage import UsagePlugin, summarize_usage": "uses a session from a run",
    "from adk_rx.models import CircuitBreakerLlm, RateLimitedLlm": "wraps models defined elsewhere",
    "from mcp import StdioServerParameters": "starts MCP servers",
    "from adk_rx.code_executors import BuiltInCodeExecutor": "an excerpt",
    "from adk_rx.workflow import START, DEFAULT_ROUTE, JoinNode": "an excerpt",
    "from adk_rx import FunctionTool, RunConfig": "uses a runner and session from above",
    'refine = LoopAgent(name="refine"': "an excerpt",
    'app = App(name="refunds"': "an excerpt",
    "from adk_rx.apps import MemoryConfig": "reads a handbook/ folder",
    "from adk_rx.a2a import RemoteA2aAgent, to_a2a": "serves over the network",
    "runner = InMemoryRunner(agent=agent, tracer_provider=provider": "an excerpt of the tracing",
    "from adk_rx.evaluation import AgentEvaluator, EvalCase, EvalSet": "uses a session from a run",
}


def _listed(first: str) -> str | None:
    """The FRAGMENTS key a block's first line starts with."""
    return next((key for key in FRAGMENTS if first.startswith(key)), None)


def _blocks(path: Path) -> list[tuple[str, str, bool]]:
    """(first line, code, marked as a fragment) for each Python block of a Markdown file."""
    found = []
    for match in _BLOCK.finditer(path.read_text(encoding="utf-8")):
        code = textwrap.dedent(match["code"])
        first = code.strip().splitlines()[0].strip() if code.strip() else ""
        found.append((first, code, "<!-- fragment -->" in match["before"]))
    return found


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    env["ADK_RX_ALLOW_REAL_MODEL_CALLS"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, text=True, capture_output=True, timeout=120
    )


def _doc_pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None, reason="the docs extra is not installed"
)
def test_the_docs_site_builds_with_strict(tmp_path: Path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=REPO, env=env, text=True, capture_output=True, timeout=300,
    )  # fmt: skip

    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "reference" / "runner" / "index.html").is_file()


@pytest.mark.parametrize("page", _doc_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_the_python_blocks_of_a_docs_page_run(page: Path, tmp_path: Path):
    for first, code, fragment in _blocks(page):
        if fragment or _listed(first):
            continue
        done = _run(code, tmp_path)
        assert done.returncode == 0, f"{page.name}: the block {first!r} failed:\n{done.stderr}"


def test_every_listed_fragment_is_a_block_of_the_docs_or_the_readme():
    pages = [*_doc_pages(), REPO / "README.md"]
    used = {_listed(first) for page in pages for first, _, _ in _blocks(page)}
    stale = sorted(set(FRAGMENTS) - used)
    assert not stale, f"FRAGMENTS lists blocks that docs/ and the README no longer have: {stale}"


def test_the_readme_links_to_files_that_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\((?!https?://|#)([^)#\s]+)", readme)
    assert targets, "the README links to no docs page"
    missing = sorted({t for t in targets if not (REPO / t).exists()})
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_python_blocks_of_the_readme_run(tmp_path: Path):
    blocks = _blocks(REPO / "README.md")
    failed = []
    for first, code, fragment in blocks:
        if fragment or _listed(first):
            continue
        done = _run(code, tmp_path)
        if done.returncode != 0:
            failed.append(f"{first!r}:\n{done.stderr[-1500:]}")
    assert not failed, (
        "README blocks that do not run (fix them, or mark an excerpt <!-- fragment --> on the "
        "line before its fence):\n" + "\n".join(failed)
    )
