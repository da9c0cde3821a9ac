// Time-series line charts on a <canvas>: a few hundred lines instead of a chart library
// (which would need a bundler or a CDN; the page must work offline with no build step).
//
//   const c = new LineChart(figureElement, {series: [{key, label, color: '--c1'}], format: fn});
//   c.setData(samples, nowMs);   // samples: the history endpoint's objects, oldest first
//
// The figure holds a <canvas> and a .legend element; colours come from CSS custom properties
// so the charts follow the light/dark theme (call redrawAll() after a theme change).

const charts = new Set();

export function redrawAll() {
  for (const c of charts) c.draw();
}

// The smallest "round" step (m x 10^k) at or above v: axis gridlines at 0, step, .. 4 step.
function niceStep(v, mantissas) {
  if (!(v > 0)) return mantissas === INT_STEPS ? 1 : 0.25;
  let p = 10 ** Math.floor(Math.log10(v));
  if (mantissas === INT_STEPS && p < 1) p = 1; // counts: whole-number gridlines
  for (const m of mantissas) if (m * p >= v - 1e-12) return m * p;
  return 10 * p;
}
const INT_STEPS = [1, 2, 5];
const REAL_STEPS = [1, 2, 2.5, 5];

function cssVar(elem, name, fallback) {
  const v = getComputedStyle(elem).getPropertyValue(name).trim();
  return v || fallback;
}

export class LineChart {
  constructor(figure, opts) {
    this.figure = figure;
    this.canvas = figure.querySelector('canvas');
    this.legendEl = figure.querySelector('.legend');
    this.series = opts.series;
    this.format = opts.format || ((v) => String(v));
    this.axisFormat = opts.axisFormat || this.format; // gridline labels: shorter than the legend's
    this.integer = Boolean(opts.integer); // counts: whole-number gridlines
    this.yMax = opts.yMax ?? null; // fixed maximum (e.g. 1 for a rate), else from the data
    this.minMax = opts.minMax ?? 1; // smallest automatic maximum: an idle chart stays flat, not noisy
    this.windowMs = opts.windowMs || 900_000;
    this.gapMs = opts.gapMs || 2500; // a longer gap between samples breaks the line
    this.samples = [];
    this.nowMs = Date.now();
    this.hoverX = null;
    this.buildLegend();
    this.canvas.addEventListener('mousemove', (e) => {
      const r = this.canvas.getBoundingClientRect();
      this.hoverX = e.clientX - r.left;
      this.draw();
    });
    this.canvas.addEventListener('mouseleave', () => {
      this.hoverX = null;
      this.draw();
    });
    // Redraws at the new size, including when a hidden tab becomes visible.
    if (typeof ResizeObserver === 'function') new ResizeObserver(() => this.draw()).observe(this.canvas);
    charts.add(this);
  }

  buildLegend() {
    if (!this.legendEl) return;
    this.legendEl.textContent = '';
    this.valueEls = this.series.map((s) => {
      const value = document.createElement('span');
      value.className = 'legend-value num';
      value.textContent = '—';
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.setProperty('--swatch', `var(${s.color})`);
      const item = document.createElement('span');
      item.className = 'legend-item';
      item.append(sw, document.createTextNode(s.label + ' '), value);
      this.legendEl.append(item);
      return value;
    });
  }

  value(sample, s) {
    const v = typeof s.key === 'function' ? s.key(sample) : sample[s.key];
    return v == null || !Number.isFinite(v) ? null : v;
  }

  setData(samples, nowMs) {
    this.samples = samples;
    if (nowMs) this.nowMs = nowMs;
    const last = samples.length ? samples[samples.length - 1] : null;
    const lastValues = {};
    this.series.forEach((s, i) => {
      const v = last ? this.value(last, s) : null;
      lastValues[s.label] = v;
      if (this.valueEls && this.hoverX == null) this.valueEls[i].textContent = this.format(v);
    });
    // For tests and for anyone inspecting the page: the values the chart shows now.
    this.canvas.dataset.points = String(samples.length);
    this.canvas.dataset.last = JSON.stringify(lastValues);
    this.draw();
  }

