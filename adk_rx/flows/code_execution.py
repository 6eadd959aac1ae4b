"""An LlmAgent's code execution: google-adk 2.13's loop, step by step.

With ``LlmAgent(code_executor=...)``, each request and each complete model answer pass here:

1. **Request** (:func:`prepare_code_request`): the executor adjusts it (the built-in one
   declares Gemini's code execution tool); earlier runs go back to the model as text: a
   trailing ``executable_code`` part as a fenced code block, a lone ``code_execution_result``
   as a user message fenced with the result delimiters.
2. **Answer** (:func:`code_events`): the first code block of the answer (its own
   ``executable_code`` part, or the earliest block between the executor's delimiters in its
   text) is cut out: the answer up to the block is stored as the model's event, with the block
   as an ``executable_code`` part. The code runs, in a directory holding the session's
   artifacts; the files it writes are saved as artifacts, and its output is stored as the
   agent's ``code_execution_result`` event. That event is not a final response, so the loop
   calls the model again, which sees the output. An answer without code ends the turn.
3. **Retries**: once ``error_retry_attempts`` runs in a row failed within the invocation,
   the model's code is no longer run and its answer stands. The count is read from the
   invocation's stored events (a resumed invocation counts the same), not kept aside.

Thoughts stay out of the search for code and go back in front of the stored answer.
Disposing the invocation while code runs kills the run's process group (the executor's
Observable is disposed); the answer with the code is stored, its result never is.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import TYPE_CHECKING

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.code_executors.base import BaseCodeExecutor
from adk_rx.code_executors.built_in import BuiltInCodeExecutor
from adk_rx.code_executors.parts import as_text_for_model, extract_code, result_part
from adk_rx.code_executors.values import CodeExecutionInput, CodeExecutionResult, File
from adk_rx.code_executors.workdir import is_plain_name
from adk_rx.context import InvocationContext
from adk_rx.events import EMPTY_ACTIONS, Event, EventActions
from adk_rx.planners import BuiltInPlanner
from adk_rx.rx._engine.generator_stage import Steps
from adk_rx.rx._engine.sync import just

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.models.llm_request import LlmRequest

__all__ = ["code_events", "prepare_code_request"]

MAX_INPUT_FILES = 32
MAX_INPUT_BYTES = 32 * 1024 * 1024


def prepare_code_request(agent: LlmAgent, request: LlmRequest) -> None:
    """Step 1: the executor's adjustment and earlier runs as text (contents copied, not changed)."""
    executor = agent.code_executor
    if executor is None:
        return
    executor.process_llm_request(request)
    fence = executor.code_block_delimiters[0] if executor.code_block_delimiters else ("", "")
    results = executor.execution_result_delimiters
    request.contents = [as_text_for_model(c, fence, results) for c in request.contents]


def code_events(agent: LlmAgent, ctx: InvocationContext, event: Event) -> Steps[Event] | None:
    """Step 2 for a complete model event: None when it has no code to run; else the steps
    that emit the answer cut after its first block, then the run's result event."""
    executor = agent.code_executor
    content = event.content
    if executor is None or content is None or event.partial:
        return None
    if isinstance(executor, BuiltInCodeExecutor):
        return _saved_images(ctx, event, content)
    if failed_in_a_row(ctx) >= executor.error_retry_attempts:
        return None
    planner = agent.planner
    content, thoughts = _split_thoughts(
        content, signed_only=planner is not None and not isinstance(planner, BuiltInPlanner)
    )
    found = extract_code(content, executor.code_block_delimiters)
    if found is None:
        return None
    code, kept = found
    if thoughts:
        kept = kept.model_copy(update={"parts": [*thoughts, *(kept.parts or [])]})
    return _run(agent, ctx, executor, dataclasses.replace(event, content=kept), code)


def failed_in_a_row(ctx: InvocationContext) -> int:
    """Runs of this invocation that failed since its last successful one (from its events)."""
    count = 0
    for event in reversed(ctx.session.events):
        if event.invocation_id != ctx.invocation_id:
            break
        parts = event.content.parts if event.content is not None else None
        result = parts[-1].code_execution_result if parts else None
        if result is None:
            continue
        if result.outcome != types.Outcome.OUTCOME_FAILED:
            break
        count += 1
    return count


def _split_thoughts(
    content: types.Content, *, signed_only: bool
) -> tuple[types.Content, list[types.Part]]:
    """The content without its thoughts, and those (a planner's unsigned ones kept)."""
    kept: list[types.Part] = []
    thoughts: list[types.Part] = []
    for part in content.parts or []:
        if part.thought and (part.thought_signature or not signed_only):
            thoughts.append(part)
        else:
            kept.append(part)
    if not thoughts:
        return content, []
    return content.model_copy(update={"parts": kept}), thoughts


def _run(
    agent: LlmAgent, ctx: InvocationContext, executor: BaseCodeExecutor, answer: Event, code: str
) -> Steps[Event]:
    yield just(answer)
    if ctx.cancelled:
        return answer
    execution_id = ctx.session.id if executor.stateful else None

    def execute(files: list[File]) -> Observable[CodeExecutionResult]:
        code_input = CodeExecutionInput(code, tuple(files), execution_id)
        return executor.execute_code(ctx, code_input)

    result = yield _input_files(ctx).pipe(
        ops.concat_map(execute), ops.concat_map(lambda r: _result_event(agent, ctx, r))
    )
    return result or answer


