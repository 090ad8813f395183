"""``anthropic``: the official ``anthropic`` SDK; structured output through a forced tool call.

The tool's ``input_schema`` is the provider-facing schema; the tool call's input is read
from the raw response body with the same strict parser as every answer (duplicate keys in
it are refused before any model of the SDK could keep the last one), then validated.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from jurat.errors import ConfigError, DependencyError, JudgeOutputError
from jurat.judges._http import connection_failure, http_client, status_error, usage_of
from jurat.judges._protocol import CallKind, JudgeCall, RawResponse, TransportFailure
from jurat.judges._validate import strict_loads
from jurat.models import JudgeConfig

__all__ = ["AnthropicJudge", "parse_message"]

_DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
_MAX_ENVELOPE = 8 * 1024 * 1024
_FINISH = {"end_turn": "stop", "tool_use": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise DependencyError(
            "the anthropic judge needs the anthropic SDK: pip install 'jurat[anthropic]'"
        ) from exc
    return anthropic


def parse_message(body: bytes, tool: str | None) -> RawResponse:
    """Read a Messages API envelope strictly: the forced tool's input, or the text blocks."""
    try:
        data = strict_loads(body, limit=_MAX_ENVELOPE)
    except JudgeOutputError as exc:
        kind = "malformed_response" if exc.kind == "malformed_json" else exc.kind
        return RawResponse(text=None, envelope_error=kind)
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        return RawResponse(text=None, envelope_error="malformed_response")
    usage = usage_of(data, "input_tokens", "output_tokens")
    stop = data.get("stop_reason")
    meta: dict[str, Any] = {
        "returned_model": data.get("model") if isinstance(data.get("model"), str) else None,
        "usage": usage,
        "finish": _FINISH.get(stop, stop) if isinstance(stop, str) else None,
    }
    blocks = [b for b in data["content"] if isinstance(b, dict)]
    if tool is None:
        texts = [b.get("text") for b in blocks if b.get("type") == "text"]
        if not all(isinstance(t, str) for t in texts):
            return RawResponse(text=None, envelope_error="malformed_response", **meta)
        return RawResponse(text="".join(str(t) for t in texts) if texts else None, **meta)
    calls = [b for b in blocks if b.get("type") == "tool_use" and b.get("name") == tool]
    if not calls:
        if meta["finish"] in ("refusal", "length"):
            return RawResponse(text=None, **meta)
        return RawResponse(text=None, envelope_error="no_tool_call", **meta)
    if len(calls) > 1 or not isinstance(calls[0].get("input"), dict):
        return RawResponse(text=None, envelope_error="malformed_response", **meta)
    return RawResponse(text=json.dumps(calls[0]["input"]), **meta)


class AnthropicJudge:
    """A judge behind Anthropic's Messages API."""

    reproducible = False

    def __init__(self, config: JudgeConfig) -> None:
        _import_anthropic()  # a missing optional SDK is a configuration error, found early
        self._config = config
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def config(self) -> JudgeConfig:
        return self._config

    def supports(self, kind: CallKind) -> bool:
        return True

    def _api_key(self) -> str:
        env = self._config.api_key_env or _DEFAULT_KEY_ENV
        value = os.environ.get(env, "")
        if not value:
            raise ConfigError(
                f"judge {self._config.id}: the environment variable {env} (api_key_env) "
                "is not set; export the Anthropic API key there"
            )
        return value

    def preflight(self) -> None:
        self._api_key()

    def _client_for_loop(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop:
            return self._client
        config = self._config
        self._client = _import_anthropic().AsyncAnthropic(
            api_key=self._api_key(),
            base_url=config.base_url,
            max_retries=0,  # jurat retries, and records every attempt of the sample
            timeout=config.timeout_s,
            http_client=http_client(config, config.base_url),
        )
        self._loop = loop
        return self._client

    def _body(self, call: JudgeCall) -> bytes:
        prompt = call.prompt
        body: dict[str, Any] = {
            "model": self._config.model,
            "max_tokens": call.max_tokens,
            "temperature": call.temperature,
            "messages": [{"role": "user", "content": prompt.user}],
        }
        if prompt.system:
            body["system"] = prompt.system
        if prompt.json_schema is not None and prompt.schema_name:
            body["tools"] = [
                {
                    "name": prompt.schema_name,
                    "description": "Record your judgement. Call this exactly once.",
                    "input_schema": prompt.json_schema,
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": prompt.schema_name}
        return json.dumps(body).encode("utf-8")

    async def complete(self, call: JudgeCall) -> RawResponse:
        anthropic = _import_anthropic()
        import httpx2

        client = self._client_for_loop()
        tool = call.prompt.schema_name if call.prompt.json_schema is not None else None
        try:
            response = await client.post(
                "/v1/messages",
                content=self._body(call),
                options={"headers": {"content-type": "application/json"}},
                cast_to=httpx2.Response,
            )
            body: bytes = await response.aread()
        except anthropic.APIStatusError as exc:
            retry_after = exc.response.headers.get("retry-after")
            message = f"HTTP {exc.status_code}: {exc.message}"
            raise status_error(exc.status_code, message, retry_after) from exc
        except anthropic.APITimeoutError as exc:
            raise TransportFailure("the request timed out", kind="timeout") from exc
        except anthropic.APIConnectionError as exc:
            raise connection_failure(exc) from exc
        return parse_message(body, tool)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()
