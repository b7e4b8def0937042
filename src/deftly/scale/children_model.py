"""The parent's model as plain settings, for a child that runs on another machine.

A provider object holds an HTTP client and a key: neither travels. What travels is what
`deftly.agent.models.make_provider` needs to build the same provider again: the provider
kind, model id, endpoint, sampling settings, and the *name* of the environment variable
holding the key. The key's value is read from the worker's environment; `forwarded_env`
gives the variables worth forwarding through Ray's `runtime_env` (set here, not on a
worker), so the secret never sits in a task's arguments.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from deftly.agent.models import BASE_URL_ENV, DEFAULT_KEY_ENV
from deftly.config.models import ModelSettings
from deftly.providers.base import ChatProvider

_SAMPLING = ("temperature", "reasoning_effort", "max_output_tokens", "timeout", "headers")


def settings_of(provider: ChatProvider) -> ModelSettings:
    """Settings that rebuild `provider` elsewhere (its key from the environment there)."""
    kind = provider.name if provider.name in DEFAULT_KEY_ENV else "openai"
    values: dict[str, Any] = {"provider": kind, "model": provider.model}
    base_url = getattr(provider, "base_url", None)
    if isinstance(base_url, str):
        values["base_url"] = base_url
    key_env = getattr(provider, "_api_key_env", None)  # the providers keep the name only
    if isinstance(key_env, str):
        values["api_key_env"] = key_env
    for name in _SAMPLING:
        value = getattr(provider, name, None)
        if value is not None:
            values[name] = dict(value) if isinstance(value, Mapping) else value
    streaming = getattr(provider, "streaming", None)
    if isinstance(streaming, bool):
        values["stream"] = streaming
    return ModelSettings.model_validate(values)


def forwarded_env(
    settings: ModelSettings, environ: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """The environment variables a worker needs for `settings` (its key, a base URL from
    the environment) that are set here."""
    names = [
        settings.api_key_env or DEFAULT_KEY_ENV[settings.provider],
        BASE_URL_ENV[settings.provider],
    ]
    return {name: environ[name] for name in names if environ.get(name)}
