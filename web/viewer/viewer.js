// amanda view: draws the scene `amanda view` wrote into this page. The C++ side laid out every
// scope (the graph, each nested graph) on its own; here an expanded op grows to hold its nested
// graphs and everything right of it and below it moves over by as much (a monotone stretch of
// each axis, so nothing comes to overlap). Drawing is on a canvas, only what is in view.
(function () {
  'use strict';
  const started = performance.now();
  const S = JSON.parse(document.getElementById('scene').textContent);
  const N = S.kind.length;
  const OP = 0, INPUT = 1, OUTPUT = 2;
  const MARKS = ['same', 'modified', 'retyped', 'added'];
  const MARK_FILL = ['#eceff3', '#fff0a8', '#ffd1a1', '#c6efc6'];
  const MARK_LINE = ['#a9b3c1', '#b89a14', '#c4782a', '#3c9a4a'];

  // ---- the scene
  const scopes = S.scopes.map((a) => ({ owner: a[0], title: a[1], n0: a[2], nc: a[3], e0: a[4], ec: a[5], w: a[6], h: a[7] }));
  const bodies = new Map();
  for (const [node, list] of S.bodies) bodies.set(node, list);
  const scopeOf = new Int32Array(N);
  scopes.forEach((s, k) => { for (let i = s.n0; i < s.n0 + s.nc; i++) scopeOf[i] = k; });
  const E = S.edges.length;
  const edgeScope = new Int32Array(E);
  scopes.forEach((s, k) => { for (let e = s.e0; e < s.e0 + s.ec; e++) edgeScope[e] = k; });
  let opCount = 0;
  for (let i = 0; i < N; i++) if (S.kind[i] === OP) opCount++;
  const hasMarks = Array.isArray(S.mark);

  // Colours: a pastel per op type (from the type's name, so one type keeps its colour everywhere).
  const typeFill = S.types.map((t) => {
    let h = 0;
    for (let i = 0; i < t.length; i++) h = (h * 31 + t.charCodeAt(i)) >>> 0;
    return 'hsl(' + (h % 360) + ',55%,88%)';
  });

  // ---- placement: world coordinates of what is drawn
  const X = new Float64Array(N), Y = new Float64Array(N), W = new Float64Array(N), H = new Float64Array(N);
  const shown = new Uint8Array(N);
  const edgeShown = new Uint8Array(E);
  let edgePts = new Array(E);
  const edgeBox = new Float64Array(E * 4);
  const expanded = new Set();
  const PAD = 12, TITLE = 18, GAP = 16;
  let drawScopes = [];  // {scope, x, y, w, h}
  let world = { w: 0, h: 0 };

  // Stretches: x' = x + sum of dw over thresholds below x (and the same for y).
  function stretcher(ts) {
    ts.sort((a, b) => a.t - b.t);
    const t = new Float64Array(ts.length), acc = new Float64Array(ts.length + 1);
    ts.forEach((s, i) => { t[i] = s.t; acc[i + 1] = acc[i] + s.d; });
    return function (v, inclusive) {
      let lo = 0, hi = t.length;
      while (lo < hi) {
        const m = (lo + hi) >> 1;
        if (inclusive ? t[m] <= v : t[m] < v) lo = m + 1; else hi = m;
      }
      return v + acc[lo];
    };
  }

  const sizeMemo = new Map();
  // The size of a scope with its expanded ops, and what each expanded op needs.
  function scopeSize(k) {
    if (sizeMemo.has(k)) return sizeMemo.get(k);
    const s = scopes[k];
    const xs = [], ys = [], grow = new Map();
    for (let i = s.n0; i < s.n0 + s.nc; i++) {
      if (!expanded.has(i)) continue;
      let cw = 0, ch = 0;
      for (const b of bodies.get(i)) {
        const z = scopeSize(b);
        cw += (cw ? GAP : 0) + Math.max(z.w, 80);
        ch = Math.max(ch, z.h + TITLE);
      }
      const w = Math.max(S.w[i], cw + 2 * PAD), h = S.h[i] + ch + 2 * PAD;
      grow.set(i, { w, h });
      xs.push({ t: S.x[i] + S.w[i] / 2, d: w - S.w[i] });
      ys.push({ t: S.y[i] + S.h[i], d: h - S.h[i] });
    }
    const fx = stretcher(xs), fy = stretcher(ys);
    const r = { w: fx(s.w, false) + (xs.length ? 0 : 0), h: fy(s.h, true), fx, fy, grow };
    // A grown op may reach past the old right edge.
    for (const [i, g] of grow) r.w = Math.max(r.w, fx(S.x[i], false) + g.w);
    sizeMemo.set(k, r);
    return r;
  }

  function placeScope(k, ox, oy) {
    const s = scopes[k], z = scopeSize(k);
    drawScopes.push({ scope: k, x: ox, y: oy, w: z.w, h: z.h });
    for (let i = s.n0; i < s.n0 + s.nc; i++) {
      // By the centre, where edges attach: a node and its edges move together.
      shown[i] = 1;
      X[i] = ox + z.fx(S.x[i] + S.w[i] / 2, false) - S.w[i] / 2;
      Y[i] = oy + z.fy(S.y[i], true);
      const g = z.grow.get(i);
      W[i] = g ? g.w : S.w[i];
      H[i] = g ? g.h : S.h[i];
    }
    for (let e = s.e0; e < s.e0 + s.ec; e++) {
      const src = S.edges[e], n = (src.length - 3) >> 1, a = src[0], b = src[1], up = (src[2] & 2) !== 0;
      const p = new Float64Array(n * 2);
      for (let j = 1; j + 1 < n; j++) {
        p[2 * j] = ox + z.fx(src[3 + 2 * j], false);
        p[2 * j + 1] = oy + z.fy(src[4 + 2 * j], true);
      }
      // The ends from the nodes as placed (an expanded op is taller than its layer).
      if (n >= 2) {
        p[0] = X[a] + S.w[a] / 2; p[1] = up ? Y[a] : Y[a] + H[a];
        p[2 * n - 2] = X[b] + S.w[b] / 2; p[2 * n - 1] = up ? Y[b] + H[b] : Y[b];
      }
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let j = 0; j < n; j++) {
        const x = p[2 * j], y = p[2 * j + 1];
        if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y;
      }
      edgePts[e] = p;
      edgeShown[e] = 1;
      edgeBox[4 * e] = x0; edgeBox[4 * e + 1] = y0; edgeBox[4 * e + 2] = x1; edgeBox[4 * e + 3] = y1;
    }
    for (const [i] of z.grow) {
      let bx = X[i] + PAD;
      const by = Y[i] + S.h[i] + PAD + TITLE;
      for (const b of bodies.get(i)) {
        const bz = scopeSize(b);
        placeScope(b, bx, by);
        bx += Math.max(bz.w, 80) + GAP;
      }
    }
  }

  function relayout() {
    sizeMemo.clear();
    shown.fill(0);
    edgeShown.fill(0);
    drawScopes = [];
    let x = 0, h = 0;
    scopes.forEach((s, k) => {
      if (s.owner >= 0) return;
      const z = scopeSize(k);
      placeScope(k, x, k === 0 ? 0 : TITLE);
      x += z.w + 4 * GAP;
      h = Math.max(h, z.h + (k === 0 ? 0 : TITLE));
    });
    world = { w: x, h };
  }

  // ---- the view
  const canvas = document.getElementById('canvas');
  const ctx = canvas.getContext('2d');
  const view = { x: 0, y: 0, s: 1 };  // screen = (world - (x, y)) * s
  let selected = -1, hovered = -1, frame = 0;
  let dpr = window.devicePixelRatio || 1;

  function resize() {
    dpr = window.devicePixelRatio || 1;
    const r = canvas.getBoundingClientRect();
    canvas.width = Math.max(1, Math.round(r.width * dpr));
    canvas.height = Math.max(1, Math.round(r.height * dpr));
    redraw();
  }
  function cssSize() { return { w: canvas.width / dpr, h: canvas.height / dpr }; }
  function redraw() { if (!frame) frame = requestAnimationFrame(draw); }

  function fit() {
    const c = cssSize();
    const s = Math.min((c.w - 40) / Math.max(world.w, 1), (c.h - 40) / Math.max(world.h, 1), 1.5);
    if (s >= 0.12) {
      view.s = s;
      view.x = world.w / 2 - c.w / 2 / s;
      view.y = world.h / 2 - c.h / 2 / s;
    } else {
      // Too big to read whole: as wide as fits (readable), from the top.
      view.s = Math.max(0.12, Math.min(1, (c.w - 40) / Math.max(world.w, 1)));
      view.x = world.w / 2 - c.w / 2 / view.s;
      view.y = -20 / view.s;
    }
    redraw();
  }

  function nodeFill(i) {
    if (S.kind[i] === INPUT) return '#dcefdc';
    if (S.kind[i] === OUTPUT) return '#f3e1e1';
    if (hasMarks) return MARK_FILL[S.mark[i]];
    return typeFill[S.type[i]];
  }

  function draw() {
    frame = 0;
    const c = cssSize(), s = view.s;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, c.w, c.h);
    ctx.setTransform(dpr * s, 0, 0, dpr * s, -view.x * s * dpr, -view.y * s * dpr);
    const vx0 = view.x, vy0 = view.y, vx1 = view.x + c.w / s, vy1 = view.y + c.h / s;
    const detail = s >= 0.35, text = s >= 0.45;
    // Nested graphs' frames.
    for (const d of drawScopes) {
      if (d.x > vx1 || d.y - TITLE > vy1 || d.x + d.w < vx0 || d.y + d.h < vy0) continue;
      if (scopes[d.scope].owner < 0 && d.scope === 0) continue;
      ctx.fillStyle = 'rgba(240,244,250,0.9)';
      ctx.strokeStyle = '#9aa5b5';
      ctx.lineWidth = 1 / s;
      ctx.setLineDash([4 / s, 3 / s]);
      ctx.fillRect(d.x - 6, d.y - TITLE, d.w + 12, d.h + TITLE + 6);
      ctx.strokeRect(d.x - 6, d.y - TITLE, d.w + 12, d.h + TITLE + 6);
      ctx.setLineDash([]);
      if (text) {
        ctx.fillStyle = '#4d5a6e';
        ctx.font = '11px system-ui, sans-serif';
        ctx.fillText(scopes[d.scope].title, d.x, d.y - 5);
      }
    }
    // Edges, data then control (dashed); the selected op's edges on top.
    const sel = [];
    for (let pass = 0; pass < 2; pass++) {
      ctx.beginPath();
      for (let e = 0; e < E; e++) {
        if (!edgeShown[e] || (S.edges[e][2] & 1) !== pass) continue;
        if (edgeBox[4 * e] > vx1 || edgeBox[4 * e + 2] < vx0 || edgeBox[4 * e + 1] > vy1 || edgeBox[4 * e + 3] < vy0) continue;
        if (S.edges[e][0] === selected || S.edges[e][1] === selected) { sel.push(e); continue; }
        const p = edgePts[e];
        ctx.moveTo(p[0], p[1]);
        for (let j = 2; j < p.length; j += 2) ctx.lineTo(p[j], p[j + 1]);
        if (detail) arrowPath(p);
      }
      ctx.strokeStyle = pass ? '#b0a0c8' : '#8a95a6';
      ctx.lineWidth = Math.max(1, 1.2 * s) / s;
      if (pass) ctx.setLineDash([5 / s, 4 / s]);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (sel.length) {
      ctx.beginPath();
      for (const e of sel) {
        const p = edgePts[e];
        ctx.moveTo(p[0], p[1]);
        for (let j = 2; j < p.length; j += 2) ctx.lineTo(p[j], p[j + 1]);
        arrowPath(p);
      }
      ctx.strokeStyle = '#2b6cd4';
      ctx.lineWidth = 2.2 / s;
      ctx.stroke();
    }
    // Nodes: boxes for ops, pills for graph ports.
    const visible = [];
    for (let i = 0; i < N; i++) {
      if (!shown[i] || X[i] > vx1 || Y[i] > vy1 || X[i] + W[i] < vx0 || Y[i] + H[i] < vy0) continue;
      visible.push(i);
    }
    if (!detail) {
      const byFill = new Map();
      for (const i of visible) {
        const f = nodeFill(i);
        if (!byFill.has(f)) byFill.set(f, []);
        byFill.get(f).push(i);
      }
      for (const [f, list] of byFill) {
        ctx.fillStyle = f;
        ctx.beginPath();
        for (const i of list) ctx.rect(X[i], Y[i], W[i], expanded.has(i) ? S.h[i] : H[i]);
        ctx.fill();
      }
      ctx.strokeStyle = '#5b6b82';
      ctx.lineWidth = 1 / s;
      ctx.beginPath();
      for (const i of visible) ctx.rect(X[i], Y[i], W[i], H[i]);
      ctx.stroke();
    } else {
      for (const i of visible) drawNode(i, text);
    }
    if (selected >= 0 && shown[selected]) {
      ctx.strokeStyle = '#2b6cd4';
      ctx.lineWidth = 3 / s;
      ctx.strokeRect(X[selected] - 2 / s, Y[selected] - 2 / s, W[selected] + 4 / s, H[selected] + 4 / s);
    }
    status.textContent = visible.length + ' of ' + N + ' nodes in view · zoom ' + Math.round(s * 100) + '%';
  }

  function arrowPath(p) {
    const n = p.length;
    if (n < 4) return;
    const x = p[n - 2], y = p[n - 1];
    let dx = x - p[n - 4], dy = y - p[n - 3];
    const l = Math.hypot(dx, dy) || 1;
    dx /= l; dy /= l;
    ctx.moveTo(x - 6 * dx - 3.5 * dy, y - 6 * dy + 3.5 * dx);
    ctx.lineTo(x, y);
    ctx.lineTo(x - 6 * dx + 3.5 * dy, y - 6 * dy - 3.5 * dx);
  }

  function drawNode(i, text) {
    const x = X[i], y = Y[i], w = W[i], h = H[i], k = S.kind[i];
    const open = expanded.has(i);
    ctx.beginPath();
    ctx.roundRect(x, y, w, h, k === OP ? 5 : 10);
    ctx.fillStyle = open ? 'rgba(255,255,255,0.6)' : nodeFill(i);
    ctx.fill();
    ctx.lineWidth = (i === hovered ? 2 : 1) / view.s;
    ctx.strokeStyle = hasMarks && k === OP ? MARK_LINE[S.mark[i]] : '#5b6b82';
    ctx.stroke();
    if (open) {
      ctx.beginPath();
      ctx.roundRect(x, y, w, S.h[i], 5);
      ctx.fillStyle = nodeFill(i);
      ctx.fill();
      ctx.stroke();
    }
    if (!text) return;
    ctx.fillStyle = '#1f2633';
    ctx.textBaseline = 'middle';
    const hb = bodies.has(i) ? 14 : 0;
    if (k === OP) {
      const sub = S.label[i];
      ctx.font = '600 12px system-ui, sans-serif';
      ctx.fillText(clip(S.types[S.type[i]], w - 14 - hb), x + 8, y + (sub ? 11 : S.h[i] / 2));
      if (sub) {
        ctx.font = '10px system-ui, sans-serif';
        ctx.fillStyle = '#4a5568';
        ctx.fillText(clip(sub, w - 14 - hb), x + 8, y + 26);
      }
      if (hb) {
        ctx.fillStyle = '#2b6cd4';
        ctx.font = '12px system-ui, sans-serif';
        ctx.fillText(open ? '▾' : '▸', x + w - 13, y + 11);
      }
    } else {
      ctx.font = '10px system-ui, sans-serif';
      ctx.fillText(clip(S.label[i], w - 12), x + 6, y + h / 2);
    }
  }

  const clipCache = new Map();
  function clip(t, room) {
    const key = t + '\u0000' + Math.round(room);
    const hit = clipCache.get(key);
    if (hit !== undefined) return hit;
    let r = t;
    if (ctx.measureText(t).width > room) {
      let lo = 0, hi = t.length;
      while (lo < hi) {
        const m = (lo + hi + 1) >> 1;
        if (ctx.measureText(t.slice(0, m) + '…').width <= room) lo = m; else hi = m - 1;
      }
      r = t.slice(0, lo) + '…';
    }
    if (clipCache.size > 50000) clipCache.clear();
    clipCache.set(key, r);
    return r;
  }

  // ---- picking and interaction
  function toWorld(cx, cy) { return { x: view.x + cx / view.s, y: view.y + cy / view.s }; }
  function pick(cx, cy) {
    const p = toWorld(cx, cy);
    let best = -1;
    for (let i = 0; i < N; i++) {
      if (!shown[i] || p.x < X[i] || p.y < Y[i] || p.x > X[i] + W[i] || p.y > Y[i] + H[i]) continue;
      // An expanded op is under its nested ops: only its header picks it.
      if (expanded.has(i) && p.y > Y[i] + S.h[i]) continue;
      best = i;
    }
    return best;
  }
  function onToggle(i, cx, cy) {
    if (!bodies.has(i)) return false;
    const p = toWorld(cx, cy);
    return p.x > X[i] + W[i] - 18 && p.y < Y[i] + 20;
  }

  let drag = null;
  canvas.addEventListener('mousedown', (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false };
    canvas.classList.add('dragging');
  });
  window.addEventListener('mousemove', (ev) => {
    const r = canvas.getBoundingClientRect();
    if (drag) {
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      view.x = drag.vx - dx / view.s;
      view.y = drag.vy - dy / view.s;
      redraw();
    } else if (ev.target === canvas) {
      const h = pick(ev.clientX - r.left, ev.clientY - r.top);
      if (h !== hovered) { hovered = h; canvas.title = h >= 0 ? tooltip(h) : ''; redraw(); }
    }
  });
  window.addEventListener('mouseup', (ev) => {
    if (!drag) return;
    const moved = drag.moved;
    drag = null;
    canvas.classList.remove('dragging');
    if (moved || ev.target !== canvas) return;
    const r = canvas.getBoundingClientRect();
    const cx = ev.clientX - r.left, cy = ev.clientY - r.top;
    const i = pick(cx, cy);
    if (i >= 0 && onToggle(i, cx, cy)) toggle(i);
    else select(i);
  });
  canvas.addEventListener('dblclick', (ev) => {
    const r = canvas.getBoundingClientRect();
    const i = pick(ev.clientX - r.left, ev.clientY - r.top);
    if (i >= 0 && bodies.has(i)) toggle(i);
  });
  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    const cx = ev.clientX - r.left, cy = ev.clientY - r.top;
    const before = toWorld(cx, cy);
    const f = Math.exp(-ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.0015));
    view.s = Math.min(4, Math.max(0.002, view.s * f));
    view.x = before.x - cx / view.s;
    view.y = before.y - cy / view.s;
    redraw();
  }, { passive: false });
  window.addEventListener('resize', resize);
  window.addEventListener('keydown', (ev) => {
    if (ev.target === search) {
      if (ev.key === 'Escape') { search.value = ''; results.hidden = true; search.blur(); }
      return;
    }
    if (ev.key === '/') { ev.preventDefault(); search.focus(); }
    else if (ev.key === 'f' || ev.key === 'F') fit();
    else if (ev.key === 'Escape') select(-1);
  });

  function toggle(i) {
    // Keep the op where it is on the screen.
    const sx = (X[i] - view.x) * view.s, sy = (Y[i] - view.y) * view.s;
    if (expanded.has(i)) expanded.delete(i); else expanded.add(i);
    relayout();
    view.x = X[i] - sx / view.s;
    view.y = Y[i] - sy / view.s;
    redraw();
    if (selected === i) showDetails(i);
  }

  function setAll(open) {
    expanded.clear();
    if (open) for (const i of bodies.keys()) expanded.add(i);
    relayout();
    fit();
  }

  // Opens the nested graphs that hold i, centres it and selects it.
  function reveal(i) {
    let k = scopeOf[i];
    while (scopes[k].owner >= 0) {
      expanded.add(scopes[k].owner);
      k = scopeOf[scopes[k].owner];
    }
    relayout();
    const c = cssSize();
    if (view.s < 0.6) view.s = 0.9;
    view.x = X[i] + W[i] / 2 - c.w / 2 / view.s;
    view.y = Y[i] + Math.min(H[i], 40) / 2 - c.h / 2 / view.s;
    select(i);
  }

  // ---- the details panel
  const details = document.getElementById('details');
  const status = document.getElementById('status');
  function esc(t) { return String(t).replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[ch])); }
  function tooltip(i) {
    return S.kind[i] === OP ? S.types[S.type[i]] + (S.label[i] ? ' ' + S.label[i] : '') : S.label[i];
  }
  function select(i) {
    selected = i;
    redraw();
    if (i < 0) return;
    showDetails(i);
  }
  function showDetails(i) {
    const [path, attrs, ins, outs] = S.details[i];
    const k = S.kind[i];
    let h = '<h2>' + esc(k === OP ? S.types[S.type[i]] : (k === INPUT ? 'input ' : 'output ') + S.label[i]) +
      (hasMarks && k === OP ? ' <span class="mark" style="background:' + MARK_FILL[S.mark[i]] + '">' + MARKS[S.mark[i]] + '</span>' : '') +
      '</h2><div class="path">' + esc(path) + '</div>';
    h += '<h3>Attributes (' + attrs.filter((a) => !a[0].startsWith('@')).length + ')</h3><table id="attributes">';
    for (const [key, v] of attrs)
      h += '<tr' + (key.startsWith('@') ? ' class="annotation"' : '') + '><td class="k">' + esc(key) + '</td><td>' + esc(v) + '</td></tr>';
    h += '</table>';
    if (k === OP) {
      h += '<h3>Inputs (' + ins.length + ')</h3><table id="inputs">';
      for (const [p, t, from] of ins) h += '<tr><td class="k">' + esc(p) + '</td><td>' + esc(t) + '<div class="note">from ' + esc(from) + '</div></td></tr>';
      h += '</table><h3>Outputs (' + outs.length + ')</h3><table id="outputs">';
      for (const [p, t, to] of outs) h += '<tr><td class="k">' + esc(p) + '</td><td>' + esc(t) + '<div class="note">to ' + esc(to) + '</div></td></tr>';
      h += '</table>';
      if (bodies.has(i)) {
        h += '<h3>Nested graphs</h3><p>' + bodies.get(i).map((b) => esc(scopes[b].title) + ' (' + countOps(b) + ' ops)').join(', ') +
          ' <button id="toggle-body">' + (expanded.has(i) ? 'Collapse' : 'Expand') + '</button></p>';
      }
    }
    details.innerHTML = h;
    const tb = document.getElementById('toggle-body');
    if (tb) tb.onclick = () => toggle(i);
  }
  function countOps(k) {
    let n = 0;
    const s = scopes[k];
    for (let i = s.n0; i < s.n0 + s.nc; i++) if (S.kind[i] === OP) n++;
    return n;
  }

  // ---- search
  const search = document.getElementById('search');
  const results = document.getElementById('results');
  let lastHits = [], timer = 0;
  const typeLower = S.types.map((t) => t.toLowerCase());
  const labelLower = S.label.map((t) => t.toLowerCase());
  function find(q) {
    q = q.trim().toLowerCase();
    const hits = [];
    if (!q) return hits;
    for (let i = 0; i < N; i++) {
      if (S.kind[i] !== OP) { if (labelLower[i].includes(q)) hits.push(i); continue; }
      if (labelLower[i].includes(q) || typeLower[S.type[i]].includes(q)) hits.push(i);
    }
    // Exact names and types first.
    const exact = (i) => labelLower[i] === q || (S.kind[i] === OP && typeLower[S.type[i]] === q);
    hits.sort((a, b) => (exact(b) ? 1 : 0) - (exact(a) ? 1 : 0) || a - b);
    return hits;
  }
  function showResults() {
    lastHits = find(search.value);
    if (!search.value.trim()) { results.hidden = true; return; }
    let h = '<div class="count">' + lastHits.length + ' match' + (lastHits.length === 1 ? '' : 'es') +
      (lastHits.length > 200 ? ' (first 200)' : '') + '</div>';
    for (const i of lastHits.slice(0, 200))
      h += '<div data-i="' + i + '">' + esc(S.label[i] || '(unnamed)') + '<span class="type">' +
        esc(S.kind[i] === OP ? S.types[S.type[i]] : S.kind[i] === INPUT ? 'input' : 'output') + '</span></div>';
    results.innerHTML = h;
    results.hidden = false;
  }
  search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(showResults, N > 20000 ? 200 : 60); });
  search.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      showResults();
      if (lastHits.length) reveal(lastHits[0]);
    }
  });
  results.addEventListener('click', (ev) => {
    const d = ev.target.closest('[data-i]');
    if (d) reveal(Number(d.dataset.i));
  });
  document.getElementById('fit').onclick = fit;
  document.getElementById('expand-all').onclick = () => setAll(true);
  document.getElementById('collapse-all').onclick = () => setAll(false);

  // ---- a conversion's changes
  if (S.diff) {
    const d = S.diff, box = document.getElementById('changes');
    let h = '<h3>Conversion</h3><div class="legend">' +
      MARKS.map((m, k) => '<span style="background:' + MARK_FILL[k] + '">' + m + ' ' + d[m] + '</span>').join('') +
      '<span style="background:#f6d6d6">removed ' + d.removed + '</span></div><h3>Changes (' + d.changes.length + ')</h3><ol>';
    d.changes.forEach(([before, after], k) => {
      if (k >= 500) return;
      const old = before.map(([p, t]) => t + ' ' + p).join(', ') || '(nothing)';
      const made = after.filter((i) => i >= 0).map((i) => S.types[S.type[i]] + ' ' + S.label[i]).join(', ') || '(removed)';
      h += '<li data-c="' + k + '"><span class="old">' + esc(old) + '</span> → <span class="new">' + esc(made) + '</span></li>';
    });
    if (d.changes.length > 500) h += '<li>… ' + (d.changes.length - 500) + ' more</li>';
    box.innerHTML = h + '</ol>';
    box.hidden = false;
    box.addEventListener('click', (ev) => {
      const li = ev.target.closest('[data-c]');
      if (!li) return;
      const after = d.changes[Number(li.dataset.c)][1].filter((i) => i >= 0);
      if (after.length) reveal(after[0]);
    });
  }

  // ---- start
  document.getElementById('op-count').textContent = String(opCount);
  document.getElementById('edge-count').textContent = String(E);
  document.getElementById('scope-count').textContent = String(scopes.length);
  relayout();
  resize();
  fit();
  draw();
  const ready = performance.now();
  window.amandaView = {
    ops: opCount, nodes: N, edges: E, scopes: scopes.length,
    parseMs: ready - started, readyMs: ready, layoutMs: S.layout_ms,
    find: (q) => find(q),
    reveal, toggle, select, fit,
    // Zoom z with the top of the graph in view (for pictures of deep graphs).
    zoomTop: (z) => { const c = cssSize(); view.s = z; view.x = world.w / 2 - c.w / 2 / z; view.y = -20 / z; redraw(); },
    // Draws now and returns how long a frame took (ms), at the fitted view and at 100 %.
    frameMs: () => {
      const t = [];
      for (const z of [0, 1]) {
        if (z) { view.s = 1; } else fit();
        const a = performance.now();
        draw();
        t.push(performance.now() - a);
      }
      return { fitted: t[0], actual: t[1] };
    },
    center: (i) => { reveal(i); select(-1); details.innerHTML = ''; },
    shownCount: () => { let n = 0; for (let i = 0; i < N; i++) n += shown[i]; return n; },
    // CSS pixel position of a node's centre (of its header when expanded), relative to the page.
    screenOf: (i) => {
      const r = canvas.getBoundingClientRect();
      return { x: r.left + (X[i] + W[i] / 2 - view.x) * view.s, y: r.top + (Y[i] + Math.min(H[i], S.h[i]) / 2 - view.y) * view.s };
    },
    label: (i) => S.label[i], type: (i) => (S.kind[i] === OP ? S.types[S.type[i]] : ''),
    hasBodies: (i) => bodies.has(i), isExpanded: (i) => expanded.has(i), selected: () => selected,
  };
  document.body.dataset.ready = '1';
})();
