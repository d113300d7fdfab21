// The browser checks: the playground served on 127.0.0.1, driven in headless Chromium by
// playwright-core. Each check runs through the page's own worker and compares with native
// CPython running the same code from this checkout.
//
//   node check/browser-check.mjs        (after `npm run setup`)
//
// Environment: CHROMIUM (default: Debian's /usr/bin/chromium), PYTHON (default: python3),
// ARTIFACTS (where the screenshot goes; default: web/artifacts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

const WEB = resolve(fileURLToPath(new URL('..', import.meta.url)));
const REPO = resolve(WEB, '..');
const PYTHON = process.env.PYTHON || 'python3';
const ARTIFACTS = resolve(process.env.ARTIFACTS || join(WEB, 'artifacts'));
const results = [];

function native(args) {
  // The checkout's src first, and the stand-in playground module the examples import.
  const env = { ...process.env, PYTHONPATH: [join(REPO, 'src'), join(WEB, 'check', 'native')].join(':') };
  return execFileSync(PYTHON, args, { cwd: WEB, env, encoding: 'utf8', maxBuffer: 1 << 26 });
}

function check(name, ok, detail = '') {
  results.push(ok);
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? ': ' + detail : ''}`);
}

function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const line = a.slice(0, i).split('\n').length;
  return `first difference at character ${i} (line ${line}): page ${JSON.stringify(a.slice(i, i + 60))}, native ${JSON.stringify(b.slice(i, i + 60))}`;
}

const server = await serve(0);
const url = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  // Root in a container: Chromium's sandbox needs user namespaces it may not get.
  args: ['--no-sandbox'],
});
const errors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(600_000);
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

  let t0 = Date.now();
  await page.goto(url);
  const versions = await page.evaluate(() => window.playground.ready);
  console.log(`page ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${versions.banner}, Pyodide ${versions.pyodide}`);
  const platform = await page.evaluate(() => window.playground.eval('import sys; sys.platform'));
  check('dynagrad runs under Pyodide', platform.ok && platform.result === 'emscripten', JSON.stringify(platform.result));

  // Pyodide's in-memory file system and the compiler, which the suite below does not reach.
  const misc = await page.evaluate(() => window.playground.eval(`
