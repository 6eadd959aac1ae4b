"""``adk-rx``: the argparse entry point; each subcommand imports its module lazily."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from adk_rx.cli.server.limits import add_limit_options, limits_from_args
from adk_rx.errors import AdkRxError

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The ``adk-rx`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="adk-rx", description="Run adk_rx agents in a terminal or behind an HTTP server."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="chat with an agent in the terminal (or run one turn with -m)",
        description="Chat with an agent. AGENT is a folder whose agent.py defines root_agent, "
        "a .py file, or a module path (pkg.mod or pkg.mod:attr). Ctrl-C cancels the running "
        "turn (the session records CANCELLED).",
    )
    run.add_argument("agent", metavar="AGENT")
    run.add_argument("-m", "--message", metavar="TEXT", help="run one turn with TEXT and exit")
    run.add_argument(
        "--jsonl",
        action="store_true",
        help="print one Event JSON per line on stdout and nothing else (partial events "
        'included, marked "partial": true); messages go to stderr',
    )
    run.add_argument(
        "--in-memory",
        action="store_true",
        help="keep sessions in memory instead of .adk_rx/sessions.db under the working folder",
    )
    run.add_argument(
        "--user-id",
        metavar="U",
        help="the user id (default: user, as in the web page, so both show the same sessions)",
    )
    run.add_argument(
        "--session-id",
        metavar="S",
        help="resume this stored session: shows its last turns, then asks for any pending "
        "confirmation or long-running tool result (an unknown id is an error unless --create)",
    )
    run.add_argument(
        "--create",
        action="store_true",
        help="with --session-id: create the session when it does not exist",
    )
    model = run.add_mutually_exclusive_group()
    model.add_argument(
        "--model",
        metavar="NAME",
        help="use this model (e.g. gemini-2.5-flash, openai/gpt-4o-mini) instead of the "
        "agents' own (see adk_rx.cli.models)",
    )
    model.add_argument(
        "--replay", metavar="FILE", help="serve the model offline from a RecordingLlm JSONL file"
    )
    run.add_argument(
        "--trace",
        action="store_true",
        help="print the OpenTelemetry span tree of each turn (needs the otel extra)",
    )
    _otlp_argument(run)
    from adk_rx.cli.run_options import add_run_flags

    add_run_flags(run)

    for name, help_text in (
        ("api-server", "serve the apps of AGENTS_DIR over HTTP (ADK-compatible routes)"),
        ("web", "the api-server plus the dev UI page at /"),
    ):
        server = commands.add_parser(name, help=help_text, description=help_text)
        server.add_argument(
            "agents_dir", metavar="AGENTS_DIR", help="a folder with one sub-folder per app"
        )
        server.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
        server.add_argument("--port", type=int, default=8000, help="default: 8000")
        server.add_argument(
            "--allow-origins",
            metavar="ORIGIN",
            nargs="+",
            help="other origins whose pages may call the API (CORS), e.g. "
            "http://localhost:4200, or regex:PATTERN; off by default (the Host check stays)",
        )
        if name == "web":
            server.add_argument(
                "--ui",
                choices=("adk-rx", "google-adk"),
                default="adk-rx",
                help="the page to serve: adk-rx's own (default) or google-adk's dev UI at "
                '/dev-ui/ (needs google-adk: pip install "adk_rx[compat]")',
            )
        server.add_argument(
            "--a2a",
            action="store_true",
            help="also serve every app over A2A at /a2a/APP_NAME, its agent card at "
            '/a2a/APP_NAME/.well-known/agent-card.json (needs: pip install "adk_rx[a2a]")',
        )
        server.add_argument(
            "--session-service-uri",
            metavar="URL",
            default=os.environ.get("ADK_RX_SESSION_SERVICE_URI") or None,
            help="where sessions live: sqlite:///PATH, postgresql://USER@HOST:PORT/DB (shared "
            "by several server processes) or memory://; default sessions.db in --data-dir "
            "(env ADK_RX_SESSION_SERVICE_URI)",
        )
        server.add_argument(
            "--artifact-service-uri",
            metavar="URL",
            default=os.environ.get("ADK_RX_ARTIFACT_SERVICE_URI") or None,
            help="where artifacts live: memory://, file://DIR, sqlite:///PATH or "
            "postgresql://USER@HOST:PORT/DB; default the --session-service-uri database (in "
            "memory with memory://), else files in --data-dir (env ADK_RX_ARTIFACT_SERVICE_URI)",
        )
        server.add_argument(
            "--credential-service-uri",
            metavar="URL",
            default=os.environ.get("ADK_RX_CREDENTIAL_SERVICE_URI") or None,
            help="where users' credentials for tools are kept: memory:// (default), "
            "sqlite:///PATH or postgresql://USER@HOST:PORT/DB, encrypted with the Fernet key in "
            "ADK_RX_CREDENTIAL_KEY (env ADK_RX_CREDENTIAL_SERVICE_URI)",
        )
        server.add_argument(
            "--memory-service-uri",
            metavar="URL",
            default=os.environ.get("ADK_RX_MEMORY_SERVICE_URI") or None,
            help="where long-term memory lives, ranked by similarity (VectorMemoryService): "
            "sqlite:///PATH (a file of its own), postgresql://USER@HOST:PORT/DB or memory://; "
            "default keyword memory in the --session-service-uri database, else in this "
            "process (env ADK_RX_MEMORY_SERVICE_URI)",
        )
        server.add_argument(
            "--memory-embedder",
            metavar="NAME",
            default=os.environ.get("ADK_RX_MEMORY_EMBEDDER") or "hashing",
            help="how memories are embedded: hashing[:DIM] (default; offline word matching), "
            "local (a sentence model, needs the embed extra), gemini[:MODEL][@DIM] or "
            "openai[:MODEL][@DIM] (env ADK_RX_MEMORY_EMBEDDER)",
        )
        server.add_argument(
            "--data-dir",
            metavar="DIR",
            default=os.environ.get("ADK_RX_DATA_DIR") or None,
            help="where the server writes: sessions.db (without --session-service-uri), "
            "artifacts, and the eval sets and results users create; default .adk_rx under the "
            "working folder (env ADK_RX_DATA_DIR)",
        )
        server.add_argument(
            "--broker-url",
            metavar="URL",
            default=os.environ.get("ADK_RX_BROKER_URL") or None,
            help="redis://HOST:PORT/DB: invocations stream, cancel and recover through Redis "
            "so several server processes serve the same sessions (needs the server extra; env "
            "ADK_RX_BROKER_URL)",
        )
        _otlp_argument(server)
        add_limit_options(server)

    from adk_rx.cli.bench_cmd import add_bench_parser
    from adk_rx.cli.create_cmd import add_create_parser
    from adk_rx.cli.eval_cmd import add_eval_parser

    add_eval_parser(commands)
    add_bench_parser(commands)
    add_create_parser(commands)
    return parser


def _otlp_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="export spans and metrics over OTLP/HTTP to URL (/v1/traces, /v1/metrics); "
        "default OTEL_EXPORTER_OTLP_ENDPOINT (needs the otel extra)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``adk-rx``; returns the process exit code (130 after Ctrl-C)."""
    try:
        return _dispatch(argv)
    except KeyboardInterrupt:  # outside a turn (a turn handles its own): just leave
        return EXIT_INTERRUPTED


