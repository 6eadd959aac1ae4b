"""Memory as relevance, offline: what a user said in one session comes back in the next,
and a folder of markdown files grounds the answers, all in one SQLite file.

    python examples/memory_offline.py            # HashingEmbedder: word matching, instant
    python examples/memory_offline.py --local    # LocalEmbedder: by meaning (the embed extra)

The model is a ScriptedLlm that answers from what it is given, so the run needs no key and no
network: its replies show what ``preload_memory`` put in the request and what the
``FilesRetrieval`` tool found.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from google.genai import types
from reactivex import operators as ops

from adk_rx import App, InMemorySessionService, LlmAgent, Runner
from adk_rx.apps import MemoryConfig
from adk_rx.memory import Embedder, HashingEmbedder, LocalEmbedder, VectorMemoryService
from adk_rx.models import LlmRequest, LlmResponse
from adk_rx.testing import ScriptedLlm
from adk_rx.tools import FilesRetrieval, preload_memory

DOCS = Path(__file__).resolve().parent / "memory_docs"


def recall(request: LlmRequest) -> str:
    """Answers with the first line of the past conversations it was given, if any."""
    for content in request.contents:
        text = (content.parts or [None])[0]
        if text is not None and text.text and "<PAST_CONVERSATIONS>" in text.text:
            remembered = text.text.split("<PAST_CONVERSATIONS>\n")[1].splitlines()
            return f"From our earlier chat: {remembered[1]}"
    return "I do not remember that."


def cite(request: LlmRequest) -> str:
    """Answers with the best passage the search tool returned."""
    responses = [
        part.function_response.response or {}
        for content in request.contents
        for part in content.parts or []
        if part.function_response is not None
    ]
    best = responses[-1]["results"][0]
    return f"{best['text'].splitlines()[-2]} (from {best['source']}, score {best['score']:.2f})"


def search(query: str) -> LlmResponse:
    """The model's call of the handbook search."""
    call = types.FunctionCall(name="search_handbook", args={"query": query})
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def main() -> None:
    embedder: Embedder = LocalEmbedder() if "--local" in sys.argv else HashingEmbedder()
    with tempfile.TemporaryDirectory() as folder:
        memory = VectorMemoryService(f"sqlite:///{folder}/memory.db", embedder)
        docs = FilesRetrieval(
            name="search_handbook",
            description="The shop's handbook: returns, refunds, shipping.",
            input_dir=DOCS,
            memory=memory,  # the same store, a scope of its own
        )
        model = ScriptedLlm(
            [
                "Noted, Rex it is.",
                recall,
                search("how long until a refund is paid"),
                cite,
            ]
        )
        agent = LlmAgent(name="assistant", model=model, tools=[preload_memory, docs])
        app = App(
            name="shop",
            root_agent=agent,
            memory_config=MemoryConfig(add_session_after_invocation=True),
        )
        runner = Runner(app=app, session_service=InMemorySessionService(), memory_service=memory)
        for session_id in ("monday", "friday"):
            runner.session_service.create_session(
                app_name="shop", user_id="ana", session_id=session_id
            ).run()
        for session_id, text in (
            ("monday", "My dog is called Rex and he loves the beach."),
            ("friday", "What is my dog called?"),
            ("friday", "How long until I get my refund?"),
        ):
            print(f"{session_id}> ana: {text}")
            events = runner.run_async(user_id="ana", session_id=session_id, new_message=text)
            final = events.pipe(ops.to_list()).run()[-1]
            print(f"{session_id}> assistant: {final.text()}")
        found = memory.search_memory(app_name="shop", user_id="ana", query="beach dog").run()
        best = found.memories[0]
        print(f"memory search 'beach dog': score {best.score:.2f}, said at {best.timestamp}")
        memory.close()


if __name__ == "__main__":
    main()