import dynagrad as dg, dynagrad.nn as nn
m, m2 = nn.Conv2d(1, 2, 3), nn.Conv2d(1, 2, 3)
dg.save(m.state_dict(), '/tmp/m.pt')
m2.load_state_dict(dg.load('/tmp/m.pt'))
x = dg.randn(1, 1, 5, 5)
f = dg.compile(lambda a: (a.sin() * 2).sum())
[bool((m(x) == m2(x)).all()), f(dg.ones(3)).item() == (dg.ones(3).sin() * 2).sum().item()]`));
  check('save/load through the in-memory file system, and dynagrad.compile', misc.ok && misc.result.every(Boolean),
    JSON.stringify(misc.ok ? misc.result : misc.error));

  // The MLP, run from the page's own controls, so the screenshot shows what a user sees.
  const mlpCode = readFileSync(join(WEB, 'examples', 'mlp.py'), 'utf8');
  await page.selectOption('#example', 'mlp.py');
  await page.waitForFunction((code) => document.getElementById('code').value === code, mlpCode);
  t0 = Date.now();
  await page.click('#run');
  await page.waitForFunction(() => /^(done|failed)/.test(document.getElementById('status').textContent));
  const mlpSeconds = (Date.now() - t0) / 1000;
  await page.waitForSelector('#graph svg', { timeout: 60_000 }).catch(() => {});
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'playground.png'), fullPage: true });
  const mlp = await page.evaluate(() => ({
    output: document.getElementById('output').textContent,
    status: document.getElementById('status').textContent,
    nodes: document.querySelectorAll('#graph svg g.node').length,
  }));
  const nativeMlp = JSON.parse(native(['check/native/run_example.py', 'examples/mlp.py']));
  // NumPy's WebAssembly build has no BLAS: float32 matrix products sum in another order, so
  // losses agree to float32 rounding rather than bit for bit (the tour, below, is exact).
  const lastLine = (text) => text.trim().split('\n').pop();
  check('the MLP ends with the same accuracy line as native CPython', lastLine(mlp.output) === lastLine(nativeMlp.output),
    `${JSON.stringify(lastLine(mlp.output))} after ${mlpSeconds.toFixed(1)} s in the page`);
  const pageLosses = await page.evaluate(() => window.playground.lastLosses);
  const worst = Math.max(...nativeMlp.losses.map((v, i) => Math.abs(v - pageLosses[i]) / Math.max(Math.abs(v), 1e-12)));
  const same = pageLosses.filter((v, i) => v === nativeMlp.losses[i]).length;
  check('the MLP trains to the same losses as native CPython',
    pageLosses.length === nativeMlp.losses.length && worst <= 1e-5,
    `${same}/${nativeMlp.losses.length} identical, largest relative difference ${worst.toExponential(2)}`);
  check('the backward graph is drawn as a picture', mlp.nodes > 10, `${mlp.nodes} nodes in the SVG`);

  // The tour of the seed posts: byte for byte.
  const tour = await page.evaluate((code) => window.playground.run(code),
    readFileSync(join(WEB, 'examples', 'tour.py'), 'utf8'));
  const nativeTour = native(['-m', 'dynagrad.examples.tour']);
  check("the tour's output equals native CPython's byte for byte",
    tour.ok && tour.output === nativeTour,
    tour.ok ? (tour.output === nativeTour ? `${nativeTour.length} characters` : firstDifference(tour.output, nativeTour)) : tour.error);

  // The other examples: the Variable one is exact arithmetic, so byte for byte; the GPT
  // trains in float32, so to rounding, like the MLP.
  const variable = await page.evaluate((code) => window.playground.run(code),
    readFileSync(join(WEB, 'examples', 'variable.py'), 'utf8'));
  const nativeVariable = JSON.parse(native(['check/native/run_example.py', 'examples/variable.py']));
  const variableNodes = await page.evaluate(() => document.querySelectorAll('#graph svg g.node').length);
  check("the Variable example's output equals native CPython's, and its graph is drawn",
    variable.ok && variable.output === nativeVariable.output && variableNodes > 0,
    variable.ok ? (variable.output === nativeVariable.output ? `${variableNodes} graph nodes` : firstDifference(variable.output, nativeVariable.output)) : variable.error);
  t0 = Date.now();
  const gpt = await page.evaluate((code) => window.playground.run(code),
    readFileSync(join(WEB, 'examples', 'gpt.py'), 'utf8'));
  const nativeGpt = JSON.parse(native(['check/native/run_example.py', 'examples/gpt.py']));
  const gptWorst = gpt.ok ? Math.max(...nativeGpt.losses.map((v, i) => Math.abs(v - gpt.losses[i]) / Math.abs(v))) : Infinity;
  check('the tiny GPT trains to the same losses as native CPython',
    gpt.ok && gpt.losses.length === nativeGpt.losses.length && gptWorst <= 1e-4,
    gpt.ok ? `largest relative difference ${gptWorst.toExponential(2)}, ${((Date.now() - t0) / 1000).toFixed(1)} s in the page` : gpt.error);

  // A torch-free part of the pytest suite, inside the page.
  t0 = Date.now();
  await page.evaluate(() => document.getElementById('output').replaceChildren());
  const pytest = await page.evaluate(() => window.playground.pytest([]));
  const report = await page.evaluate(() => document.getElementById('output').textContent);
  const summary = report.trim().split('\n').pop();
  check('the chosen tests pass inside the page', pytest.ok && pytest.result === 0,
    `${summary} in ${((Date.now() - t0) / 1000).toFixed(1)} s${pytest.ok ? '' : ' ' + pytest.error}`);
  for (const line of report.split('\n')) if (/^(SKIPPED|left out here)/.test(line)) console.log(`  ${line}`);
  if (!(pytest.ok && pytest.result === 0)) console.log(report.slice(-6000));

  // A program that never ends: Stop must end it and leave a working Python behind.
  t0 = Date.now();
  const runaway = page.evaluate(() => window.playground.run('while True:\n    pass\n'));
  await page.waitForSelector('#stop:not([hidden])');
  await page.waitForTimeout(500);
  await page.click('#stop');
  const stopped = await runaway;
  await page.evaluate(() => window.playground.ready);
  const after = await page.evaluate(() => window.playground.eval('import dynagrad; int(dynagrad.tensor(2) + 1)'));
  check('Stop ends a runaway program and Python starts again', stopped.error === 'stopped' && after.ok && after.result === 3,
    `${JSON.stringify(after.ok ? after.result : after.error)}, ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  check('no errors in the page', errors.length === 0, errors.join(' | '));
} finally {
  await browser.close();
  server.close();
}
const passed = results.filter(Boolean).length;
console.log(`browser checks: ${passed} passed, ${results.length - passed} failed`);
process.exit(passed === results.length ? 0 : 1);
