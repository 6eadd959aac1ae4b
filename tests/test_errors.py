"""The error tree: every error adk_rx defines is an AdkRxError, defined in an errors module
(``adk_rx.errors``; the API server's request errors in ``adk_rx.cli.server.errors``)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import adk_rx
from adk_rx import errors


def test_every_exception_class_is_defined_in_an_errors_module_under_adk_rx_error() -> None:
    outside: list[str] = []
    for info in pkgutil.walk_packages(adk_rx.__path__, "adk_rx."):
        if info.name.endswith("__main__") or info.name.rsplit(".", 1)[-1] == "errors":
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and not issubclass(value, Warning)
                and value.__module__ == info.name
                and not name.startswith("_")
            ):
                outside.append(f"{info.name}.{name}")
    assert outside == []
    import adk_rx.cli.server.errors as server_errors

    for module in (errors, server_errors):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value):  # (the server's module also names failure_status)
                assert issubclass(value, errors.AdkRxError), name


def test_server_refusals_are_adk_rx_errors() -> None:
    for cls in (
        errors.AppNotFoundError,
        errors.SessionBusyError,
        errors.TooManyRunsError,
    ):
        assert issubclass(cls, errors.ServerError) and issubclass(cls, errors.AdkRxError)
