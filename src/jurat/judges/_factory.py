"""``make_judge``: a pinned configuration → its adapter; HTTP judges are imported lazily."""

from __future__ import annotations

from jurat.errors import ConfigError
from jurat.judges._protocol import Judge
from jurat.judges._replay import ReplayJudge
from jurat.judges._sim import SimJudge
from jurat.judges._stubs import StubJudge
from jurat.models import JudgeConfig

__all__ = ["make_judge"]


def make_judge(config: JudgeConfig) -> Judge:
    """The adapter for ``config.provider``.

    API keys are read later, at the first call, from ``config.api_key_env``;
    ``Judge.preflight`` reports a missing one before any request.
    """
    provider = config.provider
    if provider == "sim":
        return SimJudge(config)
    if provider.startswith("stub:"):
        return StubJudge(config)
    if provider == "replay":
        return ReplayJudge(config)
    if provider == "openai-compat":
        from jurat.judges._openai import OpenAICompatJudge

        return OpenAICompatJudge(config)
    if provider == "anthropic":
        from jurat.judges._anthropic import AnthropicJudge

        return AnthropicJudge(config)
    raise ConfigError(f"judge {config.id}: unknown provider {provider!r}")
