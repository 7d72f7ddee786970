"""Scale-out: the same run on a Ray cluster (``evaluate(..., engine="ray")``).

- ``engine``: the driver. Reads and validates the input, cuts it into blocks, sends each
  to a Ray task, journals the rows as blocks come back, merges the workers' cache answers.
- ``blocks``: what a task does with a block: the local runner (``runner.run.arun``), no Ray.
- ``cache``: a block's own judge cache, reading through to the user's cache file.
- ``limits``: the actor that holds an LLM endpoint's limits for the whole cluster.

Nothing here imports Ray until a run asks for it (``pip install 'noisegauge[ray]'``).
"""
