"""The server app: ``create_app`` builds it, ``serve`` runs it on uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from adk_rx.artifacts.base import BaseArtifactService
from adk_rx.artifacts.file import FileArtifactService
from adk_rx.auth import BaseCredentialService
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.memory.base import BaseMemoryService
from adk_rx.memory.in_memory import InMemoryMemoryService
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import Session
from adk_rx.sessions.sql import SqlSessionService

from .edge.cors import AllowedOrigins, with_cors
from .edge.error_answers import EXCEPTION_HANDLERS
from .edge.security import DEFAULT_HOSTS, SecurityMiddleware
from .invocations.registry import InvocationRegistry
from .invocations.tap import TappedSessionService
from .limits import Limits
from .routes import adk_routes, adk_ui, live_route, run_routes, session_routes
from .runners import AppRunners
from .shared import Server
from .stores import (
    artifact_service_from_uri,
    credential_service_from_uri,
    follow_sessions,
    session_service_from_uri,
)
from .traces import trace_routes
from .traces.trace_index import TraceIndex

if TYPE_CHECKING:
    from adk_rx.telemetry.span_store import SpanStore

    from .cluster.broker import Broker

__all__ = ["create_app", "serve", "session_service_from_uri"]

STATE_DIR = ".adk_rx"
PAGE = Path(__file__).resolve().parent.parent / "static" / "index.html"
SHUTDOWN_GRACE = 10.0


async def _page(request: Request) -> Response:
    if not request.app.state.server.web:
        raise HTTPException(404, "the page is served by `adk-rx web`")
    return FileResponse(PAGE, headers={"Cache-Control": "no-cache"})


def create_app(
    agents_dir: str | os.PathLike[str],
    *,
    session_service: BaseSessionService | None = None,
    web: bool = False,
    tokens: Mapping[str, str] | None = None,
    allowed_hosts: Iterable[str] | None = None,
    artifact_service: BaseArtifactService | None = None,
    memory_service: BaseMemoryService | None = None,
    credential_service: BaseCredentialService | None = None,
    limits: Limits | None = None,
    ui: str = "adk-rx",
    allow_origins: Iterable[str] | None = None,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    span_store: SpanStore | None = None,
    broker: Broker | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    a2a: bool = False,
) -> Starlette:
    """The HTTP app serving the apps of ``agents_dir``.

    Args:
        agents_dir: a folder with one sub-folder per app (``agent.py`` with ``root_agent``).
        session_service: where sessions live; default ``sessions.db`` (SQLite) in
            ``data_dir``.
        web: also serve the dev UI page at ``/``.
        tokens: bearer token -> user id; when given, every API request needs a token and a
            token's user reaches only its own ``users/{user}`` paths.
        allowed_hosts: the names (``"name"`` any port, ``"name:port"``, ``"*"`` any) a
            request's Host may carry; default the loopback names.
        artifact_service: default ``artifacts/`` files in ``data_dir`` when the sessions are
            the default ones, the session database when ``session_service`` is a
            :class:`SqlSessionService`, in memory otherwise.
        memory_service: default the session database when ``session_service`` is a
            :class:`SqlSessionService` (keyword search), in memory otherwise.
        credential_service: where users' credentials for tools are kept (``adk_rx.auth``);
            default in this process.
        tracer_provider: where the Runners' spans go (default OpenTelemetry's global one);
            a ``traceparent`` header on a run request makes its invocation continue that trace.
        meter_provider: where the Runners' metrics go (default the global one).
        span_store: the span store the trace view reads (a span processor of
            ``tracer_provider``); without one the view shows the invocation's events.
        limits: request, run, log and retention bounds (see :class:`Limits`).
        ui: the page ``web`` serves: ``"adk-rx"`` (its own, at ``/``) or ``"google-adk"``
            (the dev UI of an installed google-adk package, at ``/dev-ui/``).
        allow_origins: other origins whose pages may call the API (CORS); see
            :mod:`adk_rx.cli.server.edge.cors`. Off by default.
        broker: Redis, shared with the other server processes that serve the same
            sessions (see :mod:`adk_rx.cli.server.cluster.broker`); its tasks start and stop with
            the app. Without one, invocations are served by the process that runs them.
        data_dir: the folder for what the server itself writes: the default sessions and
            artifacts, and the eval sets and results clients create (``evals/``; see
            :mod:`adk_rx.cli.server.routes.eval_scope`). Default ``.adk_rx`` under the working
            folder; created when first needed.
        a2a: also serve every app over A2A at ``/a2a/{app_name}`` (see
            :mod:`adk_rx.cli.server.a2a`; needs the ``a2a`` extra).

    Raises:
        ConfigurationError: an unknown ``ui``, or ``"google-adk"`` without google-adk.
    """
    if ui not in adk_ui.UIS:
        raise ConfigurationError(f"ui must be one of {', '.join(adk_ui.UIS)}, got {ui!r}")
    if web and ui == "google-adk":
        pages = adk_ui.routes(adk_ui.find_bundle())
    else:
        pages = [Route("/", _page, methods=["GET"])]
    state_dir = Path(data_dir).absolute() if data_dir is not None else Path.cwd() / STATE_DIR
    if session_service is None:
        state_dir.mkdir(parents=True, exist_ok=True)
        session_service = SqlSessionService(f"sqlite:///{state_dir / 'sessions.db'}")
        if artifact_service is None:
            artifact_service = FileArtifactService(state_dir / "artifacts")
    else:
        artifact_service, memory_service = follow_sessions(
            session_service, artifact_service, memory_service
        )
    limits = limits or Limits()
    registry = InvocationRegistry(limits)
    trace_index = TraceIndex()

    def on_stored(session: Session, event: Event) -> None:
        registry.on_stored(session, event)
        trace_index.on_stored(session, event)

    runners = AppRunners(
        Path(agents_dir),
        session_service=TappedSessionService(
            session_service, on_stored, on_deleted=registry.forget_session
        ),
        artifact_service=artifact_service,
        memory_service=memory_service or InMemoryMemoryService(),
        credential_service=credential_service,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
    )
    server = Server(
        runners=runners,
        registry=registry,
        limits=limits,
        web=web,
        data_dir=state_dir,
        span_store=span_store,
        broker=broker,
    )
    liveness = None
    if broker is not None:
        from .cluster.broker_liveness import Liveness
        from .cluster.takeover import Takeover

        takeover = Takeover(broker, registry, runners, session_service, limits)
        try_lock = getattr(session_service, "try_lock_session", None)
        liveness = Liveness(broker, registry, session_service, try_lock, takeover)

    a2a_routes: list[BaseRoute] = []
    a2a_apps = None
    if a2a:
        a2a_apps, a2a_routes = _a2a_parts()

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        if liveness is not None:
            liveness.start()
        yield
        # Runs still going get SHUTDOWN_GRACE seconds to end; the rest are cancelled, so
        # their sessions record CANCELLED. Off the loop: the runs may need it to end.
        await asyncio.to_thread(runners.close, SHUTDOWN_GRACE)
        if a2a_apps is not None:
            await a2a_apps.aclose()
        if broker is not None and liveness is not None:
            await broker.close(farewell=liveness.stop)  # publishers write their ends first

    app = Starlette(
        routes=[
            *pages,
            *adk_routes.routes,
            *session_routes.routes,
            *run_routes.routes,
            *live_route.routes,
            *trace_routes.routes,
            *a2a_routes,
        ],
        exception_handlers=dict(EXCEPTION_HANDLERS),
        lifespan=lifespan,
    )
    app.state.server = server
    app.state.trace_index = trace_index
    app.state.a2a = a2a_apps
    origins = AllowedOrigins.parse(allow_origins) if allow_origins else None
    if origins is not None:
        app.add_middleware(with_cors, origins=origins)
    app.add_middleware(
        SecurityMiddleware,
        allowed_hosts=tuple(allowed_hosts) if allowed_hosts is not None else DEFAULT_HOSTS,
        tokens=tokens,
        allowed_origins=origins,
    )
    return app


def _a2a_parts() -> tuple[Any, list[BaseRoute]]:
    """The A2A mount; a clear error when the ``a2a`` extra is not installed."""
    try:
        from .a2a.mount import A2aApps, mount
    except ImportError as exc:
        raise ConfigurationError(
            f'--a2a needs the a2a-sdk package: pip install "adk_rx[a2a]" ({exc})'
        ) from exc
    return A2aApps(), [mount]


def _env_tokens() -> dict[str, str] | None:
    raw = os.environ.get("ADK_RX_TOKENS", "").strip()
    if not raw:
        return None
    pairs = (item.partition("=") for item in raw.split(",") if item.strip())
    return {token.strip(): user.strip() for token, _, user in pairs}


def freeze_startup_heap() -> int:
    """Moves what start-up loaded (modules, the app, its routes) out of the cyclic GC's reach.

    Those objects live as long as the process; without this every full collection walks
    them again (about 150,000 objects, tens of milliseconds, each time the heap grew by a
    quarter). Returns how many objects are frozen.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def serve(
    agents_dir: str | os.PathLike[str],
    host: str = "127.0.0.1",
    port: int = 8000,
    web: bool = False,
    ui: str = "adk-rx",
    allow_origins: Iterable[str] | None = None,
    otlp_endpoint: str | None = None,
    limits: Limits | None = None,
    session_service_uri: str | None = None,
    broker_url: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    memory_service_uri: str | None = None,
    memory_embedder: str = "hashing",
    a2a: bool = False,
    artifact_service_uri: str | None = None,
    credential_service_uri: str | None = None,
) -> None:
    """Runs the server on uvicorn until interrupted.

    ``data_dir`` is where the server writes (see :func:`create_app`; default ``.adk_rx``
    under the working folder). ``session_service_uri`` (see :func:`session_service_from_uri`;
    default SQLite in ``data_dir``) and ``broker_url`` (``redis://HOST:PORT/DB``;
    ``ADK_RX_BROKER_PREFIX`` sets the key prefix) let several server processes serve the same
    sessions. ``memory_service_uri`` with ``memory_embedder`` names a vector memory (see
    :func:`adk_rx.memory.uri.memory_service_from_uri`; default keyword memory in process).
    ``artifact_service_uri`` names the artifact store; ``credential_service_uri`` where users'
    credentials for tools are kept (``memory://``, or a SQL URL for
    :class:`~adk_rx.auth.SqlCredentialService`, keyed by ``ADK_RX_CREDENTIAL_KEY``). With a
    SQL ``session_service_uri``,
    artifacts and memory not named otherwise go to the same database
    (:mod:`adk_rx.cli.server.stores`).

    The Host check allows the loopback names and ``host`` (unless it is a wildcard
    address); ``ADK_RX_ALLOWED_HOSTS`` (comma-separated) adds names, e.g. the machine's
    name when binding ``0.0.0.0``. ``ADK_RX_TOKENS`` (``token=user,...``) turns on bearer
    tokens. With the OpenTelemetry SDK installed the server keeps recent spans for the trace
    view; ``otlp_endpoint`` (or ``OTEL_EXPORTER_OTLP_ENDPOINT``) exports them over OTLP/HTTP.
    tokens. ``limits`` bounds requests, runs and kept logs (default :class:`Limits`).
    ``a2a`` serves every app over A2A too, at ``/a2a/{app_name}``.
    """
    import uvicorn

    allowed: list[str] = list(DEFAULT_HOSTS)
    if host not in ("0.0.0.0", "::", ""):
        allowed.append(f"[{host}]" if ":" in host else host)
    extra = os.environ.get("ADK_RX_ALLOWED_HOSTS", "")
    allowed.extend(name.strip() for name in extra.split(",") if name.strip())
    from adk_rx.telemetry.setup import setup_sdk

    session_service = session_service_from_uri(session_service_uri) if session_service_uri else None
    artifact_service = (
        artifact_service_from_uri(artifact_service_uri) if artifact_service_uri else None
    )
    credential_service = (
        credential_service_from_uri(credential_service_uri) if credential_service_uri else None
    )
    memory_service = None
    if memory_service_uri:
        from adk_rx.memory.uri import memory_service_from_uri

        memory_service = memory_service_from_uri(memory_service_uri, memory_embedder)
    sdk = setup_sdk(otlp_endpoint=otlp_endpoint, keep_spans=True)
    if sdk is not None:
        sdk.install_globally()  # a tool's own spans go to the same place
    broker = None
    if broker_url:
        from .cluster.broker import Broker

        prefix = os.environ.get("ADK_RX_BROKER_PREFIX") or "adk_rx"
        meters = sdk.meter_provider if sdk is not None else None
        broker = Broker(broker_url, prefix=prefix, meter_provider=meters)
    app = create_app(
        agents_dir,
        web=web,
        tokens=_env_tokens(),
        allowed_hosts=allowed,
        ui=ui,
        allow_origins=allow_origins,
        tracer_provider=sdk.tracer_provider if sdk is not None else None,
        meter_provider=sdk.meter_provider if sdk is not None else None,
        span_store=sdk.span_store if sdk is not None else None,
        limits=limits,
        session_service=session_service,
        artifact_service=artifact_service,
        memory_service=memory_service,
        credential_service=credential_service,
        broker=broker,
        data_dir=data_dir,
        a2a=a2a,
    )
    freeze_startup_heap()
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level="info",
            timeout_graceful_shutdown=5,
            # A WebSocket frame larger than a request body is refused (1009) before it is
            # buffered whole; the live route checks the same bound on what gets through.
            ws_max_size=(limits or Limits()).max_body_bytes,
            server_header=False,  # a probe learns nothing of what serves it
        )
    finally:
        if sdk is not None:
            sdk.shutdown()  # exports what is still buffered