def _dispatch(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    _set_sigpipe(default=args.command == "run")
    if args.command == "run":
        from adk_rx.cli.run import run_command

        return run_command(args)
    if args.command == "eval":
        from adk_rx.cli.eval_cmd import eval_command

        return eval_command(args)
    if args.command == "bench":
        from adk_rx.cli.bench_cmd import bench_command

        return bench_command(args)
    if args.command == "create":
        from adk_rx.cli.create_cmd import create_command

        return create_command(args)
    from adk_rx.loading.loader import discover_apps

    try:
        discover_apps(args.agents_dir)
    except Exception as exc:
        print(f"adk-rx: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from adk_rx.cli.server import serve

    try:
        serve(
            args.agents_dir,
            args.host,
            args.port,
            args.command == "web",
            ui=getattr(args, "ui", "adk-rx"),
            allow_origins=args.allow_origins,
            otlp_endpoint=args.otlp_endpoint,
            limits=limits_from_args(args),
            session_service_uri=args.session_service_uri,
            memory_service_uri=args.memory_service_uri,
            artifact_service_uri=args.artifact_service_uri,
            credential_service_uri=args.credential_service_uri,
            memory_embedder=args.memory_embedder,
            broker_url=args.broker_url,
            data_dir=args.data_dir,
            a2a=args.a2a,
        )
    except AdkRxError as exc:  # e.g. --ui google-adk without google-adk, no otel extra
        print(f"adk-rx: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def _set_sigpipe(*, default: bool) -> None:
    """The default SIGPIPE for ``run`` only; servers ignore it.

    Like other Unix tools, ``adk-rx run ... | head`` ends quietly when its reader goes away
    instead of surfacing it as a failed turn. A server must never: a client or a model
    server that closes its socket would kill the process and every run in it (writing to
    the closed socket then fails with EPIPE, which the connection handles).
    """
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL if default else signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
