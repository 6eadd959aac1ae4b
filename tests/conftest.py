"""Suite-wide settings: no test may reach a hosted model."""

from adk_rx.models.safety import allow_real_model_calls

allow_real_model_calls(False)
