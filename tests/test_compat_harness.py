"""compat/ (libraries' own test suites on torch and on dynagrad): the parts that need no
network nor virtual environment -- JUnit XML to outcomes and causes, the comparison of the
two runs, the table -- on XML in pytest's own layout."""
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compat import libraries, report, run  # noqa: E402

# What pytest 8 writes (junit_family=xunit1, --continue-on-collection-errors), abridged.
TORCH_XML = '''<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="pkg.tests.test_a" name="test_ok" time="0.01" />
<testcase classname="pkg.tests.test_a" name="test_add" time="0.01" />
<testcase classname="pkg.tests.test_a" name="test_setup" time="0.01" />
<testcase classname="pkg.tests.test_a.TestK" name="test_p[1]" time="0.01" />
<testcase classname="pkg.tests.test_a.TestK" name="test_p[2]" time="0.01" />
<testcase classname="pkg.tests.test_a" name="test_cuda" time="0.0"><skipped type="pytest.skip"
 message="no cuda">pkg/tests/test_a.py:9: no cuda</skipped></testcase>
<testcase classname="pkg.tests.test_a" name="test_broken" time="0.0"><failure
 message="assert 1 == 2">E   assert 1 == 2

pkg/tests/test_a.py:5: AssertionError</failure></testcase>
<testcase classname="pkg.tests.test_b" name="test_one" time="0.01" />
<testcase classname="pkg.tests.test_b" name="test_two" time="0.01" />
<testcase time="0.000" /></testsuite></testsuites>'''

DYNAGRAD_XML = '''<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="" name="pkg.tests.test_b" file="pkg/tests/test_b.py" time="0.0"><error
 message="collection failure">pkg/tests/test_b.py:1: in &lt;module&gt;
    import torch.fft
E   ModuleNotFoundError: No module named 'torch.fft': the program runs on dynagrad

pkg/tests/test_b.py:1: ModuleNotFoundError</error></testcase>
<testcase classname="pkg.tests.test_a" name="test_ok" time="0.02" />
<testcase classname="pkg.tests.test_a" name="test_add" time="0.02"><failure
 message="TypeError: unsupported operand for +: 'Tensor' at 0x7f00deadbeef&#10;more"
 >E   TypeError: x

pkg/tests/test_a.py:3: TypeError</failure></testcase>
<testcase classname="pkg.tests.test_a" name="test_setup" time="0.0"><error
 message="failed on setup with &quot;RuntimeError: fixture broke&#10;second line&quot;"
 >E       RuntimeError: fixture broke
E       second line</error></testcase>
<testcase classname="pkg.tests.test_a.TestK" name="test_p[1]" time="0.01"><failure
 message="TypeError: unsupported operand for +: 'Tensor' at 0x7f11cafef00d"
 >E   TypeError</failure></testcase>
<testcase classname="pkg.tests.test_a.TestK" name="test_p[2]" time="0.01" />
<testcase classname="pkg.tests.test_a.TestK" name="test_p[2]" time="0.0"><error
 message="failed on teardown with &quot;OSError: gone&quot;">E   OSError: gone</error></testcase>
<testcase classname="pkg.tests.test_a" name="test_cuda" time="0.0" />
<testcase classname="pkg.tests.test_a" name="test_broken" time="0.0" />
</testsuite></testsuites>'''


def test_parse_junit_outcomes_and_causes():
    torch = report.parse_junit(TORCH_XML)
    assert len(torch) == 9
    assert [t for t, o in torch.items() if o.status == 'passed'] == [
        'pkg.tests.test_a::test_ok', 'pkg.tests.test_a::test_add', 'pkg.tests.test_a::test_setup',
        'pkg.tests.test_a.TestK::test_p[1]', 'pkg.tests.test_a.TestK::test_p[2]',
        'pkg.tests.test_b::test_one', 'pkg.tests.test_b::test_two']
    assert torch['pkg.tests.test_a::test_cuda'].cause == 'skipped: no cuda'
    # A bare assert's message has no type: the traceback's last line gives it.
    assert torch['pkg.tests.test_a::test_broken'].cause == 'AssertionError: assert 1 == 2'

    dyn = report.parse_junit(DYNAGRAD_XML)
    assert dyn['::pkg.tests.test_b'].status == 'error'
    assert dyn['::pkg.tests.test_b'].cause.startswith(
        "ModuleNotFoundError: No module named 'torch.fft'")
    # First line only, the object address blanked so that the same cause groups.
    assert dyn['pkg.tests.test_a::test_add'].cause == \
        "TypeError: unsupported operand for +: 'Tensor' at 0x..."
    assert dyn['pkg.tests.test_a.TestK::test_p[1]'].cause == \
        dyn['pkg.tests.test_a::test_add'].cause
    # pytest's wording around a fixture error is dropped.
    assert dyn['pkg.tests.test_a::test_setup'].cause == 'RuntimeError: fixture broke'
    # Passed, then failed in teardown: the worse outcome is the test's.
    assert dyn['pkg.tests.test_a.TestK::test_p[2]'].status == 'error'
    assert dyn['pkg.tests.test_a.TestK::test_p[2]'].cause == 'OSError: gone'


