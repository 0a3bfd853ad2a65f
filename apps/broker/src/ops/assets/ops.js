/**
 * The ops page's script, run by the browser as it is (no build step, no modules). It opens an
 * EventSource on /v1/health/cpaas/stream, loads the last hour of transitions from
 * /v1/health/cpaas/history, and redraws the provider cards, the state timeline, the error-rate chart
 * and the transition table.
 */
(function () {
  'use strict';

  var HOUR_MS = 3600000;
  var SVG_NS = 'http://www.w3.org/2000/svg';
  var STATE_COLOURS = { CLOSED: '#1a7f37', HALF_OPEN: '#b7791f', OPEN: '#c62828' };
  var LINE_COLOURS = ['#1f6feb', '#8250df', '#0a7ea4', '#bf3989', '#953800', '#6e7781'];
  var SHOWN = [
    'name',
    'state',
    'openedAt',
    'lastError',
    'disabled',
    'disabledReason',
    'since',
    'reason',
    'consecutiveFailures',
    'windowCalls',
    'windowErrorRate',
    'healthPasses',
    'probes',
    'probeSuccesses',
    'activeSessions',
    'activeSessionsByChannels',
    'pool',
  ];

  var providers = {};
  var order = [];
  var transitions = [];
  var transitionKeys = {};
  var rates = {};
  var clockOffsetMs = 0;
  /** The earliest start of a replica this page heard from: nothing is known of a provider before it but what the history says. */
  var startedAt = NaN;
  var everOpened = false;

  function now() {
    return Date.now() + clockOffsetMs;
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (name) {
      node.setAttribute(name, String(attrs[name]));
    });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function pad(n) {
    return n < 10 ? '0' + n : String(n);
  }

  function clock(ms) {
    var d = new Date(ms);
    return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
  }

  function ago(ms) {
    var s = Math.max(0, Math.round((now() - ms) / 1000));
    if (s < 60) return s + ' s ago';
    if (s < 3600) return Math.floor(s / 60) + ' min ago';
    if (s < 86400) return Math.floor(s / 3600) + ' h ago';
    return Math.floor(s / 86400) + ' d ago';
  }

  function when(iso) {
    if (!iso) return '—';
    var ms = Date.parse(iso);
    if (isNaN(ms)) return String(iso);
    var day = new Date(ms).toISOString().slice(0, 10);
    var prefix = now() - ms > 86400000 ? day + ' ' : '';
    return prefix + clock(ms) + ' (' + ago(ms) + ')';
  }

  function percent(rate) {
    return typeof rate === 'number' ? (rate * 100).toFixed(1) + ' %' : '—';
  }

  function describe(value) {
    if (value === null || value === undefined) return '—';
    if (typeof value !== 'object') return String(value);
    if (typeof value.inUse === 'number' && typeof value.total === 'number') {
      // A number carrying sessions still takes more (one session per participant per number): not "in use" up.
      var enabled = typeof value.enabled === 'number' ? value.enabled : value.total;
      var carrying = typeof value.voice === 'number' ? '; ' + value.voice + ' carry voice, ' + value.sms + ' sms' : '';
      return (
        value.total +
        ' numbers (' +
        enabled +
        ' enabled), ' +
        value.inUse +
        ' carrying sessions; each takes more for other participants' +
        carrying
      );
    }
    return Object.keys(value)
      .map(function (key) {
        return key + ': ' + describe(value[key]);
      })
      .join(', ');
  }

  function colourOf(name) {
    var index = order.indexOf(name);
    return LINE_COLOURS[(index < 0 ? order.length : index) % LINE_COLOURS.length];
  }

  // ---- state ----

  function applySnapshot(body) {
    var at = Date.parse(body.timestamp);
    if (!isNaN(at)) clockOffsetMs = at - Date.now();
    var started = Date.parse(body.startedAt);
    if (!isNaN(started) && !(started >= startedAt)) startedAt = started;
    order = body.providers.map(function (p) {
      return p.name;
    });
    body.providers.forEach(function (p) {
      providers[p.name] = p;
      var series = rates[p.name] || (rates[p.name] = []);
      series.push({ at: isNaN(at) ? now() : at, rate: typeof p.windowErrorRate === 'number' ? p.windowErrorRate : 0 });
      while (series.length && series[0].at < now() - HOUR_MS) series.shift();
    });
    document.getElementById('updated').textContent = 'updated ' + clock(now());
    render();
  }

  function applyProvider(entry) {
    providers[entry.name] = Object.assign({}, providers[entry.name], entry);
    if (order.indexOf(entry.name) < 0) order.push(entry.name);
    renderProviders();
    renderTimeline();
  }

  function addTransition(t) {
    var at = Date.parse(t.at);
    var key = t.provider + '|' + t.from + '|' + t.to + '|' + at;
    if (transitionKeys[key]) return false;
    transitionKeys[key] = true;
    transitions.push({ provider: t.provider, from: t.from, to: t.to, reason: t.reason, lastError: t.lastError, at: at });
    transitions.sort(function (a, b) {
      return b.at - a.at;
    });
    return true;
  }

  function loadHistory() {
    var since = now() - HOUR_MS;
    function page(cursor, left) {
      var url = '/v1/health/cpaas/history?limit=200' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '');
      return fetch(url, { headers: { accept: 'application/json' } })
        .then(function (res) {
          if (!res.ok) throw new Error('history: HTTP ' + res.status);
          return res.json();
        })
        .then(function (body) {
          body.transitions.forEach(addTransition);
          var last = body.transitions[body.transitions.length - 1];
          if (body.nextCursor && left > 1 && last && Date.parse(last.at) >= since) return page(body.nextCursor, left - 1);
          return undefined;
        });
    }
    return page(null, 10)
      .then(function () {
        renderTimeline();
        renderTransitions();
      })
      .catch(function (error) {
        console.warn('could not load the transition history', error);
      });
  }

  function connect() {
    var connection = document.getElementById('connection');
    var source = new EventSource('/v1/health/cpaas/stream');
    source.addEventListener('open', function () {
      connection.dataset.state = 'live';
      connection.textContent = 'live';
      // After a reconnect, pick up what happened while the stream was down.
      if (everOpened) loadHistory();
      everOpened = true;
    });
    source.addEventListener('error', function () {
      connection.dataset.state = 'reconnecting';
      connection.textContent = 'reconnecting…';
    });
    source.addEventListener('snapshot', function (event) {
      applySnapshot(JSON.parse(event.data));
    });
    source.addEventListener('provider', function (event) {
      applyProvider(JSON.parse(event.data));
    });
    source.addEventListener('transition', function (event) {
      if (addTransition(JSON.parse(event.data))) {
        renderTimeline();
        renderTransitions();
      }
    });
  }

  // ---- rendering ----

  function render() {
    renderProviders();
    renderTimeline();
    renderErrorRate();
    renderTransitions();
  }

  /** A field a newer broker adds, as a label: lastProbeAt becomes "Last probe at". */
  /** " (voice 1, sms 4, voice+sms 7)": the active sessions by the channels they carry. */
  function byChannels(counts) {
    var keys = counts ? Object.keys(counts) : [];
    if (!keys.length) return '';
    return (
      ' (' +
      keys
        .map(function (key) {
          return key + ' ' + counts[key];
        })
        .join(', ') +
      ')'
    );
  }

  function words(key) {
    var text = key
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/_/g, ' ')
      .toLowerCase();
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  function row(list, label, value, className) {
    list.appendChild(el('dt', null, label));
    var dd = el('dd', className || null, value);
    dd.dataset.field = label;
    list.appendChild(dd);
  }

  function renderProviders() {
    var container = document.getElementById('providers');
    container.textContent = '';
    order.forEach(function (name) {
      var p = providers[name];
      if (!p) return;
      var card = el('article', 'provider state-' + p.state + (p.disabled ? ' disabled' : ''));
      card.dataset.provider = name;
      card.dataset.state = p.state;
      var header = el('header');
      header.appendChild(el('h3', null, name));
      var badge = el('span', 'badge state-' + p.state, p.state);
      badge.dataset.field = 'state';
      header.appendChild(badge);
      if (p.disabled) {
        var flag = el('span', 'badge disabled-flag', 'DISABLED');
        flag.dataset.field = 'disabled';
        header.appendChild(flag);
      }
      card.appendChild(header);

      var list = el('dl');
      row(list, 'Since', when(p.since));
      row(list, 'Reason', p.reason || '—');
      row(list, 'Opened at', p.openedAt ? when(p.openedAt) : '—');
      row(list, 'Last error', p.lastError || '—', p.lastError ? 'error' : null);
      // The counters of the opening rules mean something only while CLOSED; an OPEN card says why it opened above.
      if (p.state === 'CLOSED') {
        row(list, 'Failures in a row', p.consecutiveFailures === undefined ? '—' : p.consecutiveFailures);
        row(
          list,
          'Error rate, last 2 min',
          typeof p.windowCalls === 'number' && p.windowCalls > 0
            ? percent(p.windowErrorRate) + ' of ' + p.windowCalls + ' calls'
            : 'no calls',
        );
      }
      if (p.state === 'OPEN' && typeof p.healthPasses === 'number') row(list, 'Health checks passed in a row', p.healthPasses);
      if (p.state === 'HALF_OPEN' && typeof p.probes === 'number')
        row(list, 'Probes', (p.probeSuccesses || 0) + ' of ' + p.probes + ' succeeded');
      row(list, 'Disabled', p.disabled ? 'yes, by an operator' + (p.disabledReason ? ': ' + p.disabledReason : '') : 'no');
      if (p.activeSessions !== undefined) row(list, 'Active sessions', describe(p.activeSessions) + byChannels(p.activeSessionsByChannels));
      if (p.pool !== undefined) row(list, 'Pool', describe(p.pool));
      Object.keys(p).forEach(function (key) {
        if (SHOWN.indexOf(key) < 0) row(list, words(key), describe(p[key]));
      });
      card.appendChild(list);
      container.appendChild(card);
    });
    if (!order.length) container.appendChild(el('p', 'empty', 'No providers reported.'));
  }

  var WIDTH = 1000;
  var LABEL_W = 110;
  var LANE_H = 26;

  function xOf(at, start) {
    return LABEL_W + ((at - start) / HOUR_MS) * (WIDTH - LABEL_W - 10);
  }

  function axis(chart, top, start) {
    for (var i = 0; i <= 4; i++) {
      var at = start + (i * HOUR_MS) / 4;
      var x = xOf(at, start);
      chart.appendChild(svg('line', { x1: x, x2: x, y1: 0, y2: top, stroke: '#d0d7de', 'stroke-dasharray': '3 3' }));
      var label = i === 4 ? 'now' : '-' + (60 - i * 15) + ' min';
      chart.appendChild(svg('text', { x: x, y: top + 14, 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle' }, label));
    }
  }

  function renderTimeline() {
    var container = document.getElementById('timeline');
    var end = now();
    var start = end - HOUR_MS;
    var height = Math.max(1, order.length) * (LANE_H + 8) + 22;
    var chart = svg('svg', { viewBox: '0 0 ' + WIDTH + ' ' + height, preserveAspectRatio: 'xMidYMid meet' });
    order.forEach(function (name, lane) {
      var y = lane * (LANE_H + 8) + 4;
      chart.appendChild(svg('text', { x: 0, y: y + LANE_H / 2 + 4, class: 'lane-label' }, name));
      var own = transitions
        .filter(function (t) {
          return t.provider === name;
        })
        .slice()
        .reverse();
      var before = own.filter(function (t) {
        return t.at < start;
      });
      var inside = own.filter(function (t) {
        return t.at >= start;
      });
      var current = providers[name] ? providers[name].state : undefined;
      var state = before.length ? before[before.length - 1].to : inside.length ? inside[0].from : current || 'CLOSED';
      // The lane starts where the state is known, not an hour back for a broker younger than that: at the hour's
      // start if a transition before it says so; else when the broker started (or at the first transition,
      // if the history is older than this replica); else when the current state began.
      var since = providers[name] && providers[name].since ? Date.parse(providers[name].since) : NaN;
      var known = before.length ? start : inside.length ? Math.min(isNaN(startedAt) ? inside[0].at : startedAt, inside[0].at) : since;
      var from = isNaN(known) ? start : Math.max(start, known);
      inside.forEach(function (t) {
        segment(chart, from, t.at, state, y, start);
        state = t.to;
        from = t.at;
      });
      segment(chart, from, end, current === undefined ? state : current, y, start);
      inside.forEach(function (t) {
        var marker = svg('circle', {
          cx: xOf(t.at, start),
          cy: y + LANE_H / 2,
          r: 4,
          fill: '#ffffff',
          stroke: STATE_COLOURS[t.to] || '#000000',
          'stroke-width': 2,
        });
        marker.appendChild(svg('title', {}, clock(t.at) + '  ' + t.from + ' → ' + t.to + (t.reason ? ': ' + t.reason : '')));
        chart.appendChild(marker);
      });
    });
    axis(chart, height - 22, start);
    container.textContent = '';
    container.appendChild(chart);
  }

  function segment(chart, from, to, state, y, start) {
    if (to <= from) return;
    var rect = svg('rect', {
      x: xOf(from, start),
      y: y,
      width: Math.max(1, xOf(to, start) - xOf(from, start)),
      height: LANE_H,
      fill: STATE_COLOURS[state] || '#6e7781',
      rx: 2,
    });
    rect.appendChild(svg('title', {}, state + ' from ' + clock(from) + ' to ' + clock(to)));
    chart.appendChild(rect);
  }

  function renderErrorRate() {
    var container = document.getElementById('error-rate');
    var end = now();
    var start = end - HOUR_MS;
    var top = 150;
    var peak = 0;
    order.forEach(function (name) {
      (rates[name] || []).forEach(function (point) {
        peak = Math.max(peak, point.rate);
      });
    });
    var scale = peak <= 0.1 ? 0.1 : peak <= 0.25 ? 0.25 : peak <= 0.5 ? 0.5 : 1;
    var chart = svg('svg', { viewBox: '0 0 ' + WIDTH + ' ' + (top + 22), preserveAspectRatio: 'xMidYMid meet' });
    [0, 0.5, 1].forEach(function (f) {
      var y = top - f * (top - 10);
      chart.appendChild(svg('line', { x1: LABEL_W, x2: WIDTH - 10, y1: y, y2: y, stroke: '#eaeef2' }));
      chart.appendChild(svg('text', { x: LABEL_W - 8, y: y + 4, 'text-anchor': 'end' }, (f * scale * 100).toFixed(0) + ' %'));
    });
    order.forEach(function (name) {
      var series = (rates[name] || []).filter(function (point) {
        return point.at >= start;
      });
      if (!series.length) return;
      var points = series.map(function (point) {
        return xOf(point.at, start).toFixed(1) + ',' + (top - (Math.min(point.rate, scale) / scale) * (top - 10)).toFixed(1);
      });
      if (points.length === 1) points.push(xOf(end, start).toFixed(1) + ',' + points[0].split(',')[1]);
      chart.appendChild(svg('polyline', { points: points.join(' '), fill: 'none', stroke: colourOf(name), 'stroke-width': 2 }));
    });
    axis(chart, top, start);
    container.textContent = '';
    container.appendChild(chart);

    var legend = document.getElementById('rate-legend');
    legend.textContent = '';
    order.forEach(function (name) {
      var item = el('li');
      var swatch = el('span', 'swatch');
      swatch.style.background = colourOf(name);
      item.appendChild(swatch);
      var latest = (rates[name] || [])[(rates[name] || []).length - 1];
      item.appendChild(document.createTextNode(name + ' (' + percent(latest ? latest.rate : undefined) + ')'));
      legend.appendChild(item);
    });
  }

  function renderTransitions() {
    var body = document.querySelector('#transitions tbody');
    body.textContent = '';
    var recent = transitions
      .filter(function (t) {
        return t.at >= now() - HOUR_MS;
      })
      .slice(0, 100);
    recent.forEach(function (t) {
      var tr = el('tr');
      tr.dataset.provider = t.provider;
      tr.appendChild(el('td', null, clock(t.at)));
      tr.appendChild(el('td', null, t.provider));
      var change = el('td');
      change.appendChild(document.createTextNode(t.from + ' → '));
      change.appendChild(el('span', 'to-' + t.to, t.to));
      tr.appendChild(change);
      tr.appendChild(el('td', null, t.reason || ''));
      tr.appendChild(el('td', null, t.lastError || ''));
      body.appendChild(tr);
    });
    if (!recent.length) {
      var empty = el('tr', 'empty');
      var cell = el('td', null, 'None in the last hour.');
      cell.colSpan = 5;
      empty.appendChild(cell);
      body.appendChild(empty);
    }
  }

  connect();
  loadHistory();
})();
