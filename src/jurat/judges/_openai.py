"""``openai-compat``: any OpenAI-compatible chat completions endpoint.

OpenAI, DeepSeek, Groq, NVIDIA NIM, vLLM, Ollama and llama.cpp's server all take the same
request: ``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>`` and a
JSON body (OpenAI's API reference, "Create chat completion"). Structured output is asked
for with ``response_format: json_schema`` where the endpoint supports it (an endpoint that
refuses it with HTTP 400 is asked again without it, once, and remembered); the answer is
parsed and validated independently in every case, because a provider's schema mode does not
make the judgment true (seed 000).

jurat builds the request and parses the raw answer itself (judges/_http.py): no SDK is on
the path. The SDK's typed path spent more CPU per call than the whole validation, its
import alone was a third of a second of every run's start-up, and the raw body is needed
anyway to refuse duplicate keys.

The base URL is always the one jurat resolved and checked (judges/_destinations.py: the
configured ``base_url``, else ``https://api.openai.com/v1``); no environment variable
(``OPENAI_BASE_URL``, ``OPENAI_ORG_ID``, ...) is read.
"""

from __future__ import annotations

import json
from typing import Any

from jurat.errors import ConfigError
from jurat.judges._destinations import endpoint
from jurat.judges._http import HTTPJudge, load_envelope, unusable, usage_of
from jurat.judges._protocol import JudgeCall, RawResponse, TransportFailure
from jurat.models import JudgeConfig

__all__ = ["OpenAICompatJudge", "parse_chat_completion"]


def parse_chat_completion(body: bytes) -> RawResponse:
    """Read a chat.completion envelope strictly; problems become ``envelope_error`` kinds."""
    data = load_envelope(body)
    if isinstance(data, RawResponse):
        return data
    usage, bad_usage = usage_of(data, "prompt_tokens", "completion_tokens")
    model = data.get("model") if isinstance(data.get("model"), str) else None
    fingerprint = data.get("system_fingerprint")
    # Recorded as RawResponse shapes them (tokens, else digest and length: _protocol.py).
    meta: dict[str, Any] = {
        "returned_model": model,
        "system_fingerprint": fingerprint if isinstance(fingerprint, str) else None,
        "usage": usage,
    }
    if bad_usage is not None:
        # A count that is no count is no bill: the sample is an error, charged in full.
        return unusable(body, "bad_usage", bad_usage, **meta)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return unusable(body, "empty_response", "choices", **meta)
    if len(choices) > 1:
        return unusable(body, "malformed_response", "choices", **meta)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return unusable(body, "malformed_response",
                        "choices/0/message" if isinstance(choice, dict) else "choices/0",
                        **meta)
    content = message.get("content")
    refusal = message.get("refusal")
    finish = choice.get("finish_reason")
    if content is not None and not isinstance(content, str):
        return unusable(body, "malformed_response", "choices/0/message/content", **meta)
    return RawResponse(
        text=content,
        finish=finish if isinstance(finish, str) else None,
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        **meta,
    )


class OpenAICompatJudge(HTTPJudge):
    """A judge behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    _path = "/chat/completions"

    def __init__(self, config: JudgeConfig) -> None:
        super().__init__(config, endpoint(config))
        self._structured = config.structured_output
        self._formats: dict[str | None, tuple[object, str]] = {}

    def _api_key(self) -> str:
        env = self._config.api_key_env
        if env is None:
            if self._config.base_url is None:
                raise ConfigError(
                    f"judge {self._config.id}: set api_key_env to the environment variable "
                    "holding the API key (only a self-hosted base_url may go without one)"
                )
            return "no-key"  # self-hosted servers (vLLM, Ollama, llama.cpp) take any key
        return self._key_from(env, "API key")

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key()}"}

    def _body(self, call: JudgeCall, structured: bool) -> bytes:
        messages = []
        if call.prompt.system:
            messages.append({"role": "system", "content": call.prompt.system})
        messages.append({"role": "user", "content": call.prompt.user})
        body: dict[str, Any] = {
            "model": self._config.model,
            "messages": messages,
            "temperature": call.temperature,
            "max_tokens": call.max_tokens,
        }
        text = json.dumps(body)
        if structured:
            text = f"{text[:-1]}, \"response_format\": {self._response_format(call)}}}"
        return text.encode("utf-8")

    def _response_format(self, call: JudgeCall) -> str:
        """The ``response_format`` member's JSON, serialised once per schema: it is a
        third of the work of serialising a request."""
        name, schema = call.prompt.schema_name, call.prompt.json_schema
        cached = self._formats.get(name)
        # Equal, not the same: each prompt record holds its own copy of the schema.
        if cached is None or cached[0] != schema:
            text = json.dumps({"type": "json_schema",
                               "json_schema": {"name": name, "schema": schema, "strict": False}})
            cached = self._formats[name] = (schema, text)
        return cached[1]

    async def complete(self, call: JudgeCall) -> RawResponse:
        structured = self._structured and call.prompt.json_schema is not None
        try:
            body = await self._post(self._body(call, structured))
        except TransportFailure as exc:
            if not (structured and exc.status == 400):
                raise
            # The endpoint refused response_format: ask once without it, and remember.
            body = await self._post(self._body(call, False))
            self._structured = False
        return parse_chat_completion(body)
