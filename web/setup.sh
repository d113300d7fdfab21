#!/usr/bin/env bash
# Installs everything the playground and the browser checks need into web/vendor/ (ignored
# by git), from the package registries only:
#   npm      pyodide (runtime), @viz-js/viz (Graphviz in WebAssembly), playwright-core
#   PyPI     the wheels in requirements-browser.txt, each pinned by sha256
#   here     dynagrad's own pure-Python wheel, built from this checkout
# The NumPy, micropip and packaging wheels are accepted only if their sha256 equals the one
# in the official pyodide-lock.json of the same Pyodide release. Re-running is cheap: npm
# and pip keep their downloads in web/.cache.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --cache .cache/npm
fi

mkdir -p .cache/wheels
"$PYTHON" -m pip download --quiet --no-deps --require-hashes -r requirements-browser.txt \
  -d .cache/wheels

rm -rf vendor
"$PYTHON" tools/assemble.py --cache .cache/wheels --out vendor

# Pure Python, so one wheel serves CPython and Pyodide alike.
"$PYTHON" -m pip wheel --quiet --no-deps .. -w vendor/wheels
"$PYTHON" tools/assemble.py --index vendor/wheels
echo "web/vendor is ready: serve web/ (npm run serve) and open http://127.0.0.1:8000/"
