"""From pytest's JUnit XML to per-test outcomes, failure causes and the docs/compat.md table.

Nothing here touches the network or a virtual environment, so tests/test_compat_harness.py
checks it on XML written by hand.
"""
import collections
import re
import xml.etree.ElementTree as ET

PASSED, FAILED, ERROR, SKIPPED = 'passed', 'failed', 'error', 'skipped'

# A cause is grouped by text, so the parts that change from one test to the next (object
# addresses, temporary folders) are blanked; shapes and values stay, they often are the cause.
_NOISE = [(re.compile(r'0x[0-9a-fA-F]{6,}'), '0x...'),
          (re.compile(r'(?<![\w.])/(?:[\w.+-]+/)+[\w.+-]*'), '/...')]
_CAUSE_WIDTH = 160


class Outcome:
    __slots__ = ('status', 'cause')

    def __init__(self, status, cause=''):
        self.status, self.cause = status, cause

    def __repr__(self):
        return f'Outcome({self.status!r}, {self.cause!r})'


_TYPED = re.compile(r'^[A-Za-z_][\w.]*(: |$)')
_TRAILER = re.compile(r':\d+: ([A-Za-z_][\w.]*)\s*$')


def _exception_line(text):
    """The first 'E   Type: message' line of a pytest traceback, without the 'E'."""
    for line in (text or '').splitlines():
        if line.startswith('E ') and line[1:].strip():
            return line[1:].strip()
    return ''


def log_cause(text):
    """The first exception line of a pytest console log (for a run that wrote no XML)."""
    found = _exception_line(text)
    if not found:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        found = lines[-1] if lines else ''
    for pattern, repl in _NOISE:
        found = pattern.sub(repl, found)
    return found[:_CAUSE_WIDTH]


def cause_of(element):
    """'ExceptionType: first line of the message' for a <failure>/<error>/<skipped> element."""
    message = (element.get('message') or '').strip()
    # pytest words a fixture error around the exception it reports.
    m = re.match(r'failed on (setup|teardown) with "(.*)"\s*$', message, re.S)
    if m:
        message = m.group(2)
    if element.tag == 'skipped':
        line = message.splitlines()[0] if message else 'skipped'
        return f'skipped: {line}'[:_CAUSE_WIDTH]
    if not message or message == 'collection failure':
        message = _exception_line(element.text) or message or element.tag
    line = message.splitlines()[0].strip()
    if not _TYPED.match(line) or line.startswith('assert '):
        # A bare assert's message has no type; the traceback's last line names it.
        last = (element.text or '').rstrip().rsplit('\n', 1)[-1]
        typed = _TRAILER.search(last)
        kind = typed.group(1) if typed else element.get('type')
        if kind:
            line = f'{kind}: {line}'
    for pattern, repl in _NOISE:
        line = pattern.sub(repl, line)
    return line[:_CAUSE_WIDTH]


def parse_junit(path_or_text):
    """{test id: Outcome} from a JUnit XML file (or its text).

    A test id is 'classname::name', the same in the torch and the dynagrad run. A test whose
    call passed but whose teardown failed appears twice in pytest's XML; the worse wins.
    """
    if isinstance(path_or_text, str) and path_or_text.lstrip().startswith('<'):
        root = ET.fromstring(path_or_text)
    else:
        root = ET.parse(path_or_text).getroot()
    results = {}
    rank = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}
    for case in root.iter('testcase'):
        if not case.get('name'):
            continue   # the stand-in entry of a run stopped by SIGINT
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = Outcome(PASSED)
        for child in case:
            if child.tag in ('failure', 'error', 'skipped'):
                status = {'failure': FAILED, 'error': ERROR, 'skipped': SKIPPED}[child.tag]
                outcome = Outcome(status, cause_of(child))
                break
        old = results.get(test_id)
        if old is None or rank[outcome.status] > rank[old.status]:
            results[test_id] = outcome
    return results


def _module_of(test_id):
    """'pkg.tests.test_x.TestA::test_b' -> 'pkg.tests.test_x' (best effort)."""
    classname = test_id.split('::', 1)[0]
    parts = classname.split('.')
    for i in range(len(parts), 0, -1):
        if parts[i - 1].startswith('test') or parts[i - 1].endswith('_test'):
            return '.'.join(parts[:i])
    return classname