def test_compare_counts_only_what_passes_on_torch():
    counts, causes, examples = report.compare(report.parse_junit(TORCH_XML),
                                              report.parse_junit(DYNAGRAD_XML))
    assert counts == {'run': 9, 'torch_passed': 7, 'dynagrad_passed': 1,
                      'dynagrad_passed_all': 3}
    tensor_add = "TypeError: unsupported operand for +: 'Tensor' at 0x..."
    not_collected = ("not collected: ModuleNotFoundError: No module named 'torch.fft': "
                     "the program runs on dynagrad")
    assert causes == {tensor_add: 2, not_collected: 2, 'RuntimeError: fixture broke': 1,
                      'OSError: gone': 1}
    assert examples[tensor_add] == 'pkg.tests.test_a::test_add'
    assert examples[not_collected] == 'pkg.tests.test_b::test_one'
    assert sum(causes.values()) == counts['torch_passed'] - counts['dynagrad_passed']


def test_compare_with_a_dynagrad_run_that_wrote_nothing():
    counts, causes, _ = report.compare(report.parse_junit(TORCH_XML), {})
    assert counts['dynagrad_passed'] == 0
    assert causes == {'not run (missing from the dynagrad run)': 7}


def test_render_table_and_causes():
    counts, causes, examples = report.compare(report.parse_junit(TORCH_XML),
                                              report.parse_junit(DYNAGRAD_XML))
    rows = [{'name': 'pkg', 'version': '1.2', 'counts': counts, 'causes': causes,
             'examples': examples, 'torch_s': 10.0, 'dynagrad_s': 35.0, 'date': '2026-01-02'},
            {'name': 'other', 'version': '0.1', 'note': 'not run'}]
    text = report.render(rows, ['# Title'], top=2)
    lines = text.splitlines()
    assert lines[0] == '# Title'
    assert '| pkg | 1.2 | 9 | 7 | 1 | 14.3 % | 10 s | 35 s | 3.5x | 2026-01-02 |' in lines
    assert '| other | 0.1 | - | - | - | - | - | - | - | not run |' in lines
    assert '| **all** | | | 7 | 1 | 14.3 % | | | | |' in lines
    assert '## pkg 1.2: 6 torch-passing tests fail on dynagrad, top causes' in lines
    section = lines[lines.index('## pkg 1.2: 6 torch-passing tests fail on dynagrad, top causes'):]
    # The two largest causes, then the rest summed; '|' in a cause does not break the table.
    assert section[4] == ("| 2 | TypeError: unsupported operand for +: 'Tensor' at 0x... "
                          "| `pkg.tests.test_a::test_add` |")
    assert section[5].startswith('| 2 | not collected: ModuleNotFoundError')
    assert section[6] == '| 2 | (2 other causes) | |'
    assert report._md('a|b`c') == "a\\|b'c"


def test_libraries_are_pinned_and_unique():
    names = [lib.name for lib in libraries.LIBRARIES]
    assert len(names) == len(set(names)) >= 10
    assert libraries.TORCH_REQUIREMENT == 'torch==2.13.0'
    for lib in libraries.LIBRARIES:
        assert lib.requirement == f'{lib.name}=={lib.version}'
        assert lib.version[0].isdigit() and '*' not in lib.version
        assert lib.tests and lib.why
        assert lib.source == 'sdist' or (lib.source[0].startswith('https://') and lib.source[1])


