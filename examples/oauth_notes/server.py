"""The example's OAuth2 server and Notes API, on 127.0.0.1 (adk_rx's local test server).

    python examples/oauth_notes/server.py [PORT]      # default 8931; Ctrl-C stops it

Its sign-in page consents at once and redirects with a one-time code, so the whole flow runs
offline; the client id and secret are the ones agent.py is configured with.
"""

from __future__ import annotations

import signal
import sys
import threading

from adk_rx.testing.oauth_server import LocalOAuthServer, serve

CLIENT_ID = "notes-example"
CLIENT_SECRET = "notes-example-secret"


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8931
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = LocalOAuthServer(client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    with serve(server, port=port) as running:
        print(f"Notes API and OAuth2 server on {running.url}", flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
