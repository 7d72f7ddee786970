"""Test helpers that ship with the package, so users can test their own pipelines offline."""

from .fake_openai import FakeOpenAIServer, FakeRequest, Fault, drop_ids, judge_responder
from .faults import FaultyJudge

__all__ = ["FakeOpenAIServer", "FakeRequest", "Fault", "FaultyJudge", "drop_ids",
           "judge_responder"]
