"""The agent loader: targets (folder, .py file, module path), agents folders, errors."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from adk_rx import LlmAgent
from adk_rx.loading.loader import AgentLoadError, app_name_for, discover_apps, load_agent, load_app

AGENT = """
from adk_rx import LlmAgent
from adk_rx.testing import ScriptedLlm
root_agent = LlmAgent(name={name!r}, model=ScriptedLlm(["hi"]))
"""


def _unique(prefix: str) -> str:
    """Folder names become package names: unique ones keep tests independent."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _app(parent: Path, folder: str, text: str, **extra: str) -> Path:
    app = parent / folder
    app.mkdir(parents=True)
    (app / "agent.py").write_text(text)
    for name, body in extra.items():
        (app / name).write_text(body)
    return app


def test_a_folder_is_imported_as_a_package_so_agent_py_may_import_relatively(tmp_path: Path):
    folder = _unique("desk")
    app = _app(
        tmp_path,
        folder,
        "from .helpers import NAME\n" + AGENT.replace("{name!r}", "NAME"),
        **{"helpers.py": "NAME = 'helped'\n"},
    )

    agent = load_agent(str(app))

    assert isinstance(agent, LlmAgent)
    assert agent.name == "helped"
    assert app_name_for(str(app), agent) == folder
    assert load_agent(str(app / "agent.py")) is agent  # agent.py means its folder
    assert app_name_for(str(app / "agent.py"), agent) == folder


def test_a_py_file_and_a_module_path_with_an_attribute(tmp_path: Path, monkeypatch):
    module = _unique("solo")
    (tmp_path / f"{module}.py").write_text(
        AGENT.format(name="solo") + "other = LlmAgent(name='other', model=root_agent.model)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    from_file = load_agent(str(tmp_path / f"{module}.py"))
    by_path = load_agent(module)
    by_attr = load_agent(f"{module}:other")

    assert from_file.name == by_path.name == "solo"
    assert by_attr.name == "other"
    assert app_name_for(module, by_path) == "solo"


def test_discover_apps_lists_sub_folders_with_agent_py_without_importing(tmp_path: Path):
    names = [_unique("b_app"), _unique("a_app")]
    for name in names:
        _app(tmp_path, name, "raise SystemExit('imported too early')\n")
    (tmp_path / "no_agent").mkdir()
    (tmp_path / "not-an-identifier").mkdir()
    (tmp_path / "not-an-identifier" / "agent.py").write_text("")
    (tmp_path / "loose.py").write_text("")

    apps = discover_apps(tmp_path)

    assert list(apps) == sorted(names)
    assert apps[names[0]] == tmp_path / names[0]
    assert not any(name in sys.modules for name in names)


def test_load_app_imports_once_on_first_use(tmp_path: Path):
    name = _unique("lazy")
    log = tmp_path / "imports.log"
    counter = f"open({str(log)!r}, 'a').write('x')\n"
    _app(tmp_path / "apps", name, AGENT.format(name="lazy") + counter)

    assert name in discover_apps(tmp_path / "apps")
    assert not log.exists()
    first = load_app(tmp_path / "apps", name)
    second = load_app(tmp_path / "apps", name)

    assert first is second
    assert log.read_text() == "x"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agent = 1\n", "defines no 'root_agent'; assign the root agent"),
        ("root_agent = 'x'\n", "root_agent is a str, not an agent"),
        ("import no_such_dependency\n", "No module named 'no_such_dependency'"),
        ("raise ValueError('bad config')\n", "ValueError('bad config')"),
    ],
)
def test_an_app_that_fails_to_load_raises_a_clear_error(tmp_path: Path, text: str, message: str):
    name = _unique("broken")
    _app(tmp_path, name, text)

    with pytest.raises(AgentLoadError, match="agent") as raised:
        load_app(tmp_path, name)

    assert message in str(raised.value)
    assert name in str(raised.value)


def test_a_fixed_app_loads_after_a_failed_import(tmp_path: Path):
    name = _unique("fixed")
    app = _app(tmp_path, name, "import no_such_dependency\n")
    with pytest.raises(AgentLoadError):
        load_app(tmp_path, name)

    (app / "agent.py").write_text(AGENT.format(name="fixed"))

    assert load_app(tmp_path, name).root_agent.name == "fixed"


def test_unknown_targets_and_apps(tmp_path: Path):
    _app(tmp_path, _unique("only"), AGENT.format(name="only"))

    with pytest.raises(AgentLoadError, match=r"no app named 'nope'.*apps: only_"):
        load_app(tmp_path, "nope")
    with pytest.raises(AgentLoadError, match="not a folder"):
        discover_apps(tmp_path / "missing")
    with pytest.raises(AgentLoadError, match="no such file"):
        load_agent(str(tmp_path / "missing.py"))
    with pytest.raises(AgentLoadError, match=r"no module named 'no_such\.module'"):
        load_agent("no_such.module")
    with pytest.raises(AgentLoadError, match="neither a folder"):
        load_agent("not a/target")
    (tmp_path / "empty").mkdir()
    with pytest.raises(AgentLoadError, match=r"no agent\.py"):
        load_agent(str(tmp_path / "empty"))


def test_a_folder_named_like_another_module_is_refused(tmp_path: Path):
    app = _app(tmp_path, "json", AGENT.format(name="shadow"))

    with pytest.raises(AgentLoadError, match="already the name of another module"):
        load_agent(str(app))


@pytest.mark.parametrize(
    ("missing", "extra"), [("mcp", "mcp"), ("matplotlib", "plot"), ("redis", "server")]
)
def test_an_app_missing_an_optional_dependency_says_which_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str, extra: str
):
    monkeypatch.setitem(sys.modules, missing, None)  # as if it were not installed
    name = _unique("needs")
    _app(tmp_path, name, f"from {missing} import something\n" + AGENT.format(name="needs"))

    with pytest.raises(AgentLoadError) as raised:
        load_app(tmp_path, name)

    assert f"pip install 'adk_rx[{extra}]'" in str(raised.value)


def test_the_mcp_example_without_mcp_names_the_mcp_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setitem(sys.modules, "mcp", None)
    example = Path(__file__).resolve().parents[2] / "examples" / "mcp_notes" / "agent.py"
    name = _unique("notes")
    _app(tmp_path, name, example.read_text())

    with pytest.raises(AgentLoadError) as raised:
        load_app(tmp_path, name)

    assert str(raised.value).endswith("; it needs the mcp extra: pip install 'adk_rx[mcp]'")


def test_a_missing_module_no_extra_provides_gets_no_install_hint(tmp_path: Path):
    name = _unique("own")
    _app(tmp_path, name, "import openai_agents_of_my_own\n")

    with pytest.raises(AgentLoadError) as raised:
        load_app(tmp_path, name)

    assert "pip install" not in str(raised.value)
