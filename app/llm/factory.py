"""Open the ChatModel the config (and command-line overrides) describe."""

from __future__ import annotations

import os

from deskmate.app.config import Config
from deskmate.app.llm.base import ChatModel, ModelError
from deskmate.app.llm.registry import recommended, resolve_model


class NoModelConfigured(ModelError):
    def __init__(self) -> None:
        rec = recommended()
        super().__init__(
            "no model is configured yet. Pick one:\n"
            f"  deskmate models pull {rec.name}        # {rec.description} ({rec.size_mb:,} MB)\n"
            "  deskmate models use PATH/TO/model.gguf  # a GGUF file you already have\n"
            "  deskmate models pull tiny && deskmate models use tiny"
            "   # 98 MB, offline, for trying deskmate\n"
            "or pass --model NAME|PATH for one run."
        )


def open_model(config: Config, model: str | None = None) -> ChatModel:
    """Load the model; ``model`` overrides ``[model] name`` for this run."""
    cfg = config.model
    if cfg.backend == "openai" and not model:
        from deskmate.app.llm.openai_compat import OpenAICompatibleModel

        oa = config.openai
        return OpenAICompatibleModel(
            oa.base_url, model=oa.model, api_key=os.environ.get(oa.api_key_env, ""),
            timeout=oa.timeout, context=cfg.context,
        )
    spec = model or cfg.name
    if not spec:
        raise NoModelConfigured()
    path = resolve_model(spec)
    from deskmate.app.llm.llamacpp import LlamaCppModel

    return LlamaCppModel(
        path, context=cfg.context, threads=cfg.threads, gpu_layers=cfg.gpu_layers,
        batch=cfg.batch, adapter=cfg.adapter or None, adapter_scale=cfg.adapter_scale,
        seed=cfg.seed, name=spec if "/" not in spec else None,
    )