def compare(torch_results, dynagrad_results):
    """What the dynagrad run did with the tests that pass on torch.

    Returns (counts, causes): counts has 'run' (tests in the torch run), 'torch_passed',
    'dynagrad_passed' (of torch's passes) and 'dynagrad_passed_all'; causes is a Counter of
    'cause' -> number of torch-passing tests that did not pass on dynagrad, with one example
    test id each in a dict.
    """
    collection_errors = {}
    for test_id, outcome in dynagrad_results.items():
        if outcome.status == ERROR and test_id.startswith('::'):
            collection_errors[test_id[2:].replace('/', '.').removesuffix('.py')] = outcome.cause
    torch_passed = [t for t, o in torch_results.items() if o.status == PASSED]
    causes, examples = collections.Counter(), {}
    passed = 0
    for test_id in torch_passed:
        outcome = dynagrad_results.get(test_id)
        if outcome is not None and outcome.status == PASSED:
            passed += 1
            continue
        if outcome is None:
            module = _module_of(test_id)
            hit = next((c for m, c in collection_errors.items()
                        if module == m or module.endswith('.' + m) or m.endswith('.' + module)),
                       None)
            cause = f'not collected: {hit}' if hit else 'not run (missing from the dynagrad run)'
        else:
            cause = outcome.cause or outcome.status
        causes[cause] += 1
        examples.setdefault(cause, test_id)
    counts = {'run': len(torch_results), 'torch_passed': len(torch_passed),
              'dynagrad_passed': passed,
              'dynagrad_passed_all': sum(o.status == PASSED for o in dynagrad_results.values())}
    return counts, causes, examples


def _fmt_time(seconds):
    return '-' if seconds is None else f'{seconds:.0f} s'


def render(rows, header_lines, top=8):
    """docs/compat.md from one row per library.

    A row is a dict: name, version, counts (from compare), causes, examples, torch_s,
    dynagrad_s, date, and optionally note (a library whose run did not finish).
    """
    out = list(header_lines)
    out += ['', '| library | version | tests run | passed on torch | passed on dynagrad '
            '| % of torch | time torch | time dynagrad | time ratio | run on |',
            '|---|---|---:|---:|---:|---:|---:|---:|---:|---|']
    total_t = total_d = 0
    for row in rows:
        c = row.get('counts')
        if not c:
            out.append(f"| {row['name']} | {row['version']} | - | - | - | - | - | - | - "
                       f"| {row.get('note', 'not run')} |")
            continue
        pct = (f"{100 * c['dynagrad_passed'] / c['torch_passed']:.1f} %"
               if c['torch_passed'] else '-')
        ratio = (f"{row['dynagrad_s'] / row['torch_s']:.1f}x"
                 if row.get('torch_s') and row.get('dynagrad_s') is not None
                 and c['dynagrad_passed'] else '-')
        total_t += c['torch_passed']
        total_d += c['dynagrad_passed']
        out.append(f"| {row['name']} | {row['version']} | {c['run']} | {c['torch_passed']} "
                   f"| {c['dynagrad_passed']} | {pct} | {_fmt_time(row.get('torch_s'))} "
                   f"| {_fmt_time(row.get('dynagrad_s'))} | {ratio} | {row.get('date', '-')}"
                   + (f" ({row['note']})" if row.get('note') else '') + ' |')
    if total_t:
        out.append(f'| **all** | | | {total_t} | {total_d} | {100 * total_d / total_t:.1f} % '
                   f'| | | | |')
    out += ['', '"passed on dynagrad" counts the tests that pass on torch and also pass '
            'under `python -m dynagrad.run`; the time ratio is the dynagrad run\'s wall time '
            'over the torch run\'s, for the same selection.', '']
    for row in rows:
        causes = row.get('causes')
        if not causes:
            continue
        lost = sum(causes.values())
        out += [f"## {row['name']} {row['version']}: {lost} torch-passing tests fail on "
                f"dynagrad, top causes", '', '| tests | cause | example |', '|---:|---|---|']
        for cause, n in causes.most_common(top):
            example = row['examples'][cause]
            out.append(f'| {n} | {_md(cause)} | `{_md(example)}` |')
        rest = sum(causes.values()) - sum(n for _, n in causes.most_common(top))
        if rest:
            out.append(f'| {rest} | ({len(causes) - top} other causes) | |')
        out.append('')
    return '\n'.join(out).rstrip() + '\n'


def _md(text):
    return text.replace('|', '\\|').replace('`', "'").replace('\n', ' ')


# A section another entry writes (compat/transformers_models.py: the models trained end to
# end), kept when the table is regenerated.
KEPT_BEGIN, KEPT_END = '<!-- kept:begin -->', '<!-- kept:end -->'


def kept_block(text):
    """The kept section of an earlier docs/compat.md ('' when it has none)."""
    start, end = text.find(KEPT_BEGIN), text.find(KEPT_END)
    if start < 0 or end < start:
        return ''
    return text[start:end + len(KEPT_END)]


def with_kept(doc, block):
    """``doc`` with ``block`` (a kept section) in place of its own, or appended."""
    old = kept_block(doc)
    if old:
        return doc.replace(old, block)
    return doc.rstrip('\n') + '\n\n' + block + '\n'
