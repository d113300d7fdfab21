// The page: the editor, the Run button, and what the worker sends back (output, loss
// points, DOT source drawn with Graphviz compiled to WebAssembly, progress).
const EXAMPLES = [
  ['mlp.py', 'Train an MLP (two spirals)'],
  ['variable.py', "The seed posts' Variable"],
  ['gpt.py', 'A tiny GPT on a short text'],
  ['tour.py', 'The tour of the seed posts'],
];

const $ = (id) => document.getElementById(id);
const pending = new Map();
let nextId = 1;
let losses = [];
let vizReady = null;
let worker = null;
let ready = null;

function setProgress(fraction, text) {
  $('progress').value = fraction;
  if (text) $('status').textContent = text;
}

function appendOutput(text, stream) {
  const out = $('output');
  if (stream === 'stderr') {
    const span = document.createElement('span');
    span.className = 'stderr';
    span.textContent = text;
    out.appendChild(span);
  } else {
    out.appendChild(document.createTextNode(text));
  }
  out.scrollTop = out.scrollHeight;
}

// Redraws are coalesced to one per animation frame: a training loop posts a point per step.
let drawQueued = false;
function queueLossDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => { drawQueued = false; drawLoss(); });
}

function drawLoss() {
  const canvas = $('loss');
  const ctx = canvas.getContext('2d');
  const W = canvas.width;
  const H = canvas.height;
  const pad = { l: 56, r: 12, t: 10, b: 28 };
  ctx.clearRect(0, 0, W, H);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#5a6474';
  if (!losses.length) {
    ctx.fillText('no loss yet: call playground.loss(value) in a training loop', pad.l, H / 2);
    return;
  }
  const xs = losses.map((p, i) => (p.step >= 0 ? p.step : i));
  const ys = losses.map((p) => p.value);
  const xmin = Math.min(...xs);
  const xmax = Math.max(xmin + 1, ...xs);
  const ymin = Math.min(0, ...ys);
  const ymax = Math.max(ymin + 1e-12, ...ys);
  const px = (x) => pad.l + ((x - xmin) / (xmax - xmin)) * (W - pad.l - pad.r);
  const py = (y) => H - pad.b - ((y - ymin) / (ymax - ymin)) * (H - pad.t - pad.b);
  ctx.strokeStyle = '#c9ced6';
  ctx.beginPath();
  ctx.moveTo(pad.l, pad.t);
  ctx.lineTo(pad.l, H - pad.b);
  ctx.lineTo(W - pad.r, H - pad.b);
  ctx.stroke();
  for (let i = 0; i <= 4; i++) {
    const y = ymin + ((ymax - ymin) * i) / 4;
    ctx.fillText(y.toPrecision(3), 4, py(y) + 4);
  }
  ctx.fillText(`step ${xmin}`, pad.l, H - 8);
  const last = `step ${xmax}`;
  ctx.fillText(last, W - pad.r - ctx.measureText(last).width, H - 8);
  ctx.strokeStyle = '#2d6cdf';
  ctx.lineWidth = 2;
  ctx.beginPath();
  xs.forEach((x, i) => (i ? ctx.lineTo(px(x), py(ys[i])) : ctx.moveTo(px(x), py(ys[i]))));
  ctx.stroke();
  ctx.lineWidth = 1;
  const text = `loss ${ys[ys.length - 1].toPrecision(4)}`;
  ctx.fillStyle = '#1d2330';
  ctx.fillText(text, W - pad.r - ctx.measureText(text).width, pad.t + 10);
}

async function drawGraph(dot) {
  const box = $('graph');
  try {
    vizReady = vizReady || Viz.instance();
    const viz = await vizReady;
    box.replaceChildren(viz.renderSVGElement(dot));
  } catch (e) {
    box.textContent = `could not draw the graph: ${e}`;
  }
}

function onWorkerMessage(msg, resolveReady, rejectReady) {
  if (msg.type === 'progress') setProgress(msg.fraction, msg.stage);
  else if (msg.type === 'stdout') appendOutput(msg.text, msg.stream);
  else if (msg.type === 'loss') { losses.push(msg); queueLossDraw(); }
  else if (msg.type === 'graph') drawGraph(msg.dot);
  else if (msg.type === 'ready') {
    $('versions').textContent = `${msg.versions.banner}; Pyodide ${msg.versions.pyodide}`;
    $('run').disabled = false;
    setProgress(1, 'ready');
    resolveReady(msg.versions);
  } else if (msg.type === 'fatal') {
    setProgress(0, 'could not start Python');
    appendOutput(msg.error + '\n', 'stderr');
    rejectReady(new Error(msg.error));
  } else if (msg.type === 'done') {
    const done = pending.get(msg.id);
    pending.delete(msg.id);
    if (done) done(msg);
  }
}

// Python cannot be interrupted from outside without cross-origin isolation, which a plain
// static server does not give; Stop ends the worker and starts a fresh one.
function startWorker() {
  worker = new Worker('worker.js');
  ready = new Promise((resolveReady, rejectReady) => {
    worker.onmessage = (event) => onWorkerMessage(event.data, resolveReady, rejectReady);
  });
  ready.catch(() => {});
}

function stop() {
  worker.terminate();
  for (const [id, done] of pending) done({ id, ok: false, error: 'stopped' });
  pending.clear();
  $('stop').hidden = true;
  $('run').disabled = true;
  startWorker();
}

function request(type, fields) {
  const id = nextId++;
  return new Promise((ok) => {
    pending.set(id, ok);
    worker.postMessage({ id, type, ...fields });
  });
}

async function run(code) {
  await ready;
  $('run').disabled = true;
  $('output').replaceChildren();
  $('graph').replaceChildren();
  losses = [];
  drawLoss();
  setProgress(0, 'running…');
  $('stop').hidden = false;
  const started = performance.now();
  const result = await request('run', { code });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (!result.ok) appendOutput(result.error + '\n', 'stderr');
  if (result.error !== 'stopped') {
    setProgress(1, result.ok ? `done in ${seconds} s` : 'failed');
    $('run').disabled = false;
  }
  $('stop').hidden = true;
  return { ...result, output: $('output').textContent, losses: losses.map((p) => p.value) };
}

async function loadExample(name) {
  $('code').value = await (await fetch(`examples/${name}`)).text();
}

for (const [file, title] of EXAMPLES) $('example').add(new Option(title, file));
$('example').onchange = () => loadExample($('example').value);
$('run').onclick = () => run($('code').value);
$('stop').onclick = stop;
$('code').addEventListener('keydown', (e) => {
  if (e.key === 'Tab') {
    e.preventDefault();
    const t = e.target;
    t.setRangeText('    ', t.selectionStart, t.selectionEnd, 'end');
  } else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !$('run').disabled) {
    run(e.target.value);
  }
});
startWorker();
loadExample(EXAMPLES[0][0]);
drawLoss();

// What the browser check drives; also handy from the developer console.
window.playground = {
  get ready() { return ready; },
  run,
  eval: async (code) => { await ready; return request('eval', { code }); },
  pytest: async (args) => { await ready; return request('pytest', { args }); },
  loadExample,
  get lastLosses() { return losses.map((p) => p.value); },
};
