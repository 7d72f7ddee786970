"""Rule families are on in every run; the ablation bench switches one off inside a block only."""

from __future__ import annotations

import pytest

from noisegauge.judges.lexical import rules as lexical_rules
from noisegauge.scoring.misattribution import rules as mis_rules


@pytest.mark.parametrize("rules", [lexical_rules, mis_rules])
def test_a_family_is_off_inside_the_block_only(rules) -> None:  # type: ignore[no-untyped-def]
    first, second = rules.FAMILIES[:2]
    assert rules.on(first) and rules.on(second)
    with rules.off(first):
        assert not rules.on(first) and rules.on(second)
        with rules.off(second):
            assert not rules.on(first) and not rules.on(second)
        assert not rules.on(first) and rules.on(second)
    assert rules.on(first) and rules.on(second)


def test_the_two_rule_sets_switch_apart() -> None:
    with lexical_rules.off("number"):
        assert all(mis_rules.on(f) for f in mis_rules.FAMILIES)


@pytest.mark.parametrize("rules", [lexical_rules, mis_rules])
def test_an_unknown_family_is_refused_with_the_known_ones(rules) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="unknown .* rule families \\['nope'\\]; known"), \
            rules.off("nope"):
        pass
    assert all(rules.on(f) for f in rules.FAMILIES)
