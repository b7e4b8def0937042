"""Which model a run talks to: `[model]`, a `[models.NAME]` profile or a model id from
`--model`, the command line's `--provider` / `--base-url`, and the key from the
environment — then the provider for it.

Keys come only from the environment (`api_key_env`, default OPENAI_API_KEY or
ANTHROPIC_API_KEY). A server on this machine (localhost, 127.0.0.0/8, ::1) usually needs
none, so when no key is set for a loopback `base_url` a placeholder is sent (the SDKs
refuse to send none at all); anywhere else a missing key is an error that says which
variable to set.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from deftly.config import DeftlyConfig, user_config_dir
from deftly.config.models import ModelSettings
from deftly.providers.base import ChatProvider

LOCAL_PLACEHOLDER_KEY = "no-key-needed"
"""The key sent to a loopback server when none is set."""

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
PROVIDERS = ("openai", "anthropic")

_ENDPOINT_FIELDS = frozenset({"base_url", "api_key_env", "headers"})
"""Fields a profile of another provider does not inherit from `[model]` (an Anthropic
profile must not be sent to `[model]`'s local OpenAI-compatible server, with its key)."""


class ModelError(Exception):
    """No usable model: the message says what is missing and how to set it (`deftly run`
    prints it and exits 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def resolve_model(
    config: DeftlyConfig,
    name: str | None = None,
    *,
    provider: str | None = None,
    base_url: str | None = None,
) -> ModelSettings:
    """The settings of the model to use. `name` is a `[models.NAME]` profile (the fields it
    sets, over `[model]`'s) or else a model id (over `[model]`); `provider` and `base_url`
    (from the command line) override both."""
    settings = config.model
    if name:
        profile = config.models.get(name)
        if profile is not None:
            settings = _over(settings, profile)
        else:
            settings = settings.model_copy(update={"model": name})
    if provider:
        if provider not in PROVIDERS:
            raise ModelError(
                f"Unknown provider {provider!r}: use --provider openai (chat completions: "
                "OpenAI, Kimi, DeepSeek, vLLM, Ollama, llama.cpp, OpenRouter, ...) or "
                "--provider anthropic."
            )
        settings = settings.model_copy(update={"provider": provider})
    if base_url:
        settings = settings.model_copy(update={"base_url": base_url})
    if not settings.model:
        raise ModelError(_no_model_message(config))
    return settings


def _over(base: ModelSettings, profile: ModelSettings) -> ModelSettings:
    fields = profile.model_fields_set
    update: dict[str, Any] = {field: getattr(profile, field) for field in fields}
    if "provider" in fields and profile.provider != base.provider:
        for field in _ENDPOINT_FIELDS - fields:
            update[field] = ModelSettings.model_fields[field].get_default(call_default_factory=True)
    return base.model_copy(update=update)


def _no_model_message(config: DeftlyConfig) -> str:
    message = (
        "No model is configured. Set one in your config file "
        f'({user_config_dir() / "config.toml"}: [model] model = "gpt-4.1", with provider '
        "and base_url for other servers), or pass --model MODEL_ID. A workspace's own "
        ".deftly/config.toml may set it only once you trust the folder (deftly trust)."
    )
    if config.models:
        names = ", ".join(sorted(config.models))
        message += f" Profiles you can pick with --model: {names}."
    return message


def is_loopback(url: str | None) -> bool:
    """Whether `url` points at this machine."""
    if not url:
        return False
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def make_provider(settings: ModelSettings, environ: Mapping[str, str] = os.environ) -> ChatProvider:
    """The provider for `settings`, its key read from `environ`; `OPENAI_BASE_URL` /
    `ANTHROPIC_BASE_URL` apply when `base_url` is unset."""
    kind = settings.provider
    key_env = settings.api_key_env or DEFAULT_KEY_ENV[kind]
    base_url = settings.base_url or environ.get(BASE_URL_ENV[kind]) or None
    api_key = environ.get(key_env) or None
    if api_key is None:
        if not is_loopback(base_url):
            where = base_url or ("OpenAI's API" if kind == "openai" else "Anthropic's API")
            raise ModelError(
                f"No API key for model {settings.model!r} at {where}: set {key_env} in the "
                "environment (or name another variable with api_key_env in [model]). A "
                "server that needs no key accepts any value."
            )
        api_key = LOCAL_PLACEHOLDER_KEY
    images = settings.images_in_tool_results
    common: dict[str, Any] = {
        "model": settings.model,
        "api_key": api_key,
        "api_key_env": key_env,
        "base_url": base_url,
        "temperature": settings.temperature,
        "reasoning_effort": settings.reasoning_effort,
        "headers": dict(settings.headers),
        "timeout": settings.timeout,
        "stream": settings.stream,
    }
    if settings.max_output_tokens is not None:  # else each provider's own default
        common["max_output_tokens"] = settings.max_output_tokens
    if kind == "anthropic":
        from deftly.providers.anthropic_messages import AnthropicProvider

        return AnthropicProvider(
            **common, images_in_tool_results=True if images is None else images
        )
    from deftly.providers.openai_chat import OpenAIProvider

    return OpenAIProvider(
        **common,
        images_in_tool_results=bool(images),
        reasoning_echo=settings.reasoning_echo,
    )