  draw() {
    const c = this.canvas;
    const w = c.clientWidth;
    const h = c.clientHeight;
    if (!w || !h) return; // hidden tab: drawn when it shows
    const dpr = window.devicePixelRatio || 1;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
    }
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);

    const muted = cssVar(c, '--muted', '#666');
    const grid = cssVar(c, '--grid', '#ddd');
    const font = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
    g.font = font;

    const t1 = this.nowMs;
    const t0 = t1 - this.windowMs;
    let dataMax = 0;
    for (const smp of this.samples) {
      if (smp.t_ms < t0) continue;
      for (const s of this.series) {
        const v = this.value(smp, s);
        if (v != null && v > dataMax) dataMax = v;
      }
    }
    const yMax = this.yMax ?? 4 * niceStep(Math.max(dataMax, this.minMax) / 4, this.integer ? INT_STEPS : REAL_STEPS);

    // Left margin fits the widest y label.
    const labels = [0, 0.25, 0.5, 0.75, 1].map((f) => this.axisFormat(yMax * f));
    const padL = Math.ceil(Math.max(...labels.map((l) => g.measureText(l).width))) + 8;
    const padR = 8;
    const padT = 8;
    const padB = 18;
    const pw = Math.max(10, w - padL - padR);
    const ph = Math.max(10, h - padT - padB);
    const x = (t) => padL + ((t - t0) / (t1 - t0)) * pw;
    const y = (v) => padT + ph - (Math.min(v, yMax) / yMax) * ph;

    // Grid and labels.
    g.strokeStyle = grid;
    g.lineWidth = 1;
    g.fillStyle = muted;
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    labels.forEach((label, i) => {
      const yy = Math.round(y((yMax * i) / 4)) + 0.5;
      g.beginPath();
      g.moveTo(padL, yy);
      g.lineTo(padL + pw, yy);
      g.stroke();
      g.fillText(label, padL - 4, yy);
    });
    g.textBaseline = 'top';
    const minutes = this.windowMs / 60000;
    const ticks = minutes >= 10 ? 5 : 1;
    for (let m = 0; m <= minutes; m += ticks) {
      const xx = x(t1 - m * 60000);
      g.textAlign = m === 0 ? 'right' : m >= minutes ? 'left' : 'center';
      g.fillText(m === 0 ? 'now' : `−${m} min`, xx, padT + ph + 4);
    }

    const visible = this.samples.filter((s) => s.t_ms >= t0 - this.gapMs);
    if (!visible.length) {
      g.textAlign = 'center';
      g.textBaseline = 'middle';
      g.fillText('no data yet', padL + pw / 2, padT + ph / 2);
      return;
    }

    // One path per series; a missing value or a gap in the samples lifts the pen.
    g.save();
    g.beginPath();
    g.rect(padL, padT - 1, pw, ph + 2);
    g.clip();
    g.lineWidth = 1.5;
    g.lineJoin = 'round';
    for (const s of this.series) {
      const color = cssVar(c, s.color, '#36c');
      // Runs of consecutive samples; a lone sample (say one second with a cache hit rate)
      // has no neighbour to join, so it is drawn as a dot.
      const runs = [];
      let run = null;
      let prevT = null;
      for (const smp of visible) {
        const v = this.value(smp, s);
        if (v == null || (prevT != null && smp.t_ms - prevT > this.gapMs)) run = null;
        prevT = smp.t_ms;
        if (v == null) continue;
        if (!run) runs.push((run = []));
        run.push([x(smp.t_ms), y(v)]);
      }
      g.strokeStyle = color;
      g.fillStyle = color;
      g.beginPath();
      for (const r of runs) {
        if (r.length < 2) continue;
        g.moveTo(r[0][0], r[0][1]);
        for (let i = 1; i < r.length; i++) g.lineTo(r[i][0], r[i][1]);
      }
      g.stroke();
      for (const r of runs) {
        if (r.length !== 1) continue;
        g.beginPath();
        g.arc(r[0][0], r[0][1], 2, 0, Math.PI * 2);
        g.fill();
      }
    }
    g.restore();

    this.drawHover(g, visible, x, y, padT, ph, padL, pw);
  }

  // A vertical cursor; the legend shows the values at the nearest sample while hovering.
  drawHover(g, visible, x, y, padT, ph, padL, pw) {
    if (this.hoverX == null || this.hoverX < padL || this.hoverX > padL + pw) {
      if (this.hoverX != null) this.hoverX = null;
      this.restoreLegend();
      return;
    }
    let best = null;
    let bestD = Infinity;
    for (const smp of visible) {
      const d = Math.abs(x(smp.t_ms) - this.hoverX);
      if (d < bestD) {
        bestD = d;
        best = smp;
      }
    }
    if (!best || bestD > 20) {
      this.restoreLegend();
      return;
    }
    const xx = Math.round(x(best.t_ms)) + 0.5;
    g.strokeStyle = cssVar(this.canvas, '--muted', '#666');
    g.setLineDash([3, 3]);
    g.beginPath();
    g.moveTo(xx, padT);
    g.lineTo(xx, padT + ph);
    g.stroke();
    g.setLineDash([]);
    this.series.forEach((s, i) => {
      const v = this.value(best, s);
      if (this.valueEls) this.valueEls[i].textContent = this.format(v);
      if (v == null) return;
      g.fillStyle = cssVar(this.canvas, s.color, '#36c');
      g.beginPath();
      g.arc(xx, y(v), 3, 0, Math.PI * 2);
      g.fill();
    });
  }

  restoreLegend() {
    if (!this.valueEls) return;
    const last = this.samples.length ? this.samples[this.samples.length - 1] : null;
    this.series.forEach((s, i) => {
      this.valueEls[i].textContent = this.format(last ? this.value(last, s) : null);
    });
  }
}
