(function () {
  'use strict';

  // el makes an element; text is only ever set as text (textContent), never parsed as markup.
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === 'text') e.textContent = String(v);
        else if (k === 'href') { if (safeHref(v)) e.setAttribute('href', v); }
        else e.setAttribute(k, v === true ? '' : String(v));
      });
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return e;
  }

  // safeHref allows relative links only (the page links to its sibling files and anchors).
  function safeHref(h) {
    return typeof h === 'string' && !/^\s*[a-z][a-z0-9+.\-]*:/i.test(h) && !/^\s*\/\//.test(h);
  }

  function num(f) {
    if (f === null || f === undefined) return '–';
    var s = f.toFixed(3).replace(/0+$/, '');
    return /\.$/.test(s) ? s + '0' : s;
  }

  function pct(f) { return f === null || f === undefined ? '–' : (f * 100).toFixed(1) + '%'; }

  function count(n) { return n.toLocaleString('en-US'); }

  // pager shows the rows that pass filter, a page at a time, rendered on demand: a page of 10,000
  // tasks builds only the rows it shows.
  function pager(o) {
    var page = 0, rows = [];
    var size = o.size || 50;
    function update() {
      rows = o.rows.filter(o.filter);
      var pages = Math.max(1, Math.ceil(rows.length / size));
      if (page >= pages) page = pages - 1;
      var from = page * size, to = Math.min(rows.length, from + size);
      var frag = document.createDocumentFragment();
      for (var i = from; i < to; i++) frag.appendChild(o.render(rows[i]));
      o.body.replaceChildren(frag);
      var what = o.noun + (o.rows.length === 1 ? '' : 's');
      o.status.textContent = rows.length === 0 ? 'No ' + o.noun + 's match.' :
        'Showing ' + count(from + 1) + '–' + count(to) + ' of ' + count(rows.length) +
        (rows.length !== o.rows.length ? ' (of ' + count(o.rows.length) + ' ' + what + ')' : '') +
        ' · page ' + (page + 1) + ' of ' + pages;
      o.prev.disabled = page === 0;
      o.next.disabled = page >= pages - 1;
      if (o.empty) o.empty.hidden = rows.length !== 0;
    }
    o.prev.addEventListener('click', function () { page--; update(); });
    o.next.addEventListener('click', function () { page++; update(); });
    return { update: function (reset) { if (reset) page = 0; update(); } };
  }

  function byId(id) { return document.getElementById(id); }

  function controlsOf(root) {
    return {
      body: root.querySelector('[data-rows]'), status: root.querySelector('[data-status]'),
      prev: root.querySelector('[data-prev]'), next: root.querySelector('[data-next]'),
      empty: root.querySelector('[data-empty]')
    };
  }

  function wire(inputs, p) {
    inputs.forEach(function (i) {
      if (!i) return;
      i.addEventListener(i.type === 'search' ? 'input' : 'change', function () { p.update(true); });
    });
    p.update(true);
  }

  function matches(q, fields) {
    if (!q) return true;
    q = q.toLowerCase();
    return fields.some(function (f) { return f && String(f).toLowerCase().indexOf(q) >= 0; });
  }

  function options(select, values) {
    values.forEach(function (v) { select.appendChild(el('option', { value: v, text: v })); });
  }

  function initRollout(data) {
    var root = byId('tasks');
    if (!root) return;
    var failedOnly = byId('failed-only'), search = byId('task-search'), cap = byId('task-capability');
    var caps = {};
    data.tasks.forEach(function (t) { (t.caps || []).forEach(function (c) { caps[c] = true; }); });
    options(cap, Object.keys(caps).sort());
    function failing(s) { return !s.p; }
    var c = controlsOf(root);
    c.rows = data.tasks;
    c.noun = 'task';
    c.filter = function (t) {
      if (failedOnly.checked && !t.s.some(failing)) return false;
      if (cap.value && (t.caps || []).indexOf(cap.value) < 0) return false;
      return matches(search.value.trim(), [t.n, t.f].concat(t.caps || []));
    };
    c.render = function (t) {
      var samples = el('ul', { class: 'samples', 'aria-label': 'samples of ' + t.n });
      t.s.forEach(function (s) {
        if (failedOnly.checked && !failing(s)) return;
        var label, cls, text;
        if (s.code) {
          cls = 'warn'; text = '#' + s.i + ' ' + s.code;
          label = 'sample ' + s.i + ': no score (' + s.code + ')';
        } else {
          cls = s.p ? 'pass' : 'fail'; text = '#' + s.i + (s.p ? ' ✓ ' : ' ✗ ') + num(s.sc);
          label = 'sample ' + s.i + ': ' + (s.p ? 'passed' : 'not passed') + ', score ' + num(s.sc);
        }
        var item = s.href ? el('a', { class: cls, href: s.href, 'aria-label': label, text: text })
          : el('span', { class: cls, 'aria-label': label, text: text });
        samples.appendChild(el('li', null, [item]));
      });
      var cells = [
        el('th', { scope: 'row' }, [el('span', { text: t.n }), el('br'), el('span', { class: 'meta mono', text: t.f })]),
        el('td', { text: (t.caps || []).join(', ') }),
        el('td', { text: t.turns + (t.multi ? ' (multi)' : '') }),
        el('td', { class: 'n', text: t.passed + '/' + t.scored + (t.failed ? ' · ' + t.failed + ' failed' : '') + (t.int ? ' · ' + t.int + ' interrupted' : '') }),
        el('td', { class: 'n', text: pct(t.rate) }),
        el('td', { class: 'n', text: num(t.score) })
      ];
      data.ks.forEach(function (k, i) { cells.push(el('td', { class: 'n', text: num(t.at[i]) })); });
      data.ks.slice(1).forEach(function (k, i) { cells.push(el('td', { class: 'n', text: num(t.hat[i + 1]) })); });
      cells.push(el('td', null, [samples]));
      return el('tr', null, cells);
    };
    wire([failedOnly, search, cap], pager(c));
  }

  function initValidation(data) {
    var root = byId('tasks');
    if (!root) return;
    var status = byId('status-filter'), code = byId('code-filter'), search = byId('task-search');
    var codes = {};
    data.tasks.forEach(function (t) { t.d.forEach(function (d) { codes[d.c] = true; }); });
    options(code, Object.keys(codes).sort());
    var c = controlsOf(root);
    c.rows = data.tasks;
    c.noun = 'task';
    c.size = 25;
    c.filter = function (t) {
      if (status.value && t.st !== status.value) return false;
      if (code.value && !t.d.some(function (d) { return d.c === code.value; })) return false;
      return matches(search.value.trim(), [t.t, t.f]);
    };
    c.render = function (t) {
      var badge = t.st === 'ok' ? 'pass' : t.st === 'warn' ? 'warn' : 'fail';
      var card = el('article', { class: 'task-card' }, [
        el('h3', null, [el('span', { text: t.t || '(no task declared)' }), ' ',
          el('span', { class: 'badge ' + badge, text: t.st })]),
        el('p', { class: 'meta mono', text: t.f })
      ]);
      t.d.forEach(function (d) {
        card.appendChild(el('div', { class: 'diag' }, [
          el('p', null, [el('strong', { class: 'sev-' + d.s, text: d.s + '[' + d.c + ']' }), ' ', el('span', { text: d.m })]),
          d.x ? el('pre', { text: d.x }) : null
        ]));
      });
      if (!t.d.length) card.appendChild(el('p', { class: 'meta', text: 'No diagnostics.' }));
      return el('li', null, [card]);
    };
    wire([status, code, search], pager(c));
  }

  function initGeneration(data) {
    var root = byId('attempts');
    if (!root) return;
    var rejected = byId('rejected-only'), search = byId('attempt-search');
    var c = controlsOf(root);
    c.rows = data.attempts;
    c.noun = 'attempt';
    c.filter = function (a) {
      if (rejected.checked && a.st !== 'rejected') return false;
      return matches(search.value.trim(), [a.task, a.file, a.twin].concat(a.codes || [], a.caps || []));
    };
    c.render = function (a) {
      var why = a.twin ? 'duplicate of ' + a.twin : (a.codes || []).join(', ');
      var diags = null;
      if (a.d && a.d.length) diags = el('details', null, [el('summary', { text: 'Diagnostics (' + a.d.length + ')' }), el('pre', { text: a.d.join('\n') })]);
      return el('tr', null, [
        el('th', { scope: 'row', class: 'n', text: String(a.a) }),
        el('td', null, [el('span', { class: 'badge ' + (a.st === 'accepted' ? 'pass' : 'fail'), text: a.st })]),
        el('td', null, [el('span', { text: a.task || '–' }), a.file ? el('br') : null, a.file ? el('span', { class: 'meta mono', text: a.file }) : null]),
        el('td', { class: 'n', text: String(a.rounds) }),
        el('td', { text: (a.caps || []).join(', ') }),
        el('td', null, [el('span', { text: why }), diags]),
        el('td', { class: 'n', text: count(a.tok[0]) + ' / ' + count(a.tok[1]) })
      ]);
    };
    wire([rejected, search], pager(c));
  }

  function initEpisode() {
    var bar = document.querySelector('.toolbar');
    if (!bar) return;
    bar.hidden = false;
    bar.addEventListener('click', function (ev) {
      var b = ev.target.closest('button[data-details]');
      if (!b) return;
      var open = b.getAttribute('data-details') === 'open';
      document.querySelectorAll('main details').forEach(function (d) { d.open = open; });
    });
  }

  var kind = document.body.getAttribute('data-kind');
  var block = byId('report-data');
  var data = block ? JSON.parse(block.textContent) : null;
  document.querySelectorAll('[data-needs-script]').forEach(function (e) { e.hidden = false; });
  document.querySelectorAll('[data-without-script]').forEach(function (e) { e.hidden = true; });
  if (kind === 'episode') initEpisode();
  else if (kind === 'rollout') initRollout(data);
  else if (kind === 'validation') initValidation(data);
  else if (kind === 'generation') initGeneration(data);
})();
