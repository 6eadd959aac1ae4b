"""UnsafeLocalCodeExecutor and the agent loop around it: output fed back, retries, the
timeout (virtual time) and disposal killing the whole process group, files in and out."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from reactivex.testing import TestScheduler

from adk_rx import ConfigurationError, InMemoryRunner, InvalidAgentError, LlmAgent
from adk_rx.code_executors import CodeExecutionInput, File, UnsafeLocalCodeExecutor
from adk_rx.testing import ScriptedLlm
from tests.code_executors.support import announce, is_alive, make_fifo, read_pids, wait_exit
from tests.spine_support import new_context

pytestmark = pytest.mark.timeout(60)


def _block(code: str) -> str:
    return f"```python\n{code}\n```"


def _runner(
    script: list[Any], executor: UnsafeLocalCodeExecutor, **kwargs: Any
) -> tuple[InMemoryRunner, ScriptedLlm]:
    model = ScriptedLlm(script)
    agent = LlmAgent(name="coder", model=model, code_executor=executor)
    return InMemoryRunner(agent=agent, app_name="app", **kwargs), model


def _turn(runner: InMemoryRunner, text: str, session_id: str = "s") -> list[Any]:
    return list(runner.run(user_id="u", session_id=session_id, new_message=text))


def _session(runner: InMemoryRunner, session_id: str = "s") -> Any:
    return runner.session_service.create_session(
        app_name="app", user_id="u", session_id=session_id
    ).run()


def _results(events: list[Any]) -> list[types.CodeExecutionResult]:
    return [
        p.code_execution_result
        for e in events
        for p in (e.content.parts if e.content else None) or []
        if p.code_execution_result
    ]


def test_the_output_goes_back_to_the_model_which_answers_from_it() -> None:
    runner, model = _runner(
        [_block("print(2 ** 10)"), "2**10 is 1024."], UnsafeLocalCodeExecutor(timeout=30)
    )
    _session(runner)
    events = _turn(runner, "2**10?")
    assert events[-1].text() == "2**10 is 1024."
    assert [r.output for r in _results(events)] == ["Code execution result:\n1024\n\n"]
    last_sent = model.requests[-1].contents[-1]
    assert last_sent.role == "user"
    assert last_sent.parts and "1024" in (last_sent.parts[0].text or "")


def test_errors_are_retried_until_error_retry_attempts_then_the_answer_stands() -> None:
    bad = _block("raise RuntimeError('boom')")
    executor = UnsafeLocalCodeExecutor(timeout=30, error_retry_attempts=3)
    runner, model = _runner([bad, bad, bad, bad], executor)
    _session(runner)
    events = _turn(runner, "go")
    results = _results(events)
    assert len(results) == 3
    assert all(r.outcome == types.Outcome.OUTCOME_FAILED for r in results)
    assert "RuntimeError: boom" in (results[0].output or "")
    assert 'File "<code>"' in (results[0].output or "")  # the runner's own frame is left out
    assert events[-1].text() == bad and len(model.requests) == 4


def test_an_infinite_loop_is_killed_by_the_timeout_in_virtual_time(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path)
    timer = TestScheduler()
    code = announce(fifo) + "while True:\n    pass\n"
    executor = UnsafeLocalCodeExecutor(timeout=5)
    runner, _ = _runner([_block(code), "it hung"], executor, timer_scheduler=timer)
    _session(runner)
    done = threading.Event()
    seen: list[Any] = []
    runner.run_async(user_id="u", session_id="s", new_message="loop").subscribe(
        seen.append, lambda e: done.set(), done.set
    )
    (pid,) = read_pids(fifo)
    timer.advance_by(4.9)
    assert is_alive(pid) and not done.is_set()
    timer.advance_by(0.2)
    assert done.wait(10)
    assert not is_alive(pid)
    (result,) = _results(seen)
    assert result.outcome == types.Outcome.OUTCOME_FAILED
    assert "timed out after 5 seconds" in (result.output or "")
    assert seen[-1].text() == "it hung"


def test_disposing_the_run_kills_the_child_and_what_it_started(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path)
    sleeper = f"[{sys.executable!r}, '-c', 'import time; time.sleep(600)']"
    code = (
        f"import subprocess\nchild = subprocess.Popen({sleeper})\n"
        + announce(fifo, "str(child.pid)")
        + "child.wait()\n"
    )
    runner, _ = _runner([_block(code)], UnsafeLocalCodeExecutor(timeout=None))
    _session(runner)
    subscription = runner.run_async(user_id="u", session_id="s", new_message="spawn").subscribe()
    pid, grandchild = read_pids(fifo)
    assert is_alive(pid) and is_alive(grandchild)
    subscription.dispose()
    assert not is_alive(pid)  # killed and reaped before dispose() returned
    assert wait_exit(grandchild) and not is_alive(grandchild)


def test_a_background_child_dies_when_the_program_exits(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path)
    sleeper = f"[{sys.executable!r}, '-c', 'import time; time.sleep(600)']"
    code = f"import subprocess\nchild = subprocess.Popen({sleeper})\n" + announce(
        fifo, "str(child.pid)"
    )
    runner, _ = _runner([_block(code), "done"], UnsafeLocalCodeExecutor(timeout=30))
    _session(runner)
    reader: list[list[int]] = []
    thread = threading.Thread(target=lambda: reader.append(read_pids(fifo)))
    thread.start()
    _turn(runner, "spawn")
    thread.join(10)
    _, grandchild = reader[0]
    assert wait_exit(grandchild) and not is_alive(grandchild)


def test_files_in_are_the_session_artifacts_and_files_out_become_artifacts() -> None:
    code = (
        "rows = open('data.csv').read().split()[1:]\n"
        "total = sum(int(r.split(',')[1]) for r in rows)\n"
        "open('total.txt', 'w').write(str(total))\n"
        "print(total)"
    )
    runner, _ = _runner([_block(code), "Total is 60."], UnsafeLocalCodeExecutor(timeout=30))
    _session(runner)
    csv = b"name,amount\na,10\nb,20\nc,30\n"
    artifacts = runner.artifact_service
    assert artifacts is not None
    artifacts.save_artifact(
        app_name="app",
        user_id="u",
        session_id="s",
        filename="data.csv",
        artifact=types.Part.from_bytes(data=csv, mime_type="text/csv"),
    ).run()
    events = _turn(runner, "sum the amounts")
    (result,) = _results(events)
    assert result.output == "Code execution result:\n60\n\n\n\nSaved artifacts:\n`total.txt`"
    saved = next(e for e in events if e.actions.artifact_delta)
    assert dict(saved.actions.artifact_delta) == {"total.txt": 0}
    part = artifacts.load_artifact(
        app_name="app", user_id="u", session_id="s", filename="total.txt"
    ).run()
    assert part.inline_data is not None and part.inline_data.data == b"60"
    assert part.inline_data.mime_type == "text/plain"


def test_an_unchanged_input_file_is_not_an_output_file() -> None:
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    executor = UnsafeLocalCodeExecutor(timeout=30)
    files = (File("in.txt", b"same"), File("keep.txt", b"old"))
    code = "open('keep.txt', 'w').write('new')\nopen('made.bin', 'wb').write(b'\\0')"
    result = executor.execute_code(ctx, CodeExecutionInput(code, files)).run()
    assert [(f.name, f.content) for f in result.output_files] == [
        ("keep.txt", b"new"),
        ("made.bin", b"\0"),
    ]


def test_hostile_file_names_stay_out_of_the_run_and_out_of_the_artifacts(tmp_path: Path) -> None:
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    files = (File("../escape.txt", b"x"), File("/etc/evil", b"x"), File(".hidden", b"x"))
    code = (
        "import os\nprint(sorted(os.listdir('.')))\n"
        f"os.symlink({str(outside)!r}, 'link.txt')\nopen('.dot', 'w').write('x')"
    )
    result = UnsafeLocalCodeExecutor(timeout=30).execute_code(ctx, CodeExecutionInput(code, files))
    value = result.run()
    assert value.stdout == "[]\n"
    assert value.output_files == ()
    assert not (tmp_path.parent / "escape.txt").exists()


def test_output_past_the_limit_is_cut_and_says_so() -> None:
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    executor = UnsafeLocalCodeExecutor(timeout=30, output_limit=1000)
    result = executor.execute_code(ctx, CodeExecutionInput("print('x' * 100000)")).run()
    assert result.stdout == "x" * 1000 + "\n[output cut at 1000 bytes]"
    assert result.stderr == "" and result.exit_code == 0


def test_a_program_that_exits_nonzero_silently_is_a_failure_that_says_how() -> None:
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    executor = UnsafeLocalCodeExecutor(timeout=30)
    result = executor.execute_code(ctx, CodeExecutionInput("import os\nos._exit(4)")).run()
    assert result.stderr == "Code execution exited with status 4." and result.exit_code == 4
    killed = executor.execute_code(ctx, CodeExecutionInput("import os\nos.kill(os.getpid(), 9)"))
    assert killed.run().stderr == "Code execution was killed by SIGKILL."


def test_building_the_run_starts_nothing(tmp_path: Path) -> None:
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()"
    run = UnsafeLocalCodeExecutor(timeout=30).execute_code(ctx, CodeExecutionInput(code))
    assert not marker.exists()
    run.run()
    run.run()  # cold: each subscription runs again
    assert marker.exists()


def test_misconfiguration_is_refused() -> None:
    with pytest.raises(ConfigurationError):
        UnsafeLocalCodeExecutor(timeout=0)
    with pytest.raises(ConfigurationError):
        UnsafeLocalCodeExecutor(error_retry_attempts=-1)
    with pytest.raises(InvalidAgentError):
        LlmAgent(name="a", model=ScriptedLlm([]), code_executor="python")  # type: ignore[arg-type]


@pytest.mark.parametrize("streaming", [False, True])
def test_the_plain_call_path_and_the_observable_path_store_the_same_events(
    streaming: bool,
) -> None:
    from adk_rx import RunConfig, StreamingMode

    def script() -> list[Any]:
        first = ["Checking.\n```py", "thon\nprint(1 + 1)\n```\ntail"] if streaming else None
        return [first or "Checking.\n```python\nprint(1 + 1)\n```\ntail", "It is 2."]

    def stored(**agent_options: Any) -> list[Any]:
        agent = LlmAgent(
            name="coder",
            model=ScriptedLlm(script()),
            code_executor=UnsafeLocalCodeExecutor(timeout=30),
            **agent_options,
        )
        runner = InMemoryRunner(agent=agent, app_name="app")
        _session(runner)
        mode = StreamingMode.SSE if streaming else StreamingMode.NONE
        config = RunConfig(streaming_mode=mode)
        list(runner.run(user_id="u", session_id="s", new_message="1+1?", run_config=config))
        events = (
            runner.session_service.get_session(app_name="app", user_id="u", session_id="s")
            .run()
            .events
        )
        return [(e.author, e.content) for e in events]

    plain = stored()
    # a model callback makes the step subscribe to the model call (the asynchronous path)
    observed = stored(after_model_callback=lambda callback_context, llm_response: None)
    assert plain == observed
    assert [c.parts[-1].executable_code is not None for _, c in plain[1:2]] == [True]
    assert plain[-1][1].parts[0].text == "It is 2."


def test_input_artifacts_past_the_budget_stay_out_and_the_rest_go_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from adk_rx.flows import code_execution

    monkeypatch.setattr(code_execution, "MAX_INPUT_BYTES", 10)
    monkeypatch.setattr(code_execution, "MAX_INPUT_FILES", 3)
    code = "import os\nprint(sorted(os.listdir('.')))"
    runner, _ = _runner([_block(code), "seen"], UnsafeLocalCodeExecutor(timeout=30))
    _session(runner)
    artifacts = runner.artifact_service
    assert artifacts is not None
    for name, data in [("a.txt", b"12345"), ("b.txt", b"1234567890"), ("c.txt", b"123"),
                       ("d.txt", b"1"), (".hidden", b"1")]:  # fmt: skip
        artifacts.save_artifact(
            app_name="app", user_id="u", session_id="s", filename=name,
            artifact=types.Part.from_bytes(data=data, mime_type="text/plain"),
        ).run()  # fmt: skip
    (result,) = _results(_turn(runner, "list"))
    # visible names only, the first three of them, and b.txt would pass the 10-byte budget
    assert result.output == "Code execution result:\n['a.txt', 'c.txt']\n\n"


def test_a_file_named_for_the_users_scope_is_not_saved() -> None:
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    code = "open('user:profile.json', 'w').write('{}')\nopen('ok.txt', 'w').write('1')"
    result = UnsafeLocalCodeExecutor(timeout=30).execute_code(ctx, CodeExecutionInput(code)).run()
    assert [f.name for f in result.output_files] == ["ok.txt"]


def test_output_files_past_the_limits_are_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    from adk_rx.code_executors import workdir

    monkeypatch.setattr(workdir, "MAX_OUTPUT_FILES", 2)
    monkeypatch.setattr(workdir, "MAX_OUTPUT_FILE_BYTES", 100)
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])))
    code = (
        "open('big.bin', 'wb').write(b'x' * 101)\n"
        "for name in ('a.txt', 'b.txt', 'c.txt'):\n    open(name, 'w').write(name)"
    )
    result = UnsafeLocalCodeExecutor(timeout=30).execute_code(ctx, CodeExecutionInput(code)).run()
    assert [f.name for f in result.output_files] == ["a.txt", "b.txt"]


def test_a_cancelled_run_leaves_a_session_the_next_turn_continues(tmp_path: Path) -> None:
    fifo = make_fifo(tmp_path)
    code = announce(fifo) + "import time\ntime.sleep(600)"
    runner, model = _runner(
        [_block(code), "Fine, no code this time."], UnsafeLocalCodeExecutor(timeout=None)
    )
    _session(runner)
    subscription = runner.run_async(user_id="u", session_id="s", new_message="slow").subscribe(
        on_error=lambda _: None
    )
    (pid,) = read_pids(fifo)
    subscription.dispose()
    assert not is_alive(pid)
    after = _turn(runner, "again")
    assert after[-1].text() == "Fine, no code this time."
    stored = runner.session_service.get_session(app_name="app", user_id="u", session_id="s")
    events = stored.run().events
    assert [e.error_code for e in events if e.error_code] == ["CANCELLED"]
    # the code that never finished went back to the model as text, with no result
    sent = [p.text or "" for c in model.requests[-1].contents for p in c.parts or []]
    assert any(t.startswith("```tool_code\n") for t in sent)
    assert not any(t.startswith("```tool_output") for t in sent)


def test_the_run_is_read_on_the_runners_io_scheduler() -> None:
    from reactivex.scheduler import NewThreadScheduler

    class Counting(NewThreadScheduler):
        def __init__(self) -> None:
            super().__init__()
            self.scheduled = 0

        def schedule(self, action: Any, state: Any = None) -> Any:
            self.scheduled += 1
            return super().schedule(action, state)

    io = Counting()
    ctx = new_context(LlmAgent(name="a", model=ScriptedLlm([])), io_scheduler=io)
    for stateful in (False, True):
        executor = UnsafeLocalCodeExecutor(timeout=30, stateful=stateful)
        try:
            run = executor.execute_code(ctx, CodeExecutionInput("print(1)", (), "k"))
            assert run.run().stdout == "1\n"
        finally:
            executor.close()
    assert io.scheduled == 2
