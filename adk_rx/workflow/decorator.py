"""``node``: a decorator (or a call) that makes a node of a function, agent or node."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from adk_rx.errors import ConfigurationError
from adk_rx.workflow.build import build_node
from adk_rx.workflow.nodes import BaseNode
from adk_rx.workflow.retry import RetryConfig

__all__ = ["node"]


def node(
    node_like: Any = None,
    *,
    name: str | None = None,
    rerun_on_resume: bool | None = None,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    parallel_worker: bool = False,
    max_parallel_workers: int | None = None,
    auth_config: Any = None,
    require_confirmation: bool | Callable[..., bool] | None = None,
    parameter_binding: Literal["state", "node_input"] = "state",
) -> Any:
    """Wraps a function, agent or node as a node, or overrides a node's fields.

    ``@node``, ``@node(retry_config=..., timeout=...)`` on a function, or
    ``node(my_func, name="other")`` (google-adk 2.13's signature).

    Raises:
        ConfigurationError: ``parallel_worker``, ``auth_config`` or ``require_confirmation``
            (not supported yet), or ``max_parallel_workers`` without a parallel worker.
    """
    if max_parallel_workers is not None and not parallel_worker:
        raise ConfigurationError(
            "max_parallel_workers can only be set when parallel_worker is True."
        )
    if parallel_worker or auth_config is not None or require_confirmation:
        raise ConfigurationError(
            "node(): parallel_worker, auth_config and require_confirmation are not supported "
            "by adk_rx yet (fan out with a tuple of nodes in the edges instead)"
        )

    def wrap(target: Any) -> BaseNode:
        return build_node(
            target,
            name=name,
            rerun_on_resume=rerun_on_resume,
            retry_config=retry_config,
            timeout=timeout,
            parameter_binding=parameter_binding,
        )

    if node_like is None:
        return wrap
    return wrap(node_like)
