"""Runs ``noisegauge`` with an extra judge kind ``slow:SECONDS`` (tests/batch_helpers.SlowJudge).

Used by tests/test_resume.py as a real subprocess that can be killed with SIGKILL.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from noisegauge.cli.main import main
from noisegauge.judges.registry import JUDGE_FACTORIES

JUDGE_FACTORIES["slow"] = "batch_helpers:make_slow_judge"
for _name in ("unreachable", "bad_output", "buggy", "interrupted", "dead_probe", "never"):
    JUDGE_FACTORIES[_name] = f"chaos_helpers:make_{_name}"

if __name__ == "__main__":
    main(sys.argv[1:])
