"""The calling agent of the A2A tests: the remote helper at ``$A2A_HELPER_URL``, as root."""

import os

from adk_rx.a2a import RemoteA2aAgent

root_agent = RemoteA2aAgent(
    name="remote_helper", agent_card=os.environ.get("A2A_HELPER_URL", "http://127.0.0.1:1")
)
