"""dynagrad.profiler's schedule and enums against torch.profiler's."""
import warnings

import pytest
import torch.profiler as theirs

import dynagrad.profiler as mine


def test_enums_match_torch():
    for name in ('ProfilerActivity', 'ProfilerAction'):
        assert {k: v.value for k, v in getattr(mine, name).__members__.items()} == \
            {k: v.value for k, v in getattr(theirs, name).__members__.items()}
    assert repr(mine.ProfilerActivity.CPU) == repr(theirs.ProfilerActivity.CPU)
    assert mine.supported_activities() == {mine.ProfilerActivity.CPU}


@pytest.mark.parametrize('kwargs', [
    dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=1, active=2, repeat=1, skip_first=1),
    dict(wait=2, warmup=1, active=1, skip_first=2, skip_first_wait=1),
    dict(wait=1, warmup=0, active=1, skip_first_wait=1),
    dict(wait=0, warmup=2, active=3, repeat=2)])
def test_schedule_matches_torch(kwargs):
    with warnings.catch_warnings(record=True) as w_mine:
        warnings.simplefilter('always')
        m = mine.schedule(**kwargs)
    with warnings.catch_warnings(record=True) as w_theirs:
        warnings.simplefilter('always')
        t = theirs.schedule(**kwargs)
    assert [str(w.message) for w in w_mine] == [str(w.message) for w in w_theirs]
    assert [m(i).name for i in range(20)] == [t(i).name for i in range(20)]


def test_schedule_errors_record_function_and_profile():
    for lib in (mine, theirs):
        with pytest.raises(AssertionError, match='Invalid profiler schedule arguments'):
            lib.schedule(wait=0, warmup=0, active=0)
    with mine.record_function('region'):
        pass
    assert mine.record_function('f')(lambda x: x + 1)(1) == 2
    with pytest.raises(NotImplementedError, match='cProfile'):
        mine.profile(activities=[mine.ProfilerActivity.CPU])
