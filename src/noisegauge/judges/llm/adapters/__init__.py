"""``llm=`` takes what users already hold; each becomes the same LLM judge.

- an ``openai`` client (``OpenAI``, ``AsyncOpenAI``, ``AzureOpenAI``, ``AsyncAzureOpenAI``),
  with ``model=`` (an Azure deployment name for Azure);
- a LangChain chat model (``langchain_core`` ``BaseChatModel``: ``ChatOpenAI``,
  ``AzureChatOpenAI``, ``ChatOllama``...);
- a LiteLLM model string: ``get_judge("litellm:ollama/llama3", base_url=...)``;
- Ragas' wrappers: ``LangchainLLMWrapper(...)`` and what ``llm_factory(...)`` returns.

Every one gets the OpenAI judge's prompts, output-mode negotiation, tolerant reading,
retries, cache identity (model and endpoint, plus how it was reached; never a key) and cost
accounting; only the sending differs (``senders``). Libraries are imported lazily: none of
them is a dependency of noisegauge (extras ``langchain``, ``litellm``).
"""

from __future__ import annotations

import os
from typing import Any

from ....errors import InvalidInput
from ....infra.secrets import register_secret
from ...base import Judge
from .senders import Sender, langchain_sender, litellm_sender, openai_sender

__all__ = ["adapt", "make_litellm_judge", "kind_of", "register_client_keys"]


def _classes(obj: Any) -> list[str]:
    return [f"{c.__module__}.{c.__qualname__}" for c in type(obj).__mro__]


def kind_of(obj: Any) -> str | None:
    """``openai``, ``langchain``, ``ragas-langchain``, ``ragas-client`` or None."""
    names = _classes(obj)
    module = type(obj).__module__.split(".")[0]
    if module == "openai" and hasattr(obj, "chat") and hasattr(obj, "base_url"):
        return "openai"
    if any(n.endswith(".BaseChatModel") and n.startswith("langchain") for n in names):
        return "langchain"
    if getattr(obj, "langchain_llm", None) is not None:
        return "ragas-langchain"
    if isinstance(getattr(obj, "model", None), str) and getattr(obj, "client", None) is not None:
        return "ragas-client"
    return None


def _build(model: str, endpoint: str, sender: Sender, via: str, **settings: Any) -> Judge:
    from ..judge import OpenAIJudge

    return OpenAIJudge.with_sender(model, endpoint=endpoint, sender=sender, via=via, **settings)


def _openai_client(obj: Any, model: str | None, **settings: Any) -> Judge:
    if not model:
        raise TypeError(f"an {type(obj).__name__} client does not name a model: pass "
                        "model='gpt-4o-mini' (for Azure, the deployment name)")
    via = "azure-openai" if "Azure" in type(obj).__name__ else "openai-client"
    return _build(model, str(obj.base_url), openai_sender(obj), via, **settings)


def _langchain(obj: Any, model: str | None, **settings: Any) -> Judge:
    openai_like = any(n.endswith(".BaseChatOpenAI") for n in _classes(obj))
    name = (model or getattr(obj, "deployment_name", None) or getattr(obj, "model_name", None)
            or getattr(obj, "model", None) or type(obj).__name__)
    endpoint = (getattr(obj, "azure_endpoint", None) or getattr(obj, "openai_api_base", None)
                or getattr(obj, "base_url", None))
    if endpoint is None and openai_like:
        endpoint = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    if not openai_like:
        # A chat model that may not take JSON Schema or JSON mode: plain text, read
        # tolerantly, unless the caller forces a mode it knows the model supports.
        settings.setdefault("output_mode", "text")
    return _build(str(name), str(endpoint or f"langchain:{type(obj).__name__}"),
                  langchain_sender(obj, openai_like=openai_like),
                  f"langchain:{type(obj).__name__}", **settings)


def _inner_openai_client(client: Any) -> Any:
    """The openai client inside an instructor-patched one (Ragas' ``llm_factory``)."""
    for candidate in (client, getattr(client, "client", None)):
        if candidate is not None and kind_of(candidate) == "openai":
            return candidate
    return None


#: Where the clients users hold keep their credentials (openai: ``api_key``; LangChain:
#: ``openai_api_key``, a ``SecretStr``; Azure AD tokens).
_KEY_ATTRIBUTES = ("api_key", "openai_api_key", "azure_ad_token", "anthropic_api_key")


def register_client_keys(obj: Any) -> None:
    """Register the keys a user's client holds, so they are masked in everything written
    even when the endpoint echoes them (the user's data itself is never shape-masked)."""
    for candidate in (obj, getattr(obj, "client", None), getattr(obj, "langchain_llm", None),
                      getattr(getattr(obj, "client", None), "client", None)):
        for name in _KEY_ATTRIBUTES:
            value = getattr(candidate, name, None) if candidate is not None else None
            reveal = getattr(value, "get_secret_value", None)
            register_secret(reveal() if callable(reveal) else value)


def adapt(obj: Any, *, model: str | None = None, **settings: Any) -> Judge:
    """The LLM judge for ``obj`` (see the module doc); ``InvalidInput`` for anything else."""
    register_client_keys(obj)
    kind = kind_of(obj)
    if kind == "openai":
        return _openai_client(obj, model, **settings)
    if kind == "langchain":
        return _langchain(obj, model, **settings)
    if kind == "ragas-langchain":
        return adapt(obj.langchain_llm, model=model, **settings)
    if kind == "ragas-client":
        inner = _inner_openai_client(obj.client)
        if inner is not None:
            return _openai_client(inner, model or obj.model, **settings)
        if "litellm" in (str(getattr(obj, "provider", "")) + type(obj).__name__).lower():
            return make_litellm_judge(model or obj.model, **settings)
    raise InvalidInput(
        f"cannot use a {type(obj).__module__}.{type(obj).__name__} as a judge (not a judge): "
        "expected a "
        "Judge, a spec string ('lexical', 'openai:gpt-4o-mini', 'litellm:ollama/llama3'), an "
        "openai client with model=, a LangChain chat model, or a Ragas LLM wrapper")


def make_litellm_judge(arg: str | None, *, base_url: str | None = None,
                       api_key: str | None = None, **settings: Any) -> Judge:
    """``get_judge("litellm:MODEL")``: any provider LiteLLM reaches, e.g. ``ollama/llama3``."""
    if not arg:
        from ....errors import InvalidInput
        raise InvalidInput("litellm needs a model: litellm:ollama/llama3 or litellm:gpt-4o-mini")
    try:
        import litellm  # noqa: F401
    except ImportError:
        from ....errors import MissingDependency
        raise MissingDependency("the LiteLLM judge", "litellm", "litellm") from None
    register_secret(api_key)
    endpoint = base_url or f"litellm:{arg.split('/')[0]}"
    return _build(arg, endpoint, litellm_sender(arg, api_base=base_url, api_key=api_key),
                  "litellm", **settings)
