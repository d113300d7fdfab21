"""Coverage of PyTorch's public API, measured against the installed torch (issue 16).

Every public name of the namespaces in tests/api_coverage.py must be in dynagrad, or left
out on purpose with a reason, or listed as not done yet; a name listed as not yet done that
has arrived must leave the list. ``python -m tests.api_coverage`` prints the figures.
"""
import pytest

from tests import api_coverage

ROWS = {row[0]: row for row in api_coverage.survey()}


@pytest.mark.parametrize('label', list(ROWS))
def test_every_public_torch_name_is_implemented_left_out_or_listed(label):
    _, names, implemented, left_out, not_yet, unaccounted, arrived = ROWS[label]
    assert names, f'no public names found in {label}: the survey is broken'
    assert not unaccounted, (
        f'{label}: in torch, not in dynagrad, neither left out (with a reason) nor listed '
        f'as not yet done in tests/api_coverage.py: {sorted(unaccounted)}')
    assert not arrived, (f'{label}: implemented now, remove from NOT_YET in '
                         f'tests/api_coverage.py: {sorted(arrived)}')


def test_not_yet_lists_only_real_torch_names():
    for label, listed in api_coverage.NOT_YET.items():
        assert label in ROWS, label
        stale = listed - ROWS[label][1]
        assert not stale, f'{label}: not public names of torch: {sorted(stale)}'


def test_left_out_patterns_each_match_a_torch_name():
    for label, rules in api_coverage.LEFT_OUT.items():
        names = ROWS[label][1]
        import fnmatch
        unused = [p for p, _ in rules if not fnmatch.filter(names, p)]
        assert not unused, f'{label}: left-out patterns that match no torch name: {unused}'


def test_the_report_states_the_figure():
    text = api_coverage.report(list(ROWS.values()))
    assert 'names in scope' in text and '| all |' in text
