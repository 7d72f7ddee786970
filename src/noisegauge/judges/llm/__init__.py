"""The LLM judge: prompts, output parsing, batching, coalescing, pricing and the chat endpoint.

Loaded only when an ``openai:`` judge is asked for (it needs ``pip install '.[openai]'``).
"""
