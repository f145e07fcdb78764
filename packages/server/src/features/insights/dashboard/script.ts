/**
 * The dashboard's browser code, inlined into the page: reads `/api/admin/insights` with the admin
 * token (from the form or a `#token=` link, kept in sessionStorage, sent in the `Authorization`
 * header only), or without one with the browser's login session, and draws each series as a
 * hand-made SVG chart. Plain ES2020, no dependencies; written without backticks so it can live in
 * this template string.
 */
export const dashboardScript = `
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var TOKEN_KEY = 'flags.insights.token';
  var PALETTE = ['#2563eb', '#16a34a', '#dc2626', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];
  var W = 560, H = 240, M = { top: 14, right: 12, bottom: 34, left: 48 };
  var numberFormat = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

  function byId(id) { return document.getElementById(id); }
  function day(date) { return date.toISOString().slice(0, 10); }
  function status(text, isError) {
    var node = byId('status');
    node.textContent = text;
    node.className = isError ? 'status error' : 'status';
  }

  // A link may carry the token as #token=: the fragment never leaves the browser (no request
  // line, no server or proxy log, no Referer). It moves to sessionStorage and out of the address
  // bar and history. Parsed by hand: URLSearchParams would turn a '+' of the token into a space.
  var fragment = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (fragment) {
    var linked = fragment[1];
    try { linked = decodeURIComponent(linked); } catch (error) { /* kept as written */ }
    if (linked) sessionStorage.setItem(TOKEN_KEY, linked);
    history.replaceState(null, '', location.pathname + location.search);
  }
  var params = new URLSearchParams(location.search);
  var now = new Date();
  byId('from').value = params.get('from') || day(new Date(now.getTime() - 84 * 86400000));
  byId('to').value = params.get('to') || day(now);
  byId('token').value = sessionStorage.getItem(TOKEN_KEY) || '';

  function node(name, attrs, parent, text) {
    var el = document.createElementNS(SVG, name);
    for (var key in attrs) el.setAttribute(key, String(attrs[key]));
    if (text !== undefined) el.textContent = text;
    if (parent) parent.appendChild(el);
    return el;
  }

  // Four grid steps of 1, 2 or 5 × 10^n (at least 1: the series are counts).
  function niceMax(value) {
    var raw = Math.max(value / 4, 1);
    var pow = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * pow >= raw) return 4 * steps[i] * pow;
    return 40 * pow;
  }

  function uniqueSorted(values) {
    return Array.from(new Set(values)).sort();
  }

  /** series: [{ name, values: (number|null)[] }] aligned with labels. */
  function draw(section, kind, labels, series, options) {
    var svg = section.querySelector('svg');
    var legend = section.querySelector('.legend');
    svg.textContent = '';
    legend.textContent = '';
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    if (labels.length === 0 || series.length === 0) {
      node('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, svg, 'No data in this range');
      section.dataset.points = '0';
      return;
    }
    var stacked = kind === 'stacked';
    var top = 0;
    for (var i = 0; i < labels.length; i++) {
      var sum = 0;
      for (var s = 0; s < series.length; s++) {
        var v = series[s].values[i] || 0;
        if (stacked) sum += v; else top = Math.max(top, v);
      }
      if (stacked) top = Math.max(top, sum);
    }
    var max = options.max || niceMax(top);
    var pw = W - M.left - M.right, ph = H - M.top - M.bottom;
    var y = function (v) { return M.top + ph - (v / max) * ph; };
    var band = pw / labels.length;
    var cx = function (i) { return M.left + band * (i + 0.5); };

    var grid = node('g', { class: 'grid' }, svg);
    for (var t = 0; t <= 4; t++) {
      var value = (max * t) / 4;
      node('line', { x1: M.left, x2: W - M.right, y1: y(value), y2: y(value) }, grid);
      node('text', { x: M.left - 6, y: y(value) + 4, 'text-anchor': 'end' }, grid, numberFormat.format(value));
    }
    var every = Math.ceil(labels.length / 8);
    var axis = node('g', { class: 'axis' }, svg);
    for (var l = 0; l < labels.length; l += every) {
      node('text', { x: cx(l), y: H - M.bottom + 16, 'text-anchor': 'middle' }, axis, options.short(labels[l]));
    }

    var points = 0;
    series.forEach(function (line, index) {
      var color = (options.colors && options.colors[index]) || PALETTE[index % PALETTE.length];
      var item = document.createElement('span');
      item.innerHTML = '<i></i>';
      item.firstChild.style.background = color;
      item.appendChild(document.createTextNode(line.name));
      legend.appendChild(item);
      var group = node('g', { 'data-name': line.name, fill: color, stroke: color }, svg);
      if (kind === 'line') {
        var d = '';
        line.values.forEach(function (v, i) {
          if (v === null || v === undefined) { d += ' '; return; }
          d += (d === '' || d.charAt(d.length - 1) === ' ' ? 'M' : 'L') + cx(i).toFixed(1) + ',' + y(v).toFixed(1);
        });
        node('path', { d: d.trim().replace(/ +/g, ' '), fill: 'none', 'stroke-width': 2 }, group);
        line.values.forEach(function (v, i) {
          if (v === null || v === undefined) return;
          var c = node('circle', { class: 'point', cx: cx(i).toFixed(1), cy: y(v).toFixed(1), r: 3.5 }, group);
          node('title', {}, c, labels[i] + ' · ' + line.name + ': ' + v + options.unit);
          points++;
        });
      }
    });
    if (kind !== 'line') {
      var width = band * 0.72;
      for (var j = 0; j < labels.length; j++) {
        var base = 0;
        for (var k = 0; k < series.length; k++) {
          var v2 = series[k].values[j];
          if (v2 === null || v2 === undefined) continue;
          var x, yTop, height;
          if (stacked) {
            x = cx(j) - width / 2;
            yTop = y(base + v2);
            height = y(base) - yTop;
            base += v2;
          } else {
            var w = width / series.length;
            x = cx(j) - width / 2 + k * w;
            yTop = y(v2);
            height = y(0) - yTop;
          }
          var group2 = svg.querySelector('g[data-name="' + CSS.escape(series[k].name) + '"]');
          var bar = node('rect', {
            class: 'bar', x: x.toFixed(1), y: yTop.toFixed(1),
            width: Math.max(1, (stacked ? width : width / series.length) - 1).toFixed(1),
            height: Math.max(0, height).toFixed(1),
          }, group2);
          node('title', {}, bar, labels[j] + ' · ' + series[k].name + ': ' + v2 + options.unit);
          points++;
        }
      }
    }
    section.dataset.points = String(points);
  }

  function latest(list, field) {
    return list.length ? list[list.length - 1][field] : 0;
  }

  function pivot(rows, keyField, valueField, weeks) {
    var keys = uniqueSorted(rows.map(function (r) { return r[keyField]; }));
    return keys.map(function (key) {
      var values = weeks.map(function (week) {
        var row = rows.find(function (r) { return r.week === week && r[keyField] === key; });
        return row ? row[valueField] : null;
      });
      return { name: key, values: values };
    });
  }

  function render(data) {
    var dayLabel = function (date) { return date.slice(0, 10); };
    var shortDay = function (label) { return label.slice(5); };
    var shortWeek = function (label) { return 'W' + label.slice(5); };

    var userDays = data.userTrends.map(function (r) { return dayLabel(r.date); });
    draw(byId('users'), 'line', userDays, ['total', 'active', 'inactive'].map(function (f) {
      return { name: f, values: data.userTrends.map(function (r) { return r[f]; }) };
    }), { short: shortDay, unit: ' users', colors: ['#2563eb', '#16a34a', '#9ca3af'] });
    byId('users-summary').textContent = latest(data.userTrends, 'total') + ' users, ' +
      latest(data.userTrends, 'active') + ' active in the last 60 days';

    var flagDays = data.flagTrends.map(function (r) { return dayLabel(r.date); });
    draw(byId('flags'), 'stacked', flagDays, ['active', 'stale', 'potentiallyStale'].map(function (f) {
      return { name: f, values: data.flagTrends.map(function (r) { return r[f]; }) };
    }), { short: shortDay, unit: ' flags', colors: ['#16a34a', '#dc2626', '#f59e0b'] });
    byId('flags-summary').textContent = latest(data.flagTrends, 'total') + ' flags, ' +
      latest(data.flagTrends, 'stale') + ' stale, ' + latest(data.flagTrends, 'potentiallyStale') + ' potentially stale';

    var healthWeeks = uniqueSorted(data.projectFlagTrends.map(function (r) { return r.week; }));
    draw(byId('health'), 'line', healthWeeks, pivot(data.projectFlagTrends, 'project', 'health', healthWeeks),
      { short: shortWeek, unit: '%', max: 100 });
    var lastWeek = healthWeeks[healthWeeks.length - 1];
    var ttp = data.projectFlagTrends.filter(function (r) { return r.week === lastWeek && r.timeToProduction !== undefined; })
      .map(function (r) { return r.project + ' ' + r.timeToProduction + ' d'; });
    byId('health-summary').textContent = ttp.length ? 'Time to production: ' + ttp.join(', ') : 'No release flag reached production yet';

    var metricWeeks = uniqueSorted(data.metricsSummaryTrends.map(function (r) { return r.week; }));
    draw(byId('requests'), 'grouped', metricWeeks, pivot(data.metricsSummaryTrends, 'project', 'totalRequests', metricWeeks),
      { short: shortWeek, unit: ' requests' });
    var total = data.metricsSummaryTrends.reduce(function (sum, r) { return sum + r.totalRequests; }, 0);
    byId('requests-summary').textContent = numberFormat.format(total) + ' flag evaluations reported';

    var envWeeks = uniqueSorted(data.environmentTypeTrends.map(function (r) { return r.week; }));
    draw(byId('updates'), 'stacked', envWeeks, pivot(data.environmentTypeTrends, 'environmentType', 'totalUpdates', envWeeks),
      { short: shortWeek, unit: ' updates' });
    var updates = data.environmentTypeTrends.reduce(function (sum, r) { return sum + r.totalUpdates; }, 0);
    byId('updates-summary').textContent = updates + ' configuration updates';
  }

  async function load() {
    var token = byId('token').value.trim();
    var from = byId('from').value, to = byId('to').value;
    document.body.dataset.state = 'loading';
    // Without a token, the browser's login session (its cookie) may open the insights.
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    var query = new URLSearchParams();
    if (from) query.set('from', from);
    if (to) query.set('to', to);
    history.replaceState(null, '', location.pathname + '?' + query);
    status('Loading…', false);
    var response;
    try {
      var headers = { Accept: 'application/json' };
      if (token) headers.Authorization = token;
      response = await fetch('/api/admin/insights?' + query, { headers: headers, credentials: 'same-origin' });
    } catch (error) {
      document.body.dataset.state = 'error';
      status('The server could not be reached: ' + error.message, true);
      return;
    }
    var body = await response.json().catch(function () { return null; });
    if (!token && response.status === 401) {
      document.body.dataset.state = 'needs-token';
      status('Log in to flags, or paste an admin API token to load the insights.', false);
      return;
    }
    if (!response.ok) {
      document.body.dataset.state = 'error';
      if (response.status === 401 || response.status === 403) sessionStorage.removeItem(TOKEN_KEY);
      status((body && body.message) || 'The server answered ' + response.status + '.', true);
      return;
    }
    render(body);
    status('From ' + (from || '12 weeks ago') + ' to ' + (to || 'today') + '.', false);
    document.body.dataset.state = 'ready';
  }

  byId('controls').addEventListener('submit', function (event) {
    event.preventDefault();
    load();
  });
  load();
})();
`;