def _saved_images(
    ctx: InvocationContext, event: Event, content: types.Content
) -> Steps[Event] | None:
    """The built-in executor's answer with the images it made saved as artifacts (each part
    replaced by ``Saved as artifact: <name>.``, as google-adk does); None when it made none.
    An answer that also calls functions keeps its images inline, so its calls still run."""
    parts = content.parts or []
    images = [i for i, p in enumerate(parts) if _image(p) is not None]
    service = ctx.artifact_service
    if not images or service is None or event.get_function_calls():
        return None

    def save(index: int) -> Observable[tuple[int, str, int]]:
        blob = _image(parts[index])
        assert blob is not None and blob.data is not None
        name = blob.display_name or _timestamped(blob.mime_type or "image")
        artifact = types.Part.from_bytes(data=blob.data, mime_type=blob.mime_type or "image/png")
        return service.save_artifact(
            app_name=ctx.app_name,
            user_id=ctx.user_id,
            session_id=ctx.session.id,
            filename=name,
            artifact=artifact,
        ).pipe(ops.map(lambda version: (index, name, version)))

    def rewritten(saved: list[tuple[int, str, int]]) -> Event:
        new_parts = list(parts)
        for index, name, _ in saved:
            new_parts[index] = types.Part(text=f"Saved as artifact: {name}. ")
        delta = {**event.actions.artifact_delta, **{name: v for _, name, v in saved}}
        return dataclasses.replace(
            event,
            content=content.model_copy(update={"parts": new_parts}),
            actions=event.actions.replace(artifact_delta=delta),
        )

    def steps() -> Steps[Event]:
        return (
            yield rx.from_iterable(images).pipe(
                ops.concat_map(save), ops.to_list(), ops.map(rewritten)
            )
        )

    return steps()


def _image(part: types.Part) -> types.Blob | None:
    blob = part.inline_data
    if blob is None or blob.data is None or not (blob.mime_type or "").startswith("image/"):
        return None
    return blob


def _timestamped(mime_type: str) -> str:
    stamp = datetime.datetime.now().astimezone().strftime("%Y%m%d_%H%M%S")
    return f"{stamp}.{mime_type.split('/')[-1]}"


def _input_files(ctx: InvocationContext) -> Observable[list[File]]:
    """The session's artifacts (latest versions, within the limits) as the run's files."""
    service = ctx.artifact_service
    if service is None:
        return rx.just([])
    app_name, user_id, session_id = ctx.app_name, ctx.user_id, ctx.session.id

    def load_one(name: str) -> Observable[File | None]:
        return service.load_artifact(
            app_name=app_name, user_id=user_id, session_id=session_id, filename=name
        ).pipe(ops.map(lambda part: _as_file(name, part)))

    def load(names: list[str]) -> Observable[list[File]]:
        plain = [n for n in names if is_plain_name(n)][:MAX_INPUT_FILES]
        return rx.from_iterable(plain).pipe(
            ops.concat_map(load_one),
            ops.filter(lambda f: f is not None),
            ops.scan(_within_budget, []),
            ops.last_or_default([]),
        )

    return service.list_artifact_keys(
        app_name=app_name, user_id=user_id, session_id=session_id
    ).pipe(ops.concat_map(load))


def _as_file(name: str, part: types.Part) -> File | None:
    if part.inline_data is not None and part.inline_data.data is not None:
        mime = part.inline_data.mime_type or "application/octet-stream"
        return File(name=name, content=part.inline_data.data, mime_type=mime)
    if part.text is not None:
        return File(name=name, content=part.text.encode("utf-8"))
    return None


def _within_budget(files: list[File], file: File | None) -> list[File]:
    if file is None or sum(len(f.content) for f in files) + len(file.content) > MAX_INPUT_BYTES:
        return files
    return [*files, file]


def _result_event(
    agent: LlmAgent, ctx: InvocationContext, result: CodeExecutionResult
) -> Observable[Event]:
    """The run's ``code_execution_result`` event, after its files were saved as artifacts."""
    service = ctx.artifact_service
    files = result.output_files if service is not None else ()
    if not files:
        return rx.just(_event(agent, ctx, dataclasses.replace(result, output_files=()), {}))
    assert service is not None

    def save(file: File) -> Observable[tuple[str, int]]:
        part = types.Part.from_bytes(data=file.content, mime_type=file.mime_type)
        saved = service.save_artifact(
            app_name=ctx.app_name,
            user_id=ctx.user_id,
            session_id=ctx.session.id,
            filename=file.name,
            artifact=part,
        )
        return saved.pipe(ops.map(lambda version: (file.name, version)))

    return rx.from_iterable(files).pipe(
        ops.concat_map(save),
        ops.to_list(),
        ops.map(lambda saved: _event(agent, ctx, result, dict(saved))),
    )


def _event(
    agent: LlmAgent, ctx: InvocationContext, result: CodeExecutionResult, saved: dict[str, int]
) -> Event:
    return Event(
        author=agent.name,
        invocation_id=ctx.invocation_id,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[result_part(result)]),
        actions=EventActions(artifact_delta=saved) if saved else EMPTY_ACTIONS,
    )
