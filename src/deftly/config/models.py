"""`[model]`, `[models.NAME]` and `[loop]`: which model the agent talks to, and how its
loop runs.

API keys never live in a config file: `api_key_env` names the environment variable that
holds one. In an untrusted workspace these tables are withheld like every setting not
known to be safe (a cloned repository must not send your key to its own `base_url`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deftly.config.base import Section

ProviderKind = Literal["openai", "anthropic"]


class ModelSettings(Section):
    """One model: `[model]`, or a named profile `[models.NAME]` (a profile's fields override
    `[model]`'s; `--model NAME` picks a profile, or is taken as a model id)."""

    provider: ProviderKind = Field(
        "openai",
        description=(
            '"openai" (chat completions: OpenAI, Kimi, DeepSeek, vLLM, Ollama, llama.cpp, '
            'OpenRouter, ...) or "anthropic" (messages API).'
        ),
    )
    model: str = Field("", description="The model id sent to the API.")
    base_url: str | None = Field(
        None, description="The API's base URL (None: the SDK's default or its *_BASE_URL env)."
    )
    api_key_env: str | None = Field(
        None,
        description=(
            "The environment variable holding the key (None: OPENAI_API_KEY or "
            "ANTHROPIC_API_KEY by provider)."
        ),
    )
    context_window: int = Field(
        128_000, gt=0, description="The model's context window in tokens (drives compaction)."
    )
    max_output_tokens: int | None = Field(
        None, gt=0, description="Most tokens per reply (None: the provider's default)."
    )
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature.")
    reasoning_effort: str | None = Field(
        None, description='Reasoning effort for models that take one ("low", "medium", "high").'
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="Extra HTTP headers sent with every request."
    )
    stream: bool = Field(True, description="Stream replies (false for servers that cannot).")
    images_in_tool_results: bool | None = Field(
        None,
        description=(
            "Whether images may go back inside tool results (None: by provider: yes for "
            "anthropic, no for openai)."
        ),
    )
    timeout: float = Field(600.0, gt=0, description="Seconds one request may take.")
    reasoning_echo: Literal["auto", "tool_calls", "always", "never"] = Field(
        "auto",
        description=(
            "openai only: when the model's reasoning is sent back as `reasoning_content`: "
            '"tool_calls" on assistant messages that call tools (Kimi thinking models need '
            'it), "always", "never" (DeepSeek\'s reasoner refuses it), "auto": "tool_calls" '
            'for Kimi/Moonshot models or endpoints, else "never".'
        ),
    )


class LoopConfig(Section):
    """`[loop]`: the agent loop's limits."""

    max_steps: int = Field(
        100, ge=0, description="Most steps in one turn (0: no limit); `--max-steps` overrides."
    )
    max_attempts_per_step: int = Field(
        8, ge=1, description="Tries of one model request on retryable errors."
    )
    elide_at: float = Field(
        0.7,
        gt=0,
        le=1,
        description=(
            "When a request's prompt passes this fraction of the window, old tool outputs "
            "are replaced by pointers to their files."
        ),
    )
    compact_at: float = Field(
        0.85,
        gt=0,
        le=1,
        description=(
            "When it still passes this fraction, older turns are compacted into a summary "
            "the model writes."
        ),
    )
    keep_recent_steps: int = Field(
        4, ge=1, description="Steps kept verbatim when tool outputs are elided or turns compacted."
    )
    max_turn_tokens: int = Field(
        0,
        ge=0,
        description=(
            "Most tokens (prompt plus reply, summed over its requests) one turn may use; "
            'the turn then ends with stop_reason "budget" (0: no limit).'
        ),
    )
    max_turn_seconds: float = Field(
        0,
        ge=0,
        description='Most wall time one turn may take before it ends with "budget" (0: no limit).',
    )
