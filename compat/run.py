"""Run libraries' own test suites, unmodified, on PyTorch and on dynagrad.

    python -m compat.run [--libraries a,b] [--torch-only | --dynagrad-only]
                         [--workdir DIR] [--source name=PATH ...] [--no-doc]

For each library of compat/libraries.py: a virtual environment under the work folder with
torch==2.13.0, the pinned library, its test dependencies and this repository's dynagrad
with its bfloat16/special/threads/checkpoints extras (editable, so that a re-run measures the code of the checkout the command runs from); the
library's test files from its sdist or its tagged release; the selected tests once under
plain pytest and once under ``python -m dynagrad.run -m pytest``, each writing JUnit XML.
docs/compat.md is then regenerated from every library's latest results in the work folder.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from . import report
from .libraries import LIBRARIES, TORCH_REQUIREMENT

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / 'docs' / 'compat.md'
COMMAND = 'python -m compat.run'
# dynagrad as a user who wants PyTorch's dtypes and functions installs it: without
# ml_dtypes a library's bfloat16 tests would fail on a missing extra, not on dynagrad.
DYNAGRAD_EXTRAS = 'bfloat16,special,threads,checkpoints'
# Always on: no test may reach a model hub, a GPU or a display.
BASE_ENV = {'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', 'HF_DATASETS_OFFLINE': '1',
            'CUDA_VISIBLE_DEVICES': '', 'MPLBACKEND': 'Agg', 'PYTHONDONTWRITEBYTECODE': '1',
            'TOKENIZERS_PARALLELISM': 'false', 'WANDB_MODE': 'disabled'}


def default_workdir():
    env = os.environ.get('DYNAGRAD_COMPAT_DIR')
    if env:
        return Path(env)
    cache = os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache'
    return Path(cache) / 'dynagrad-compat'


def log(msg):
    print(f'[compat {time.strftime("%H:%M:%S")}] {msg}', flush=True)


def sh(cmd, **kw):
    log('$ ' + ' '.join(str(c) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def venv_python(venv):
    return venv / 'bin' / 'python'


def ensure_venv(lib, workdir):
    """The library's environment; rebuilt only when its requirements change."""
    venv = workdir / 'venvs' / lib.name
    wanted = {'requirements': [TORCH_REQUIREMENT, lib.requirement, 'pytest', 'pytest-timeout',
                               *lib.deps],
              'python': sys.version.split()[0]}
    marker = venv / 'compat-installed.json'
    if not (marker.exists() and json.loads(marker.read_text()).get('requirements')
            == wanted['requirements']):
        if venv.exists():
            shutil.rmtree(venv)
        sh([sys.executable, '-m', 'venv', venv])
        sh([venv_python(venv), '-m', 'pip', 'install', '-q', *wanted['requirements']])
        marker.write_text(json.dumps(wanted))
    # dynagrad comes from the repository this harness lives in; a venv made from another
    # checkout is pointed here again. Its dependencies come too: torch's wheel does not
    # require NumPy, and some test suites import it without declaring it.
    state = json.loads(marker.read_text())
    dynagrad_spec = f'{REPO}[{DYNAGRAD_EXTRAS}]'
    if state.get('dynagrad_from') != dynagrad_spec:
        sh([venv_python(venv), '-m', 'pip', 'install', '-q', '-e', dynagrad_spec])
        state['dynagrad_from'] = dynagrad_spec
        marker.write_text(json.dumps(state))
    return venv


def _extract(archive, dest):
    with tarfile.open(archive) as tar:
        top = os.path.commonpath(tar.getnames())
        tar.extractall(dest.parent / '.extract', filter='data')
    shutil.move(dest.parent / '.extract' / top, dest)
    shutil.rmtree(dest.parent / '.extract')


def ensure_source(lib, workdir, venv, given):
    """The folder holding the library's tests at the pinned release."""
    if lib.name in given:
        return Path(given[lib.name]).resolve()
    dest = workdir / 'src' / f'{lib.name}-{lib.version}'
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + '.partial')
    shutil.rmtree(partial, ignore_errors=True)
    if lib.source == 'sdist':
        dl = workdir / 'downloads'
        dl.mkdir(exist_ok=True)
        sh([venv_python(venv), '-m', 'pip', 'download', '-q', '--no-binary', ':all:', '--no-deps',
            '-d', dl, lib.requirement])
        stem = lib.name.replace('-', '_').lower()
        archives = [p for p in dl.iterdir() if p.name.lower().replace('-', '_').startswith(
            f'{stem}_{lib.version}'.lower()) and p.name.endswith(('.tar.gz', '.tgz'))]
        if not archives:
            raise RuntimeError(f'no sdist of {lib.requirement} in {dl}')
        _extract(archives[0], partial)
    else:
        url, ref = lib.source
        if len(ref) == 40 and all(c in '0123456789abcdef' for c in ref):
            sh(['git', 'init', '-q', partial])
            sh(['git', '-C', partial, 'fetch', '-q', '--depth', '1', url, ref])
            sh(['git', '-C', partial, 'checkout', '-q', 'FETCH_HEAD'])
        else:
            sh(['git', 'clone', '-q', '--depth', '1', '--branch', ref, url, partial])
    partial.rename(dest)
    return dest


