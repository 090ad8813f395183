"""``anthropic``: Anthropic's Messages API; structured output through a forced tool call.

The request is the documented one: ``POST {base_url}/v1/messages`` with the key in
``x-api-key``, ``anthropic-version: 2023-06-01`` and a JSON body, built and sent by jurat
(judges/_http.py); no SDK is on the path. The tool's ``input_schema`` is the
provider-facing schema; the tool call's input is read from the raw response body with the
same strict parser as every answer (duplicate keys in it are refused before anything could
keep the last one), then validated.

The base URL is always the one jurat resolved and checked (judges/_destinations.py: the
configured ``base_url``, else ``https://api.anthropic.com``); no environment variable
(``ANTHROPIC_BASE_URL``, ``ANTHROPIC_AUTH_TOKEN``, a profile's URL) is read, so the
artifact and the key go nowhere but where the campaign allowed.
"""

from __future__ import annotations

import json
from typing import Any

from jurat.judges._destinations import endpoint
from jurat.judges._http import HTTPJudge, load_envelope, unusable, usage_of
from jurat.judges._protocol import JudgeCall, RawResponse
from jurat.models import JudgeConfig

__all__ = ["API_VERSION", "AnthropicJudge", "parse_message"]

_DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
#: The Messages API version jurat's requests and envelope parser are written for.
API_VERSION = "2023-06-01"
_FINISH = {"end_turn": "stop", "tool_use": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def parse_message(body: bytes, tool: str | None) -> RawResponse:
    """Read a Messages API envelope strictly: the forced tool's input, or the text blocks."""
    data = load_envelope(body)
    if isinstance(data, RawResponse):
        return data
    usage, bad_usage = usage_of(data, "input_tokens", "output_tokens")
    stop = data.get("stop_reason")
    # Recorded as RawResponse shapes them (tokens, else digest and length: _protocol.py).
    meta: dict[str, Any] = {
        "returned_model": data.get("model") if isinstance(data.get("model"), str) else None,
        "usage": usage,
        "finish": _FINISH.get(stop, stop) if isinstance(stop, str) else None,
    }
    if bad_usage is not None:
        # A count that is no count is no bill: the sample is an error, charged in full.
        return unusable(body, "bad_usage", bad_usage, **meta)
    if not isinstance(data.get("content"), list):
        return unusable(body, "malformed_response", "content", **meta)
    blocks = [(i, b) for i, b in enumerate(data["content"]) if isinstance(b, dict)]
    if tool is None:
        texts = [(i, b.get("text")) for i, b in blocks if b.get("type") == "text"]
        bad = next((i for i, t in texts if not isinstance(t, str)), None)
        if bad is not None:
            return unusable(body, "malformed_response", f"content/{bad}/text", **meta)
        return RawResponse(text="".join(str(t) for _, t in texts) if texts else None, **meta)
    calls = [(i, b) for i, b in blocks if b.get("type") == "tool_use" and b.get("name") == tool]
    if not calls:
        if meta["finish"] in ("refusal", "length"):
            return RawResponse(text=None, **meta)
        return unusable(body, "no_tool_call", "content", **meta)
    if len(calls) > 1:
        return unusable(body, "malformed_response", "content", **meta)
    index, call = calls[0]
    if not isinstance(call.get("input"), dict):
        return unusable(body, "malformed_response", f"content/{index}/input", **meta)
    return RawResponse(text=json.dumps(call["input"]), **meta)


class AnthropicJudge(HTTPJudge):
    """A judge behind Anthropic's Messages API."""

    _path = "/v1/messages"

    def __init__(self, config: JudgeConfig) -> None:
        super().__init__(config, endpoint(config))

    def _api_key(self) -> str:
        env = self._config.api_key_env or _DEFAULT_KEY_ENV
        return self._key_from(env, "Anthropic API key")

    def _auth_headers(self) -> dict[str, str]:
        return {"x-api-key": self._api_key(), "anthropic-version": API_VERSION}

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
        tool = call.prompt.schema_name if call.prompt.json_schema is not None else None
        return parse_message(await self._post(self._body(call)), tool)
