"""``openai-compat``: the official ``openai`` SDK against any OpenAI-compatible endpoint.

OpenAI, DeepSeek, Groq, NVIDIA NIM, vLLM, Ollama and llama.cpp's server all take the same
``/chat/completions`` request with a configurable ``base_url``. Structured output is asked
for with ``response_format: json_schema`` where the endpoint supports it (an endpoint that
refuses it with HTTP 400 is asked again without it, once, and remembered); the answer is
parsed and validated independently in every case, because a provider's schema mode does not
make the judgment true (seed 000).

The request goes through the SDK's own client (auth, URL, headers, status-code exceptions,
timeouts) with a body jurat serialises itself and the raw response body jurat parses
itself: the typed ``create()`` path spends more CPU rebuilding the request dictionaries and
the response model than the whole validation costs (bench/orchestration.py), and the raw
body is needed anyway to refuse duplicate keys.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any

from jurat.errors import ConfigError, DependencyError, JudgeOutputError
from jurat.judges._http import connection_failure, http_client, status_error, usage_of
from jurat.judges._protocol import CallKind, JudgeCall, RawResponse, TransportFailure
from jurat.judges._validate import strict_loads
from jurat.models import JudgeConfig

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAICompatJudge", "parse_chat_completion"]

_DEFAULT_BASE = "https://api.openai.com/v1"
_MAX_ENVELOPE = 8 * 1024 * 1024
_JSON_HEADERS = {"content-type": "application/json"}


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - openai is a core dependency
        raise DependencyError(
            "the openai-compat judge needs the openai SDK: pip install openai"
        ) from exc
    return openai


def parse_chat_completion(body: bytes) -> RawResponse:
    """Read a chat.completion envelope strictly; problems become ``envelope_error`` kinds."""
    try:
        data = strict_loads(body, limit=_MAX_ENVELOPE)
    except JudgeOutputError as exc:
        kind = "malformed_response" if exc.kind == "malformed_json" else exc.kind
        return RawResponse(text=None, envelope_error=kind)
    if not isinstance(data, dict):
        return RawResponse(text=None, envelope_error="malformed_response")
    usage = usage_of(data, "prompt_tokens", "completion_tokens")
    model = data.get("model") if isinstance(data.get("model"), str) else None
    fingerprint = data.get("system_fingerprint")
    meta: dict[str, Any] = {
        "returned_model": model,
        "system_fingerprint": fingerprint if isinstance(fingerprint, str) else None,
        "usage": usage,
    }
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return RawResponse(text=None, envelope_error="empty_response", **meta)
    if len(choices) > 1:
        return RawResponse(text=None, envelope_error="malformed_response", **meta)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return RawResponse(text=None, envelope_error="malformed_response", **meta)
    content = message.get("content")
    refusal = message.get("refusal")
    finish = choice.get("finish_reason")
    if content is not None and not isinstance(content, str):
        return RawResponse(text=None, envelope_error="malformed_response", **meta)
    return RawResponse(
        text=content,
        finish=finish if isinstance(finish, str) else None,
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        **meta,
    )


class OpenAICompatJudge:
    """A judge behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    reproducible = False

    def __init__(self, config: JudgeConfig) -> None:
        self._config = config
        self._base_url = (config.base_url or _DEFAULT_BASE).rstrip("/")
        self._client: openai.AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._structured = config.structured_output

    @property
    def config(self) -> JudgeConfig:
        return self._config

    def supports(self, kind: CallKind) -> bool:
        return True

    def _api_key(self) -> str:
        env = self._config.api_key_env
        if env is None:
            if self._config.base_url is None:
                raise ConfigError(
                    f"judge {self._config.id}: set api_key_env to the environment variable "
                    "holding the API key (only a self-hosted base_url may go without one)"
                )
            return "no-key"  # self-hosted servers (vLLM, Ollama, llama.cpp) take any key
        value = os.environ.get(env, "")
        if not value:
            raise ConfigError(
                f"judge {self._config.id}: the environment variable {env} (api_key_env) "
                "is not set; export the API key there"
            )
        return value

    def preflight(self) -> None:
        self._api_key()

    def _client_for_loop(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop:
            return self._client
        config = self._config
        self._client = _import_openai().AsyncOpenAI(
            api_key=self._api_key(),
            base_url=self._base_url,
            max_retries=0,  # jurat retries, and records every attempt of the sample
            timeout=config.timeout_s,
            http_client=http_client(config, self._base_url),
        )
        self._loop = loop
        return self._client

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
        if structured:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": call.prompt.schema_name,
                    "schema": call.prompt.json_schema,
                    "strict": False,
                },
            }
        return json.dumps(body).encode("utf-8")

    async def complete(self, call: JudgeCall) -> RawResponse:
        client = self._client_for_loop()
        structured = self._structured and call.prompt.json_schema is not None
        try:
            body = await self._post(client, self._body(call, structured))
        except TransportFailure as exc:
            if not (structured and exc.status == 400):
                raise
            # The endpoint refused response_format: ask once without it, and remember.
            body = await self._post(client, self._body(call, False))
            self._structured = False
        return parse_chat_completion(body)

    async def _post(self, client: openai.AsyncOpenAI, content: bytes) -> bytes:
        openai_module = _import_openai()
        import httpx2

        try:
            response = await client.post(
                "/chat/completions",
                content=content,
                options={"headers": _JSON_HEADERS},
                cast_to=httpx2.Response,
            )
        except openai_module.APIStatusError as exc:
            retry_after = exc.response.headers.get("retry-after")
            message = f"HTTP {exc.status_code}: {exc.message}"
            raise status_error(exc.status_code, message, retry_after) from exc
        except openai_module.APITimeoutError as exc:
            raise TransportFailure("the request timed out", kind="timeout") from exc
        except openai_module.APIConnectionError as exc:
            raise connection_failure(exc) from exc
        raw: bytes = await response.aread()
        return raw

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()