def test_workdir_is_outside_the_repository(monkeypatch, tmp_path):
    monkeypatch.delenv('DYNAGRAD_COMPAT_DIR', raising=False)
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    assert run.default_workdir() == tmp_path / 'dynagrad-compat'
    monkeypatch.setenv('DYNAGRAD_COMPAT_DIR', str(tmp_path / 'w'))
    assert run.default_workdir() == tmp_path / 'w'
    # dynagrad is installed from the checkout the harness lives in.
    assert (run.REPO / 'src' / 'dynagrad' / 'run.py').exists()


def test_unknown_library_is_refused(capsys):
    with pytest.raises(SystemExit):
        run.main(['--libraries', 'no-such-library', '--no-doc'])
    assert 'unknown libraries' in capsys.readouterr().err


def test_log_cause_of_a_run_that_wrote_no_xml():
    log = ("ImportError while loading conftest '/tmp/abc/pkg/tests/conftest.py'.\n"
           "pkg/__init__.py:33: in <module>\n    raise ImportWarning(msg)\n"
           "E   ImportWarning: pkg depends on a newer version of PyTorch (not 0.1.0)\n")
    assert report.log_cause(log) == \
        'ImportWarning: pkg depends on a newer version of PyTorch (not 0.1.0)'
    assert report.log_cause('collected 0 items\n\nno tests ran in 0.01s\n') == \
        'no tests ran in 0.01s'


def test_paths_in_causes_are_blanked_so_that_checkouts_group():
    xml = ('<testsuites><testsuite><testcase classname="t.test_x" name="test_y"><failure '
           'message="ImportError: cannot import name \'M\' from \'dynagrad.serialization\' '
           '(/home/someone/repo/src/dynagrad/serialization/__init__.py)"/></testcase>'
           '</testsuite></testsuites>')
    cause = report.parse_junit(xml)['t.test_x::test_y'].cause
    assert cause == "ImportError: cannot import name 'M' from 'dynagrad.serialization' (/...)"
    # A ratio needs the dynagrad run to have passed something.
    row = {'name': 'n', 'version': '1', 'torch_s': 5.0, 'dynagrad_s': 1.0, 'date': 'd',
           'counts': {'run': 3, 'torch_passed': 3, 'dynagrad_passed': 0}}
    assert '| n | 1 | 3 | 3 | 0 | 0.0 % | 5 s | 1 s | - | d |' in report.render([row], ['#'])


def test_kept_section_survives_a_regenerated_table():
    block = f'{report.KEPT_BEGIN}\n## transformers: end to end\n{report.KEPT_END}'
    doc = report.with_kept('# table\n', block)
    assert report.kept_block(doc) == block and doc.startswith('# table\n')
    assert report.with_kept(doc, block.replace('end to end', 'again')).count('again') == 1
    assert report.kept_block('# no section') == ''


def test_transformers_models_comparison_and_section():
    from compat import transformers_models as tm
    ref = {'gpt2': {'steps': {'load': 'ok', 'train': 'ok'}, 'train': [2.0, 1.0],
                    'reload_logits': [0.5, 0.25], 'generate': [[1, 2]], 'seconds': 1.0}}
    same = {'gpt2': {**ref['gpt2'], 'train': [2.0, 1.0 + 5e-6]}}
    off = {'gpt2': {**ref['gpt2'], 'train': [2.0, 1.1], 'generate': [[1, 3]],
                    'steps': {'load': 'ok', 'train': 'ok', 'generate': 'ok'}}}
    good, bad = tm.compare(ref, same)['gpt2'], tm.compare(ref, off)['gpt2']
    assert good['train_match'] and good['tokens_match'] and good['logits_match']
    assert good['max_loss_rel_diff'] == pytest.approx(5e-6)
    assert not bad['train_match'] and not bad['tokens_match']
    assert bad['max_loss_rel_diff'] == pytest.approx(0.1)
    text = tm.doc_section(tm.compare(ref, same), ['5.0', '2.13.0'], 5, 0.1)
    assert text.startswith(report.KEPT_BEGIN) and text.endswith(report.KEPT_END)
    assert '| gpt2 | load, train | 5.0e-06 | 0.0e+00 | identical |' in text
