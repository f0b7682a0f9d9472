#!/usr/bin/env node
// Drives headless Chromium (Debian's `chromium`) over the DevTools protocol on a pipe
// (--remote-debugging-pipe: no port, no npm package) to open a page `amanda view` wrote.
//
//   node cdp_view.js PAGE.html [--screenshot OUT.png] [--click NAME_OR_TYPE] [--expand NAME_OR_TYPE]
//                    [--size WxH] [--zoom Z] [--frames] [--timeout SECONDS]
//
// Prints one JSON object: how long the page took to be drawn (ms from navigation to the viewer's
// ready mark), the op count the page shows, console errors and uncaught exceptions, and for
// --click the details panel after a real mouse click on that op (found by the viewer's search).
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const args = process.argv.slice(2);
const opt = { page: null, screenshot: null, click: null, expand: null, size: '1400x900', timeout: 60, zoom: 0, frames: false };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--screenshot') opt.screenshot = args[++i];
  else if (a === '--click') opt.click = args[++i];
  else if (a === '--expand') opt.expand = args[++i];
  else if (a === '--size') opt.size = args[++i];
  else if (a === '--zoom') opt.zoom = Number(args[++i]);
  else if (a === '--frames') opt.frames = true;
  else if (a === '--timeout') opt.timeout = Number(args[++i]);
  else if (!opt.page) opt.page = a;
  else { console.error('cdp_view: unexpected argument ' + a); process.exit(2); }
}
if (!opt.page) { console.error('usage: cdp_view.js PAGE.html [--screenshot OUT.png] [--click OP] [--expand OP]'); process.exit(2); }
const [width, height] = opt.size.split('x').map(Number);
const browser = process.env.AMANDA_CHROMIUM || 'chromium';
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'amanda-cdp-'));
const chrome = spawn(browser, [
  '--headless=new', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-extensions', '--disable-background-networking', '--hide-scrollbars', '--mute-audio',
  '--user-data-dir=' + profile, '--window-size=' + width + ',' + height, 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let chromeErr = '';
chrome.stderr.on('data', (d) => { chromeErr += d; });
const toChrome = chrome.stdio[3], fromChrome = chrome.stdio[4];

let nextId = 1, buffer = Buffer.alloc(0);
const pending = new Map(), listeners = [];
fromChrome.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  let end;
  while ((end = buffer.indexOf(0)) >= 0) {
    const msg = JSON.parse(buffer.subarray(0, end).toString('utf8'));
    buffer = buffer.subarray(end + 1);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(JSON.stringify(msg.error))); else resolve(msg.result);
    } else if (msg.method) {
      for (const l of listeners) l(msg);
    }
  }
});
function send(method, params = {}, sessionId) {
  const id = nextId++;
  const msg = { id, method, params };
  if (sessionId) msg.sessionId = sessionId;
  toChrome.write(JSON.stringify(msg) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function finish(result, code) {
  process.stdout.write(JSON.stringify(result, null, 1) + '\n');
  try { chrome.kill('SIGKILL'); } catch (e) { /* already gone */ }
  try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* best effort */ }
  process.exit(code);
}
const killer = setTimeout(() => finish({ error: 'timed out after ' + opt.timeout + ' s', chrome: chromeErr.slice(-2000) }, 1),
  opt.timeout * 1000);

(async () => {
  const result = { page: path.resolve(opt.page), errors: [] };
  const { targetInfos } = await send('Target.getTargets');
  const target = targetInfos.find((t) => t.type === 'page');
  const { sessionId } = await send('Target.attachToTarget', { targetId: target.targetId, flatten: true });
  const s = (m, p) => send(m, p, sessionId);
  let loaded = false;
  listeners.push((msg) => {
    if (msg.sessionId !== sessionId) return;
    if (msg.method === 'Runtime.consoleAPICalled' && (msg.params.type === 'error' || msg.params.type === 'assert'))
      result.errors.push('console.' + msg.params.type + ': ' + msg.params.args.map((a) => a.value ?? a.description).join(' '));
    else if (msg.method === 'Runtime.exceptionThrown')
      result.errors.push('exception: ' + (msg.params.exceptionDetails.exception?.description || msg.params.exceptionDetails.text));
    else if (msg.method === 'Log.entryAdded' && msg.params.entry.level === 'error')
      result.errors.push('log: ' + msg.params.entry.text + (msg.params.entry.url ? ' (' + msg.params.entry.url + ')' : ''));
    else if (msg.method === 'Page.loadEventFired') loaded = true;
  });
  await s('Runtime.enable');
  await s('Log.enable');
  await s('Page.enable');
  await s('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  const eval_ = async (expr) => {
    const r = await s('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error(expr + ': ' + (r.exceptionDetails.exception?.description || r.exceptionDetails.text));
    return r.result.value;
  };
  const t0 = Date.now();
  await s('Page.navigate', { url: 'file://' + path.resolve(opt.page) });
  while (!(await eval_("document.body && document.body.dataset.ready === '1'").catch(() => false))) {
    if (result.errors.length) break;
    await sleep(20);
  }
  result.readyMs = Date.now() - t0;
  while (!loaded && Date.now() - t0 < opt.timeout * 1000) await sleep(20);
  if (!result.errors.length) {
    const page = await eval_('({ ops: amandaView.ops, nodes: amandaView.nodes, edges: amandaView.edges, scopes: amandaView.scopes, ' +
      'parseMs: amandaView.parseMs, pageReadyMs: amandaView.readyMs, layoutMs: amandaView.layoutMs, ' +
      "opCountShown: Number(document.getElementById('op-count').textContent) })");
    Object.assign(result, page);
    if (opt.frames) {
      await eval_('amandaView.frameMs()');  // once to warm up
      result.frameMs = await eval_('amandaView.frameMs()');
    }
    const click = async (query, type) => {
      // Finds the op with the viewer's search (exact type or name first), scrolls it into view, clicks.
      const i = await eval_('amandaView.find(' + JSON.stringify(query) + ')[0] ?? -1');
      if (i < 0) return { query, found: false };
      await eval_('amandaView.center(' + i + ')');
      await sleep(50);
      const at = await eval_('amandaView.screenOf(' + i + ')');
      for (const t of type === 'double' ? ['mousePressed', 'mouseReleased', 'mousePressed', 'mouseReleased'] : ['mousePressed', 'mouseReleased'])
        await s('Input.dispatchMouseEvent', { type: t, x: at.x, y: at.y, button: 'left', clickCount: type === 'double' && t.endsWith('2') ? 2 : 1 });
      if (type === 'double')
        await eval_('document.getElementById("canvas").dispatchEvent(new MouseEvent("dblclick", {bubbles: true, clientX: ' + at.x + ', clientY: ' + at.y + '}))');
      await sleep(100);
      return {
        query, found: true, index: i, type: await eval_('amandaView.type(' + i + ')'), name: await eval_('amandaView.label(' + i + ')'),
        selected: await eval_('amandaView.selected()'), expanded: await eval_('amandaView.isExpanded(' + i + ')'),
        shownNodes: await eval_('amandaView.shownCount()'),
        heading: await eval_("document.querySelector('#details h2')?.textContent ?? ''"),
        attributes: await eval_("[...document.querySelectorAll('#attributes tr')].map(r => [...r.cells].map(c => c.textContent))"),
        inputs: await eval_("[...document.querySelectorAll('#inputs tr')].map(r => [...r.cells].map(c => c.textContent))"),
        outputs: await eval_("[...document.querySelectorAll('#outputs tr')].map(r => [...r.cells].map(c => c.textContent))"),
      };
    };
    if (opt.expand) {
      const before = await eval_('amandaView.shownCount()');
      result.expand = await click(opt.expand, 'double');
      result.expand.shownBefore = before;
    }
    if (opt.click) result.click = await click(opt.click, 'single');
    if (opt.screenshot) {
      await eval_(opt.zoom ? 'amandaView.zoomTop(' + opt.zoom + ')' : 'amandaView.fit()');
      await sleep(200);
      const shot = await s('Page.captureScreenshot', { format: 'png' });
      fs.writeFileSync(opt.screenshot, Buffer.from(shot.data, 'base64'));
      result.screenshot = opt.screenshot;
    }
  }
  clearTimeout(killer);
  finish(result, 0);
})().catch((e) => finish({ error: String(e && e.stack || e), chrome: chromeErr.slice(-2000) }, 1));
