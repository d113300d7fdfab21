// Runs Pyodide and dynagrad off the page's main thread, so the page stays responsive while
// Python computes. Messages in: {id, type: 'run' | 'eval' | 'pytest', code?, args?}.
// Messages out: progress, stdout, loss, graph, and one 'done' per request id.
const BASE = new URL('.', self.location.href).href;

let pyodide = null;

const post = (msg) => self.postMessage(msg);
const progress = (stage, fraction) => post({ type: 'progress', stage, fraction });

// The Python side of the page: what a program calls to draw its loss curve and graph.
const PLAYGROUND_PY = `
"""Hooks a program in the playground calls: loss(value) adds a point to the live curve,
graph(tensor) draws its backward graph, progress(fraction, text) moves the bar."""
import _playground_js as _js


def loss(value, step=None):
    _js.loss(float(value), -1 if step is None else int(step))


def graph(output, params=None, **kwargs):
    from dynagrad.viz import make_dot
    _js.graph(make_dot(output, params=params, **kwargs).source)


def progress(fraction, text=''):
    _js.progress(float(fraction), str(text))
`;

async function boot() {
  progress('loading the Python runtime (Pyodide)', 0.05);
  const found = await fetch(BASE + 'vendor/versions.json');
  if (!found.ok) throw new Error('web/vendor/ is missing: run `bash web/setup.sh` first (docs/browser.md)');
  const versions = await found.json();
  const wheels = await (await fetch(BASE + 'vendor/wheels/wheels.json')).json();
  importScripts(BASE + 'vendor/pyodide/pyodide.js');
  pyodide = await loadPyodide({ indexURL: BASE + 'vendor/pyodide/' });
  // Raw bytes, not line batches: the browser checks compare output byte for byte.
  const decoder = new TextDecoder();
  pyodide.setStdout({ write: (buf) => { post({ type: 'stdout', text: decoder.decode(buf, { stream: true }) }); return buf.length; } });
  pyodide.setStderr({ write: (buf) => { post({ type: 'stdout', text: decoder.decode(buf, { stream: true }), stream: 'stderr' }); return buf.length; } });
  progress('loading NumPy and micropip', 0.45);
  await pyodide.loadPackage(['numpy', 'micropip'], { messageCallback: () => {} });
  progress('installing dynagrad', 0.75);
  const micropip = pyodide.pyimport('micropip');
  // NumPy is already loaded from Pyodide's own packages, so micropip needs no network
  const urls = [wheels.dynagrad, ...wheels.graphviz].map((w) => BASE + 'vendor/wheels/' + w);
  await micropip.install(urls);
  pyodide.registerJsModule('_playground_js', {
    loss: (value, step) => post({ type: 'loss', value, step }),
    graph: (dot) => post({ type: 'graph', dot }),
    progress: (fraction, text) => post({ type: 'progress', stage: text, fraction, running: true }),
  });
  pyodide.FS.writeFile('/home/pyodide/playground.py', PLAYGROUND_PY);
  const dg = pyodide.runPython('import dynagrad.version, numpy, sys; f"dynagrad {dynagrad.version.dynagrad_version}, NumPy {numpy.__version__}, Python {sys.version.split()[0]}"');
  progress('ready', 1);
  post({ type: 'ready', versions: { ...versions, banner: dg } });
  return wheels;
}

const booted = boot().catch((e) => { post({ type: 'fatal', error: String(e) }); throw e; });

async function installPytest(wheels) {
  const micropip = pyodide.pyimport('micropip');
  await micropip.install.callKwargs(wheels.pytest.map((w) => BASE + "vendor/wheels/" + w), { deps: false });
  const manifest = await (await fetch(BASE + 'vendor/tests/manifest.json')).json();
  for (const rel of manifest.files) {
    const text = await (await fetch(BASE + 'vendor/' + rel)).text();
    const dest = '/home/pyodide/' + rel;
    pyodide.FS.mkdirTree(dest.slice(0, dest.lastIndexOf('/')));
    pyodide.FS.writeFile(dest, text);
  }
  return manifest;
}

self.onmessage = async (event) => {
  const { id, type, code, args } = event.data;
  const wheels = await booted;
  try {
    let result = null;
    if (type === 'run') {
      // A fresh namespace per run, like a new script; modules stay imported.
      await pyodide.runPythonAsync(code, { globals: pyodide.toPy({ __name__: '__main__' }) });
    } else if (type === 'eval') {
      const value = await pyodide.runPythonAsync(code);
      result = value && value.toJs ? value.toJs({ dict_converter: Object.fromEntries }) : value;
    } else if (type === 'pytest') {
      const manifest = await installPytest(wheels);
      const chosen = args && args.length ? args
        : [...manifest.files, ...Object.keys(manifest.deselect).flatMap((t) => ['--deselect', t])];
      for (const [test, why] of Object.entries(manifest.deselect)) post({ type: 'stdout', text: `left out here: ${test}: ${why}\n` });
      pyodide.globals.set('_pytest_args', pyodide.toPy(chosen));
      result = await pyodide.runPythonAsync(
        'import os, pytest\nos.chdir("/home/pyodide")\n' +
        'int(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", *_pytest_args]))');
    }
    post({ type: 'done', id, ok: true, result });
  } catch (e) {
    post({ type: 'done', id, ok: false, error: String(e) });
  }
};
