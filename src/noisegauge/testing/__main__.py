"""``python -m noisegauge.testing [--port 8000] [--latency 0.1] ...``: a fake OpenAI server."""

from .fake_openai import main

main()
