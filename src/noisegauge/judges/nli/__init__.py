"""The NLI judge: a local cross-encoder (``nli:PATH``) run by transformers on torch.

Loaded only when asked for (it needs ``pip install '.[nli]'``).
"""
