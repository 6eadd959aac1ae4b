"""RunConfig: bad settings raise ConfigurationError, naming each setting."""

from __future__ import annotations

import pytest

from adk_rx import ConfigurationError, RunConfig


def test_bad_settings_raise_configuration_error_naming_each_of_them() -> None:
    with pytest.raises(ConfigurationError) as raised:
        RunConfig(timeout=-1, max_llm_calls="many", unknown=1)  # type: ignore[arg-type]
    message = str(raised.value)
    assert "timeout" in message and "max_llm_calls" in message and "unknown" in message


def test_good_settings_are_kept() -> None:
    config = RunConfig(timeout=2, tool_timeout=0.5, max_llm_calls=3)
    assert (config.timeout, config.tool_timeout, config.max_llm_calls) == (2.0, 0.5, 3)