def run_pytest(lib, venv, src, side, results, run_timeout):
    """One pytest run; returns (junit path, wall seconds, return code)."""
    xml = results / f'{side}.xml'
    xml.unlink(missing_ok=True)
    cmd = [venv_python(venv)]
    if side == 'dynagrad':
        cmd += ['-m', 'dynagrad.run']
    cmd += ['-m', 'pytest', *lib.tests, '-q', '-p', 'no:cacheprovider', '-p', 'no:randomly',
            f'--junitxml={xml}', '-o', 'junit_family=xunit1', '--continue-on-collection-errors',
            '--timeout', str(lib.timeout), *lib.pytest_args]
    if lib.k:
        cmd += ['-k', lib.k]
    env = {**os.environ, **BASE_ENV, **lib.env}
    env.pop('PYTHONPATH', None)   # the venv alone decides what is imported
    env['PATH'] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env['VIRTUAL_ENV'] = str(venv)
    log(f'{lib.name} on {side}: ' + ' '.join(str(c) for c in cmd[1:]))
    start = time.perf_counter()
    with open(results / f'{side}.log', 'w') as out:
        # A parent started in the background may ignore SIGINT, and Python keeps an ignored
        # SIGINT ignored: the time limit below needs pytest to take it.
        proc = subprocess.Popen([str(c) for c in cmd], cwd=src, env=env, stdout=out,
                                stderr=subprocess.STDOUT,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            rc = proc.wait(timeout=run_timeout)
        except subprocess.TimeoutExpired:
            # pytest stopped by SIGINT still writes the JUnit XML of the tests it ran.
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            rc = 'timeout'
    wall = time.perf_counter() - start
    log(f'{lib.name} on {side}: exit {rc} after {wall:.0f} s')
    return xml, wall, rc


def run_library(lib, workdir, sides, given, run_timeout=None):
    results = workdir / 'results' / lib.name
    results.mkdir(parents=True, exist_ok=True)
    venv = ensure_venv(lib, workdir)
    src = ensure_source(lib, workdir, venv, given)
    if not sides:
        return
    meta_path = results / 'meta.json'
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    for side in sides:
        xml, wall, rc = run_pytest(lib, venv, src, side, results,
                                   run_timeout or lib.run_timeout)
        meta[side] = {'seconds': wall, 'exit': rc, 'xml': xml.exists(),
                      'date': datetime.date.today().isoformat(), 'version': lib.version}
    meta['machine'] = machine()
    meta_path.write_text(json.dumps(meta, indent=1))


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    except OSError:
        pass
    return f'{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu})'


def _stopped(log_path, meta):
    """Whether the time limit cut the run short (a run may finish in the grace period)."""
    return (meta.get('exit') == 'timeout' and log_path.exists()
            and 'KeyboardInterrupt' in log_path.read_text(errors='replace'))


def collect_row(lib, workdir):
    results = workdir / 'results' / lib.name
    row = {'name': lib.name, 'version': lib.version}
    meta_path = results / 'meta.json'
    if not meta_path.exists():
        return row
    meta = json.loads(meta_path.read_text())
    t, d = meta.get('torch', {}), meta.get('dynagrad', {})
    if t.get('version') != lib.version:
        row['note'] = 'not run at this version'
        return row
    if not (results / 'torch.xml').exists():
        row['note'] = f"torch run wrote no results (exit {t.get('exit')})"
        return row
    torch_results = report.parse_junit(results / 'torch.xml')
    if d.get('version') == lib.version and (results / 'dynagrad.xml').exists():
        dyn_results = report.parse_junit(results / 'dynagrad.xml')
    else:
        # A dynagrad run that died (a timeout, a crash of the interpreter) passed nothing.
        dyn_results = {}
        if d:
            row['note'] = f"dynagrad run wrote no results (exit {d.get('exit')})"
    counts, causes, examples = report.compare(torch_results, dyn_results)
    row.update(counts=counts, causes=causes, examples=examples, torch_s=t.get('seconds'),
               dynagrad_s=d.get('seconds'), date=t.get('date'), machine=meta.get('machine'))
    if _stopped(results / 'torch.log', t):
        row['note'] = (f"torch run stopped at its time limit ({t['seconds']:.0f} s): the tests "
                       'it reached')
    missing = 'not run (missing from the dynagrad run)'
    if _stopped(results / 'dynagrad.log', d):
        row['note'] = f"dynagrad run stopped at its time limit ({d['seconds']:.0f} s)"
        if missing in causes:
            stopped = 'not reached: the dynagrad run was stopped at its time limit'
            causes[stopped] = causes.pop(missing)
            examples[stopped] = examples.pop(missing)
    if not dyn_results and d.get('exit') is not None:
        # pytest stopped before writing XML (a conftest that failed to import): its log says why.
        log_path = results / 'dynagrad.log'
        why = report.log_cause(log_path.read_text(errors='replace')) if log_path.exists() else ''
        row['no_results'] = True
        causes.clear()
        examples.clear()
        if d.get('exit') == 'timeout':
            cause = (f"no results: the run was stopped at its time limit ({d['seconds']:.0f} s) "
                     'and pytest wrote no XML')
        else:
            cause = f"no results (exit {d.get('exit')}): {why or 'see dynagrad.log'}"
        causes[cause] = counts['torch_passed']
        examples[cause] = '(the whole run)'
    return row


def write_doc(workdir):
    rows = [collect_row(lib, workdir) for lib in LIBRARIES]
    machines = sorted({r['machine'] for r in rows if r.get('machine')})
    dates = sorted({r['date'] for r in rows if r.get('date')})
    header = [
        '# Libraries\' own test suites on dynagrad',
        '',
        'Each library\'s tests run unmodified, at a pinned release, first on PyTorch 2.13 '
        '(CPU) and then on dynagrad through `python -m dynagrad.run -m pytest`. Regenerate '
        f'with `{COMMAND}` (all libraries) or `{COMMAND} --libraries NAME,...` (the table '
        'keeps the other libraries\' latest results); compat/libraries.py says which tests '
        'run for each library and why, compat/README.md how to add one.',
        '',
        f"Run on: {'; '.join(dates) or '-'}, {'; '.join(machines) or '-'}, Python "
        f'{platform.python_version()}. Times are wall times on a machine other jobs may '
        'share: the ratio is indicative; pytest-timeout stops a test after its library\'s '
        'limit (a "Failed: Timeout" cause), and a run that reaches its overall limit is '
        'stopped, its unreached tests counted as not passed.',
    ]
    missing = [r['name'] for r in rows if not r.get('counts')]
    if missing:
        header += ['', f"Without results here: {', '.join(missing)} (see the row; a library "
                   'whose tests come from a git tag needs that host reachable, or '
                   '`--source NAME=PATH` with a checkout of the tag).']
    kept = report.kept_block(DOC.read_text()) if DOC.exists() else ''
    text = report.render(rows, header)
    DOC.write_text(report.with_kept(text, kept) if kept else text)
    log(f'wrote {DOC}')


def main(argv=None):
    p = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split('\n')[0])
    p.add_argument('--libraries', help='comma-separated names (default: all)')
    side = p.add_mutually_exclusive_group()
    side.add_argument('--torch-only', action='store_true')
    side.add_argument('--dynagrad-only', action='store_true')
    side.add_argument('--setup-only', action='store_true',
                      help='make the environments and fetch the sources, run nothing')
    p.add_argument('--workdir', type=Path, default=default_workdir(),
                   help='venvs, sources and results (default: %(default)s; or '
                        '$DYNAGRAD_COMPAT_DIR)')
    p.add_argument('--source', action='append', default=[], metavar='NAME=PATH',
                   help='a checkout of NAME at the pinned release, in place of the download')
    p.add_argument('--run-timeout', type=int, metavar='SECONDS',
                   help="stop each pytest run after this long (default: the library's "
                        'run_timeout); the tests it ran still count')
    p.add_argument('--no-doc', action='store_true', help='do not rewrite docs/compat.md')
    args = p.parse_args(argv)
    known = {lib.name: lib for lib in LIBRARIES}
    names = args.libraries.split(',') if args.libraries else list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        p.error(f'unknown libraries {unknown}; known: {", ".join(known)}')
    given = dict(s.split('=', 1) for s in args.source)
    sides = ([] if args.setup_only else ['torch'] if args.torch_only
             else ['dynagrad'] if args.dynagrad_only else ['torch', 'dynagrad'])
    args.workdir.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in names:
        try:
            run_library(known[name], args.workdir, sides, given, args.run_timeout)
        except (subprocess.CalledProcessError, RuntimeError, OSError) as exc:
            log(f'{name}: could not run: {exc}')
            failed.append(name)
    if not (args.no_doc or args.setup_only):
        write_doc(args.workdir)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
