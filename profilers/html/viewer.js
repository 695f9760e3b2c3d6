/* viewer.js: draws the HTML report (prof_html.c inlines it after the data). The data is one
 * JSON object in <script id="profile-data">: {"run": facts, "analyses": [each analysis's
 * JSON report, as -Xprofile.format=json writes it], "functions": [{id, name, file, first,
 * last}], "files": {path: [lines]} (when pathprof or cachesim ran)}. Every section is drawn only when its analysis ran.
 *
 * Counts: the analyses' JSON holds observed counts; when a profile was sampled
 * ("estimated"), the page shows estimates (observed / sample_rate), as the text report does.
 *
 * Testing hooks (tests/profile/run_html_tests.py): when drawing ends without an exception,
 * <html> gets data-viewer="ready"; any error (thrown here or reported to window.onerror) is
 * shown in a div.viewer-error, so a headless browser's DOM says whether the page worked.
 * Table cells holding counts carry the exact number in data-v. */
(function () {
  'use strict';

  /* ---- small DOM helpers ---------------------------------------------------------------- */

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] == null) continue;
        if (k === 'text') e.textContent = attrs[k];
        else if (k === 'cls') e.className = attrs[k];
        else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), attrs[k]);
        else e.setAttribute(k, attrs[k]);
      }
    }
    if (kids) kids.forEach(function (c) { if (c != null) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }

  function showError(msg) {
    var box = document.getElementById('viewer-error');
    if (!box) {
      box = el('div', { id: 'viewer-error', cls: 'viewer-error' });
      document.body.insertBefore(box, document.body.firstChild);
    }
    box.textContent += 'report viewer error: ' + msg + '\n';
  }

  window.addEventListener('error', function (ev) {
    showError((ev.message || 'error') + (ev.lineno ? ' (line ' + ev.lineno + ')' : ''));
  });

  /* One formatter: toLocaleString builds a new one per call, which took seconds for a
   * table of a few thousand rows. */
  var NUMBER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  function fmt(n) {
    if (n == null || isNaN(n)) return '-';
    return NUMBER.format(Math.round(n));
  }
  function pct(part, whole) {
    if (!whole) return '0%';
    var p = 100 * part / whole;
    return (p >= 10 ? p.toFixed(1) : p.toFixed(2)) + '%';
  }
  function num(n, text) { return el('td', { cls: 'num', 'data-v': String(n), text: text == null ? fmt(n) : text }); }

  /* ---- the data ------------------------------------------------------------------------- */

  var D = JSON.parse(document.getElementById('profile-data').textContent);
  var A = {};
  (D.analyses || []).forEach(function (a) { A[a.analysis] = a; });
  var FN = {};
  (D.functions || []).forEach(function (f) { FN[f.id] = f; });
  var FILES = D.files || {};

  /* Observed count -> what the page shows: the estimate when sampled. */
  function scaleOf(a) { return a && a.estimated && a.sample_rate > 0 ? 1 / a.sample_rate : 1; }

  /* ---- sortable tables -------------------------------------------------------------------- */

  /* Rows a table draws (sorting still ranks them all): enough to find anything by sorting,
   * few enough that a profile of thousands of functions opens in a second. */
  var TABLE_ROWS = 1000;

  /* cols: [{key, label, num (bool), fmt(row) -> text, title}]; rows: objects. opts.onSelect(row)
   * makes rows selectable; opts.sort: initial key (descending for numbers); opts.limit: rows
   * drawn (the rest counted in a last line). */
  function sortableTable(cols, rows, opts) {
    opts = opts || {};
    var table = el('table');
    var thead = el('thead');
    var tbody = el('tbody');
    var state = { key: opts.sort || cols[0].key, desc: true };
    var col0 = cols.filter(function (c) { return c.key === state.key; })[0];
    state.desc = col0 && col0.num;
    var selected = null;
    var hr = el('tr');
    cols.forEach(function (c) {
      var th = el('th', { cls: 'sortable' + (c.num ? ' num' : ''), text: c.label, title: c.title || 'sort by ' + c.label });
      th.addEventListener('click', function () {
        if (state.key === c.key) state.desc = !state.desc;
        else { state.key = c.key; state.desc = !!c.num; }
        draw();
      });
      c.th = th;
      hr.appendChild(th);
    });
    thead.appendChild(hr);
    table.appendChild(thead);
    table.appendChild(tbody);
    function draw() {
      var k = state.key, d = state.desc ? -1 : 1;
      var sorted = rows.slice().sort(function (a, b) {
        var x = a[k], y = b[k];
        if (typeof x === 'string' || typeof y === 'string') { x = String(x); y = String(y); return x < y ? -d : x > y ? d : 0; }
        return (x - y) * d;
      });
      cols.forEach(function (c) { c.th.className = 'sortable' + (c.num ? ' num' : '') + (c.key === k ? (state.desc ? ' sorted-desc' : ' sorted-asc') : ''); });
      tbody.textContent = '';
      var lim = opts.limit || sorted.length;
      sorted.slice(0, lim).forEach(function (r) {
        var tr = el('tr', { cls: opts.onSelect ? 'selectable' + (r === selected ? ' selected' : '') : null });
        cols.forEach(function (c) {
          var v = r[c.key];
          tr.appendChild(c.num ? num(v, c.fmt ? c.fmt(r) : null) : el('td', { text: c.fmt ? c.fmt(r) : v }));
        });
        if (opts.onSelect) tr.addEventListener('click', function () { selected = r; draw(); opts.onSelect(r); });
        tbody.appendChild(tr);
      });
      if (sorted.length > lim) tbody.appendChild(el('tr', {}, [el('td', { colspan: String(cols.length), cls: 'note', text: (sorted.length - lim) + ' more rows' })]));
    }
    draw();
    return el('div', { cls: 'scroll' }, [table]);
  }

  /* ---- page frame --------------------------------------------------------------------------- */

  var app = document.getElementById('app');
  var navLinks = [];
  var mainEl = el('main');
  function section(id, title) {
    var s = el('section', { id: id }, [el('h2', { text: title })]);
    mainEl.appendChild(s);
    navLinks.push(el('a', { href: '#' + id, text: title }));
    return s;
  }

  var tooltip = el('div', { cls: 'tooltip' });
  function tipShow(ev, nodes) {
    tooltip.textContent = '';
    nodes.forEach(function (n) { tooltip.appendChild(n); });
    tooltip.style.display = 'block';
    tipMove(ev);
  }
  function tipMove(ev) {
    var x = ev.clientX + 14, y = ev.clientY + 14;
    var w = tooltip.offsetWidth, h = tooltip.offsetHeight;
    if (x + w > window.innerWidth) x = Math.max(0, ev.clientX - w - 10);
    if (y + h > window.innerHeight) y = Math.max(0, ev.clientY - h - 10);
    tooltip.style.left = x + 'px';
    tooltip.style.top = y + 'px';
  }
  function tipHide() { tooltip.style.display = 'none'; }

  function shellQuote(s) { return /^[\w@%+=:,./-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'"; }

  /* ---- the run's facts ---------------------------------------------------------------------- */

  function drawRun() {
    var run = D.run || {};
    var s = section('run', 'Run');
    var argv = run.argv || [];
    var xopts = argv.filter(function (a) { return /^-X/.test(a); });
    var any = D.analyses && D.analyses[0];
    var partial = (D.analyses || []).some(function (a) { return a.partial; });
    var estimated = (D.analyses || []).some(function (a) { return a.estimated; });
    if (partial) s.appendChild(el('div', { cls: 'banner partial', text: 'Partial profile: the program did not run to its end (an uncaught error or a signal); the counts are those of the part that ran.' }));
    if (estimated) s.appendChild(el('div', { cls: 'banner estimated', text: 'Sampled profile: counts are estimates, the observed counts scaled by 1/' + any.sample_rate + '.' }));
    var threadsCount = A.calltree ? A.calltree.threads.length : null;
    var sampling = run.sampling === 'exhaustive' ? 'exhaustive (every event analysed)'
      : run.sampling === 'phase' ? 'the phases the program profiled (profile library): every event between profile.start and profile.stop'
      : run.sampling === 'shadow' ? 'shadow processes: instrumented forked copies of the program, coverage ' + (any ? any.sample_rate : '?')
      : (run.sampling === 'events' ? 'sampled: the CAB\'s bursts of events' : 'sampled: instrumented code in windows') +
        ', fraction ' + (any ? any.sample_rate : '?');
    var rows = [
      ['command', argv.map(shellQuote).join(' ')],
      ['-X options', xopts.length ? xopts.join(' ') : '(none)'],
      ['analyses', (D.analyses || []).map(function (a) { return a.analysis; }).join(', ')],
      ['analysis', run.analysis + (run.analysis === 'concurrent' ? ' (analyzer threads fed through CABs)' : ' (inline, on the program\'s threads)')],
      ['threads', run.threads + (threadsCount != null ? ', ' + threadsCount + ' language thread' + (threadsCount === 1 ? '' : 's') + ' profiled' : '') +
        ', ' + (run.streams || []).length + ' event stream' + ((run.streams || []).length === 1 ? '' : 's')],
      ['sampling', sampling],
      ['profile', partial ? 'partial (the program was interrupted)' : 'whole (the program ran to its end)']
    ];
    s.appendChild(el('table', { cls: 'facts' }, [el('tbody', {}, rows.map(function (r) {
      return el('tr', {}, [el('th', { text: r[0] }), el('td', { text: r[1] })]);
    }))]));
    var streams = run.streams || [];
    if (streams.length) {
      s.appendChild(el('h3', { text: 'Events per stream' }));
      var tot = { name: 'total', produced: 0, consumed: 0, dropped: 0 };
      streams.forEach(function (r) { tot.produced += r.produced; tot.consumed += r.consumed; tot.dropped += r.dropped; });
      var body = streams.concat(streams.length > 1 ? [tot] : []).map(function (r) {
        return el('tr', {}, [el('td', { text: r.name }), num(r.produced), num(r.consumed), num(r.dropped)]);
      });
      s.appendChild(el('table', { cls: 'streams' }, [
        el('thead', {}, [el('tr', {}, [el('th', { text: 'stream' }), el('th', { cls: 'num', text: 'produced' }), el('th', { cls: 'num', text: 'consumed' }), el('th', { cls: 'num', text: 'dropped' })])]),
        el('tbody', {}, body)]));
      s.appendChild(el('p', { cls: 'note', text: 'A stream is what one native thread (or one carrier of green threads) emitted. Dropped events are the ones sampling skipped.' }));
    }
  }

  /* ---- flame graph (calltree) ------------------------------------------------------------------ */

  /* A tree node: {name, calls (observed, this context), kids: [], parent, value (inclusive:
   * calls here and below), x (where it starts, in calls from the root's left edge), depth}.
   * Every walk over the tree is iterative: a context tree is as deep as the program's
   * recursion, deeper than a JavaScript stack. */
  function preorder(root) {
    var out = [], stack = [root];
    while (stack.length) {
      var n = stack.pop();
      out.push(n);
      for (var i = n.kids.length - 1; i >= 0; i--) stack.push(n.kids[i]);
    }
    return out;
  }

  function buildTree(ct, which) {
    var root = { name: 'all', calls: 0, kids: [], parent: null };
    var threads = ct.threads || [];
    threads.forEach(function (t, ti) {
      if (which !== 'all' && which !== 'merged' && String(ti) !== which) return;
      var byId = {};
      var top = root;
      if (which === 'all' && threads.length > 1) {
        top = { name: 'thread ' + t.thread, calls: 0, kids: [], thread: true, parent: root };
        root.kids.push(top);
      }
      t.nodes.forEach(function (n) { /* depth-first: a parent comes before its children */
        if (n.parent == null) { byId[n.id] = top; return; }
        var p = byId[n.parent];
        /* 'merged': the threads' contexts with the same call path are one box. */
        var node = which === 'merged' && p.byName ? p.byName[n['function']] : null;
        if (node) node.calls += n.calls;
        else {
          node = { name: n['function'], calls: n.calls, kids: [], parent: p };
          p.kids.push(node);
          if (which === 'merged') (p.byName || (p.byName = Object.create(null)))[node.name] = node;
        }
        byId[n.id] = node;
      });
    });
    var byName = function (a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : 0; };
    var order = preorder(root);
    order.forEach(function (n) { n.kids.sort(byName); n.value = n.calls; });
    order = preorder(root); /* again: the sort changed the children's order */
    for (var i = order.length - 1; i > 0; i--) order[i].parent.value += order[i].value;
    order.forEach(function (n) {
      if (n === root) { n.x = 0; n.depth = 0; }
      var x = n.x + n.calls; /* a context's own calls sit left of its callees */
      n.kids.forEach(function (k) { k.x = x; k.depth = n.depth + 1; x += k.value; });
    });
    return root;
  }

  function hue(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return h;
  }
  function frameColor(n) {
    if (n.thread || n.name === 'all') return '#c9ced8';
    if (n.name === '[C]') return '#d5d5d5';
    var h = hue(n.name);
    return 'hsl(' + (8 + h % 42) + ',' + (70 + (h >> 8) % 20) + '%,' + (60 + (h >> 16) % 14) + '%)';
  }

  function drawFlame() {
    var ct = A.calltree;
    if (!ct) return;
    var s = section('flame', 'Calling context tree');
    var scale = scaleOf(ct);
    s.appendChild(el('p', { cls: 'note', text: 'An icicle graph: each box is a calling context, under its caller; its width is the calls made in it and below it (' +
      fmt(ct.total_calls * scale) + ' calls in all). Hover for counts, click (or Enter) to zoom in, click the top box (or Escape) to zoom out; search highlights functions.' }));
    var threadSel = el('select', { title: 'thread' });
    threadSel.appendChild(el('option', { value: 'all', text: ct.threads.length > 1 ? 'all threads' : 'thread ' + (ct.threads[0] ? ct.threads[0].thread : '') }));
    if (ct.threads.length > 1) {
      threadSel.appendChild(el('option', { value: 'merged', text: 'all threads, merged' }));
      ct.threads.forEach(function (t, i) { threadSel.appendChild(el('option', { value: String(i), text: 'thread ' + t.thread })); });
    }
    var search = el('input', { type: 'search', placeholder: 'search functions (text or /regex/)' });
    var reset = el('button', { text: 'reset zoom' });
    var matchInfo = el('span', { cls: 'note' });
    s.appendChild(el('div', { cls: 'controls' }, [threadSel, search, reset, matchInfo]));
    var box = el('div', { cls: 'flame' });
    s.appendChild(box);
    var depthNote = el('p', { cls: 'note' });
    s.appendChild(depthNote);
    /* Boxes narrower than MIN_PX pixels are not drawn, nor rows past MAX_ROWS below the
     * zoomed box: the page stays quick whatever the tree's size and depth. */
    var ROW = 20, MIN_PX = 0.5, MAX_ROWS = 300;
    var root, zoom;

    function matcher() {
      var q = search.value.trim();
      if (!q) return null;
      var m = /^\/(.*)\/$/.exec(q);
      if (m) { try { var re = new RegExp(m[1], 'i'); return function (t) { return re.test(t); }; } catch (e) { return null; } }
      q = q.toLowerCase();
      return function (t) { return t.toLowerCase().indexOf(q) >= 0; };
    }

    function render() {
      box.textContent = '';
      var W = box.clientWidth || 1000;
      var match = matcher();
      var ancestors = [];
      for (var a = zoom; a; a = a.parent) ancestors.push(a);
      /* Zoomed deep into a recursion: the root and the 19 nearest callers stand for the rest. */
      if (ancestors.length > 20) ancestors = ancestors.slice(0, 19).concat([root]);
      ancestors.reverse();
      var maxDepth = 0, matched = 0, drawn = 0;
      function put(n, left, width, depth, dim) {
        var f = el('div', { cls: 'frame' + (dim ? ' dim' : ''), text: n.name });
        f.style.left = left + 'px';
        f.style.width = Math.max(width, 1) + 'px';
        f.style.top = depth * ROW + 'px';
        f.style.background = frameColor(n);
        if (match && match(n.name) && !n.thread && n !== root) f.className += ' match';
        f.addEventListener('mousemove', function (ev) { tipShow(ev, tipFor(n)); });
        f.addEventListener('mouseleave', tipHide);
        f.addEventListener('click', function () { zoom = n === zoom && n.parent ? n.parent : n; tipHide(); render(); });
        /* Keyboard: Tab walks the boxes, Enter zooms like a click, Escape zooms out. */
        f.tabIndex = 0;
        f.addEventListener('keydown', function (ev) {
          if (ev.key === 'Enter') f.click();
          else if (ev.key === 'Escape') { zoom = root; render(); }
        });
        box.appendChild(f);
        drawn++;
        if (depth > maxDepth) maxDepth = depth;
      }
      /* The zoomed node's ancestors span the whole width (dimmed), then its subtree. */
      ancestors.slice(0, -1).forEach(function (n, i) { put(n, 0, W, i, true); });
      var base = ancestors.length - 1;
      var x0 = zoom.x, k = zoom.value ? W / zoom.value : 0;
      var stack = [[zoom, false]], deeper = false;
      while (stack.length) {
        var top = stack.pop(), n = top[0], inMatch = top[1];
        var w = n.value * k;
        if (w < MIN_PX) continue;
        var row = base + n.depth - zoom.depth;
        if (row >= MAX_ROWS) { deeper = true; continue; }
        put(n, (n.x - x0) * k, w, row, false);
        var here = !!(match && !n.thread && n !== root && match(n.name));
        if (here && !inMatch) matched += n.value; /* a match inside a match is counted once */
        for (var i = n.kids.length - 1; i >= 0; i--) stack.push([n.kids[i], inMatch || here]);
      }
      depthNote.textContent = deeper ? 'Contexts deeper than ' + MAX_ROWS + ' rows are not drawn: click a deep box to zoom in.' : '';
      box.style.height = (maxDepth + 1) * ROW + 4 + 'px';
      matchInfo.textContent = match ? 'matched: ' + fmt(matched * scale) + ' calls, ' + pct(matched, zoom.value) + ' of the view' : '';
      box.setAttribute('data-frames', String(drawn));
    }

    function tipFor(n) {
      var parent = n.parent;
      var lines = [el('div', {}, [el('b', { text: n.name })])];
      if (n === root) lines.push(el('div', { text: fmt(n.value * scale) + ' calls in all' }));
      else {
        lines.push(el('div', { text: 'calls in this context: ' + fmt(n.calls * scale) }));
        lines.push(el('div', { text: 'with its callees: ' + fmt(n.value * scale) + ' (' + pct(n.value, root.value) + ' of all' +
          (parent && parent !== root ? ', ' + pct(n.value, parent.value) + ' of its caller' : '') + ')' }));
      }
      return lines;
    }

    function rebuild() {
      root = buildTree(ct, threadSel.value);
      zoom = root;
      render();
    }
    threadSel.addEventListener('change', rebuild);
    search.addEventListener('input', render);
    reset.addEventListener('click', function () { zoom = root; render(); });
    window.addEventListener('resize', function () { if (root) render(); });
    rebuild();

    if (ct.patterns && ct.patterns.list && ct.patterns.list.length) {
      s.appendChild(el('h3', { text: 'Depth-two patterns (a function with the set of functions it called)' }));
      var rows = ct.patterns.list.map(function (p) {
        return { fn: p['function'], kids: p.children.length ? p.children.join(', ') : '(calls nothing)', count: p.count * scale };
      });
      s.appendChild(sortableTable([
        { key: 'fn', label: 'function' }, { key: 'kids', label: 'called' }, { key: 'count', label: 'invocations', num: true }
      ], rows, { sort: 'count', limit: 200 }));
    }
  }

  /* ---- call graph ---------------------------------------------------------------------------- */

  function drawCallGraph() {
    var cg = A.callgraph;
    if (!cg) return;
    var s = section('callgraph', 'Call graph');
    var scale = scaleOf(cg);
    var fns = {};
    function fnRow(name) {
      return fns[name] || (fns[name] = { name: name, calls: 0, out: 0, callers: [], callees: [] });
    }
    cg.edges.forEach(function (e) {
      var c = e.calls * scale;
      fnRow(e.callee).calls += c;
      fnRow(e.callee).callers.push(e);
      fnRow(e.caller).out += c;
      fnRow(e.caller).callees.push(e);
    });
    var rows = Object.keys(fns).map(function (k) {
      var r = fns[k];
      r.ncallers = r.callers.length;
      r.ncallees = r.callees.length;
      r.share = r.calls;
      return r;
    });
    var total = cg.total_calls * scale;
    s.appendChild(el('p', { cls: 'note', text: fmt(total) + ' calls along ' + cg.edges.length + ' caller-callee edges. Click a column to sort, a function to see its callers and callees.' }));
    var detail = el('div', { cls: 'cg-detail' });
    function siteText(e) {
      return e.sites.map(function (x) { return (x.site === 'C' ? 'from C' : x.site === '?' ? 'unknown site' : 'instruction ' + x.site) + ': ' + fmt(x.calls * scale); }).join('; ');
    }
    function select(r) {
      detail.textContent = '';
      detail.appendChild(el('h3', { text: r.name }));
      var callers = r.callers.map(function (e) { return { name: e.caller, calls: e.calls * scale, share: e.calls * scale, sites: siteText(e) }; });
      var callees = r.callees.map(function (e) { return { name: e.callee, calls: e.calls * scale, share: e.calls * scale, sites: siteText(e) }; });
      var pc = function (of) { return function (x) { return pct(x.calls, of); }; };
      detail.appendChild(el('div', { cls: 'row' }, [
        el('div', {}, [el('h3', { text: 'callers (' + callers.length + ')' }), sortableTable([
          { key: 'name', label: 'caller' }, { key: 'calls', label: 'calls', num: true }, { key: 'share', label: '% of its calls', num: true, fmt: pc(r.calls) }, { key: 'sites', label: 'call sites' }
        ], callers, { sort: 'calls', limit: TABLE_ROWS })]),
        el('div', {}, [el('h3', { text: 'callees (' + callees.length + ')' }), sortableTable([
          { key: 'name', label: 'callee' }, { key: 'calls', label: 'calls', num: true }, { key: 'share', label: '% of its calls out', num: true, fmt: pc(r.out) }, { key: 'sites', label: 'call sites' }
        ], callees, { sort: 'calls', limit: TABLE_ROWS })])
      ]));
    }
    s.appendChild(sortableTable([
      { key: 'name', label: 'function' },
      { key: 'calls', label: 'calls', num: true, title: 'times it was called' },
      { key: 'share', label: '% of calls', num: true, fmt: function (r) { return pct(r.calls, total); } },
      { key: 'ncallers', label: 'callers', num: true },
      { key: 'out', label: 'calls made', num: true },
      { key: 'ncallees', label: 'callees', num: true }
    ], rows, { sort: 'calls', onSelect: select, limit: TABLE_ROWS }));
    s.appendChild(detail);
    var hottest = rows.slice().sort(function (a, b) { return b.calls - a.calls; })[0];
    if (hottest) select(hottest);
  }

  function drawMethodCount() {
    var mc = A.methodcount;
    if (!mc) return;
    var s = section('methodcount', 'Calls per function');
    var scale = scaleOf(mc), total = mc.total_calls * scale;
    s.appendChild(el('p', { cls: 'note', text: fmt(total) + ' calls of ' + mc.functions.length + ' functions.' }));
    s.appendChild(sortableTable([
      { key: 'name', label: 'function' }, { key: 'calls', label: 'calls', num: true },
      { key: 'share', label: '% of calls', num: true, fmt: function (r) { return pct(r.calls, total); } }
    ], mc.functions.map(function (f) { return { name: f['function'], calls: f.calls * scale, share: f.calls }; }), { sort: 'calls', limit: TABLE_ROWS }));
  }

  /* ---- hot paths and annotated source (pathprof) --------------------------------------------- */

  function lineText(fid, line) {
    var f = FN[fid];
    var lines = f && f.file != null ? FILES[f.file] : null;
    return lines && line >= 1 && line <= lines.length ? lines[line - 1] : null;
  }

  function ranges(lines) {
    var seen = {}, uniq = [];
    lines.forEach(function (l) { if (l && !seen[l]) { seen[l] = 1; uniq.push(l); } });
    uniq.sort(function (a, b) { return a - b; });
    var out = [];
    for (var i = 0; i < uniq.length; i++) {
      var j = i;
      while (j + 1 < uniq.length && uniq[j + 1] === uniq[j] + 1) j++;
      out.push(i === j ? String(uniq[i]) : uniq[i] + '-' + uniq[j]);
      i = j;
    }
    return out.join(', ');
  }

  function drawPaths() {
    var pp = A.pathprof;
    if (!pp) return;
    var s = section('paths', 'Hot paths');
    var scale = scaleOf(pp), total = pp.total_paths;
    var TOP = 30;
    s.appendChild(el('p', { cls: 'note', text: fmt(total * scale) + ' acyclic paths (Ball-Larus) ran, ' + pp.paths.length + ' distinct; the ' +
      Math.min(TOP, pp.paths.length) + ' hottest below. Open a path to see the source lines it went through.' }));
    var list = el('div', { cls: 'pathlist' });
    pp.paths.slice(0, TOP).forEach(function (p, i) {
      var sum = el('summary', {}, [
        el('b', { text: '#' + (i + 1) + ' ' }), el('span', { cls: 'count', 'data-v': String(p.count * scale), text: fmt(p.count * scale) }),
        ' runs (' + pct(p.count, total) + ') in ', el('span', { text: p['function'] }),
        el('span', { cls: 'note', text: ' path ' + p.path + (p.start ? ', from ' + p.start + ' to ' + p.end : ', not decoded') + (p.lines.length ? ', lines ' + ranges(p.lines) : '') })
      ]);
      var det = el('details', {}, [sum]);
      var body = el('tbody');
      var shown = 0;
      p.lines.forEach(function (l, k) {
        if (shown >= 60 || !l) return;
        if (k > 0 && p.lines[k - 1] === l) return;
        var t = lineText(p.fid, l);
        body.appendChild(el('tr', { cls: 'inpath' }, [el('td', { cls: 'num', text: String(l) }), el('td', { cls: 'code', text: t == null ? '(source not available)' : t })]));
        shown++;
      });
      if (p.lines.length > shown) body.appendChild(el('tr', {}, [el('td'), el('td', { cls: 'note', text: p.truncated ? '(path truncated: ' + p.nlines + ' lines)' : '' })]));
      det.appendChild(el('table', { cls: 'src' }, [body]));
      list.appendChild(det);
    });
    s.appendChild(list);
    drawAnnotated(pp, scale);
  }

  /* Per-line counts, as -Xprofile.format=annotate computes them (prof_pathprof.c "Annotate"):
   * each entry of a path's line list is control coming to that line, so a line's count is the
   * sum over paths of the path's count times its entries in the list; line 0 has no line. */
  function lineCounts(pp) {
    var byFn = {};
    pp.paths.forEach(function (p) {
      if (!p.start) return; /* not decoded */
      var f = byFn[p.fid] || (byFn[p.fid] = { fid: p.fid, name: p['function'], total: 0, lines: {}, cut: false });
      p.lines.forEach(function (l) {
        if (!l) return;
        f.lines[l] = (f.lines[l] || 0) + p.count;
        f.total += p.count;
      });
      if (p.end === 'cut') f.cut = true;
    });
    return Object.keys(byFn).map(function (k) { return byFn[k]; }).sort(function (a, b) {
      return b.total - a.total || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    });
  }

  function drawAnnotated(pp, scale) {
    var fns = lineCounts(pp);
    if (!fns.length) return;
    var s = section('source', 'Annotated source');
    var TOP = 10;
    var all = fns.reduce(function (t, f) { return t + f.total; }, 0);
    s.appendChild(el('p', { cls: 'note', text: 'The ' + Math.min(TOP, fns.length) + ' hottest of ' + fns.length + ' functions by line entries (' + fmt(all * scale) +
      ' in all): on each line, the times control entered it (a new line, or a jump back to one), from the path profile.' }));
    fns.slice(0, TOP).forEach(function (f) {
      var info = FN[f.fid] || {};
      var src = info.file != null ? FILES[info.file] : null;
      var div = el('div', { cls: 'annotated', 'data-fid': String(f.fid) });
      div.appendChild(el('h3', {}, [el('span', { text: f.name }), el('span', { cls: 'note', text: '  ' + fmt(f.total * scale) + ' line entries (' + pct(f.total, all) + ')' + (f.cut ? '; some paths were cut (counts at cut edges may repeat a line)' : '') })]));
      var nums = Object.keys(f.lines).map(Number).sort(function (a, b) { return a - b; });
      var max = nums.reduce(function (m, l) { return Math.max(m, f.lines[l]); }, 0);
      var first = info.first || 1, last = info.first ? info.last : (src ? src.length : nums[nums.length - 1] || 1);
      if (!src) { first = nums[0] || 1; last = nums[nums.length - 1] || first; }
      var body = el('tbody');
      function row(l, text) {
        var c = f.lines[l] || 0;
        var bar = el('span', { cls: 'bar' });
        bar.style.width = (max ? Math.max(c ? 1 : 0, Math.round(100 * c / max)) : 0) + 'px';
        body.appendChild(el('tr', { cls: c ? 'hot' : null, 'data-line': String(l) }, [
          c ? num(c * scale) : el('td', { cls: 'num' }), el('td', { cls: 'num', text: String(l) }), el('td', { cls: 'barcell' }, [bar]), el('td', { cls: 'code', text: text })]));
      }
      for (var l = first; l <= last; l++) {
        if (!src && !f.lines[l]) continue;
        row(l, src ? (src[l - 1] != null ? src[l - 1] : '') : '');
      }
      nums.forEach(function (l) { if (l < first || l > last) row(l, src && src[l - 1] != null ? src[l - 1] + '   (outside the function)' : '(outside the function)'); });
      if (!src) div.appendChild(el('p', { cls: 'note', text: 'source not available' + (info.file ? ' (' + info.file + ' could not be read)' : ' (not loaded from a file)') + ': counts by line number' }));
      div.appendChild(el('div', { cls: 'scroll' }, [el('table', { cls: 'src' }, [el('thead', {}, [el('tr', {}, [
        el('th', { cls: 'num', text: 'count' }), el('th', { cls: 'num', text: 'line' }), el('th'), el('th', { text: info.file || '' })])]), body])]));
      s.appendChild(div);
    });
  }

  /* ---- cache simulation ------------------------------------------------------------------------ */

  function drawCache() {
    var cs = A.cachesim;
    if (!cs) return;
    var s = section('cache', 'Cache simulation');
    var scale = scaleOf(cs);
    function kib(b) { return b >= 1048576 ? b / 1048576 + ' MiB' : b / 1024 + ' KiB'; }
    s.appendChild(el('p', { cls: 'note', text: fmt(cs.accesses * scale) + ' heap accesses (' + fmt(cs.loads * scale) + ' loads, ' + fmt(cs.stores * scale) +
      ' stores) through an inclusive ' + cs.policy.toUpperCase() + ' hierarchy of ' + cs.line_bytes + '-byte lines; ' + fmt(cs.back_invalidations * scale) + ' back-invalidations.' }));
    var lv = ['l1', 'l2'].map(function (k) { var l = cs[k]; return el('tr', {}, [el('td', { text: k.toUpperCase() }), el('td', { text: kib(l.size) + ', ' + l.ways + '-way, ' + l.sets + ' sets' }),
      num(l.hits * scale), num(l.misses * scale), el('td', { cls: 'num', text: (100 * l.miss_rate).toFixed(3) + '%' }), num(l.evictions * scale)]); });
    s.appendChild(el('table', { cls: 'levels' }, [el('thead', {}, [el('tr', {}, ['level', 'geometry', 'hits', 'misses', 'miss rate', 'evictions'].map(function (h, i) { return el('th', { cls: i > 1 ? 'num' : null, text: h }); }))]), el('tbody', {}, lv)]));
    s.appendChild(el('h3', { text: 'Misses per function' }));
    s.appendChild(sortableTable([
      { key: 'name', label: 'function' }, { key: 'accesses', label: 'accesses', num: true },
      { key: 'l1', label: 'L1 misses', num: true }, { key: 'l1r', label: 'L1 miss rate', num: true, fmt: function (r) { return pct(r.l1, r.accesses); } },
      { key: 'l2', label: 'L2 misses', num: true }, { key: 'l2s', label: '% of L2 misses', num: true, fmt: function (r) { return pct(r.l2, cs.l2.misses * scale); } }
    ], cs.functions.map(function (f) {
      return { name: f['function'], accesses: f.accesses * scale, l1: f.l1_misses * scale, l1r: f.accesses ? f.l1_misses / f.accesses : 0, l2: f.l2_misses * scale, l2s: f.l2_misses };
    }), { sort: 'l1', limit: TABLE_ROWS }));
    s.appendChild(el('p', { cls: 'note', text: 'Misses are charged to the Lua function whose instruction made the access (library code: the Lua function that called it).' }));
    drawCacheLines(cs, scale);
  }

  /* Per-line misses (cachesim's functions[].lines, line 0: unknown): the hottest lines of the
   * run in a sortable table, then the source of the 10 functions with most L1 misses, each
   * line with its accesses and misses (the bar: L1 misses), as -Xprofile.format=annotate
   * writes them for cachesim. */
  function drawCacheLines(cs, scale) {
    var rows = [];
    cs.functions.forEach(function (f) {
      (f.lines || []).forEach(function (ln) {
        if (!ln.accesses) return;
        var info = FN[f.id] || {};
        rows.push({ where: (info.file || '?') + ':' + (ln.line || '?'), name: f['function'], line: ln.line, code: ln.line ? (lineText(f.id, ln.line) || '') : '',
          accesses: ln.accesses * scale, l1: ln.l1_misses * scale, l1r: ln.accesses ? ln.l1_misses / ln.accesses : 0, l2: ln.l2_misses * scale });
      });
    });
    if (!rows.length) return;
    var s = section('cachelines', 'Cache misses per source line');
    var unknown = rows.some(function (r) { return !r.line; });
    s.appendChild(el('p', { cls: 'note', text: rows.length + ' source lines made heap accesses; the table ranks them' + (unknown ?
      ' (line "?": accesses whose instruction was not seen, as when a sampled burst began between the two events, or of a function without line information).' : '.') }));
    s.appendChild(sortableTable([
      { key: 'where', label: 'line' }, { key: 'name', label: 'function' }, { key: 'accesses', label: 'accesses', num: true },
      { key: 'l1', label: 'L1 misses', num: true }, { key: 'l1r', label: 'L1 miss rate', num: true, fmt: function (r) { return pct(r.l1, r.accesses); } },
      { key: 'l2', label: 'L2 misses', num: true }, { key: 'code', label: 'source' }
    ], rows, { sort: 'l1', limit: TABLE_ROWS }));
    var TOP = 10;
    var fns = cs.functions.filter(function (f) { return f.id && (f.lines || []).length; }).slice(0, TOP); /* most L1 misses first */
    fns.forEach(function (f) {
      var info = FN[f.id] || {};
      var src = info.file != null ? FILES[info.file] : null;
      var by = {};
      f.lines.forEach(function (ln) { by[ln.line] = ln; });
      var nums = f.lines.map(function (ln) { return ln.line; }).filter(function (l) { return l > 0; });
      var max = f.lines.reduce(function (m, ln) { return Math.max(m, ln.l1_misses); }, 0);
      var first = info.first || 1, last = info.first ? info.last : (src ? src.length : nums[nums.length - 1] || 1);
      if (!src) { first = nums[0] || 1; last = nums[nums.length - 1] || first; }
      var div = el('div', { cls: 'annotated-cache', 'data-fid': String(f.id) });
      div.appendChild(el('h3', {}, [el('span', { text: f['function'] }), el('span', { cls: 'note', text: '  ' + fmt(f.accesses * scale) + ' accesses, ' +
        fmt(f.l1_misses * scale) + ' L1 misses (' + pct(f.l1_misses, cs.l1.misses) + ' of all), ' + fmt(f.l2_misses * scale) + ' L2 misses' })]));
      var body = el('tbody');
      function row(l, text) {
        var c = by[l];
        var bar = el('span', { cls: 'bar' });
        bar.style.width = (c && max ? Math.max(c.l1_misses ? 1 : 0, Math.round(100 * c.l1_misses / max)) : 0) + 'px';
        var cells = c ? [num(c.accesses * scale), num(c.l1_misses * scale), num(c.l2_misses * scale)] : [el('td', { cls: 'num' }), el('td', { cls: 'num' }), el('td', { cls: 'num' })];
        body.appendChild(el('tr', { cls: c ? 'hot' : null, 'data-line': String(l) }, cells.concat([
          el('td', { cls: 'num', text: l ? String(l) : '?' }), el('td', { cls: 'barcell' }, [bar]), el('td', { cls: 'code', text: text })])));
      }
      if (by[0]) row(0, '(no instruction or no line information)');
      for (var l = first; l <= last; l++) {
        if (!src && !by[l]) continue;
        row(l, src ? (src[l - 1] != null ? src[l - 1] : '') : '');
      }
      nums.forEach(function (l) { if (l < first || l > last) row(l, src && src[l - 1] != null ? src[l - 1] + '   (outside the function)' : '(outside the function)'); });
      if (!src) div.appendChild(el('p', { cls: 'note', text: 'source not available' + (info.file ? ' (' + info.file + ' could not be read)' : ' (not loaded from a file)') + ': counts by line number' }));
      div.appendChild(el('div', { cls: 'scroll' }, [el('table', { cls: 'src' }, [el('thead', {}, [el('tr', {}, [
        el('th', { cls: 'num', text: 'accesses' }), el('th', { cls: 'num', text: 'L1 misses' }), el('th', { cls: 'num', text: 'L2 misses' }),
        el('th', { cls: 'num', text: 'line' }), el('th'), el('th', { text: info.file || '' })])]), body])]));
      s.appendChild(div);
    });
  }

  /* ---- input size (inline SVG plots) ------------------------------------------------------------ */

  var SVGNS = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }
  function modelF(m, n) {
    switch (m) {
      case 'log n': return Math.log2(1 + n);
      case 'n': return n;
      case 'n log n': return n * Math.log2(1 + n);
      case 'n^2': return n * n;
      case 'n^3': return n * n * n;
      default: return 1;
    }
  }
  function ticks(lo, hi, k) {
    var span = hi - lo || 1, step = Math.pow(10, Math.floor(Math.log10(span / k)));
    [1, 2, 5, 10].some(function (m) { if (span / (step * m) <= k) { step *= m; return true; } return false; });
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return out;
  }
  function short(v) {
    var a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + 'k';
    return String(+v.toPrecision(4));
  }

  /* fit: {model, a, b, r2, points: [[size, calls, min, mean, max]]}: mean cost against size,
   * a bar from min to max, and the fitted a + b f(n). */
  function plot(fit, title, xlabel) {
    var W = 400, H = 250, L = 58, R = 12, T = 22, B = 38;
    var pts = fit.points;
    var xmax = Math.max.apply(null, pts.map(function (p) { return p[0]; }).concat([1]));
    var ymax = Math.max.apply(null, pts.map(function (p) { return p[4]; }).concat([1]));
    var X = function (v) { return L + (W - L - R) * v / xmax; };
    var Y = function (v) { return H - B - (H - T - B) * v / ymax; };
    var g = svg('svg', { 'class': 'plot', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    g.appendChild(svg('title', {}, title));
    ticks(0, xmax, 6).forEach(function (v) {
      g.appendChild(svg('line', { 'class': 'grid', x1: X(v), x2: X(v), y1: T, y2: H - B }));
      g.appendChild(svg('text', { x: X(v), y: H - B + 14, 'text-anchor': 'middle' }, short(v)));
    });
    ticks(0, ymax, 5).forEach(function (v) {
      g.appendChild(svg('line', { 'class': 'grid', x1: L, x2: W - R, y1: Y(v), y2: Y(v) }));
      g.appendChild(svg('text', { x: L - 5, y: Y(v) + 4, 'text-anchor': 'end' }, short(v)));
    });
    g.appendChild(svg('line', { 'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
    g.appendChild(svg('line', { 'class': 'axis', x1: L, x2: L, y1: T, y2: H - B }));
    g.appendChild(svg('text', { x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle' }, xlabel));
    g.appendChild(svg('text', { x: 12, y: (T + H - B) / 2, 'text-anchor': 'middle', transform: 'rotate(-90 12 ' + (T + H - B) / 2 + ')' }, 'cost (instructions)'));
    g.appendChild(svg('text', { x: L, y: 14 }, title));
    if (fit.model != null) {
      var d = '';
      for (var i = 0; i <= 80; i++) {
        var n = xmax * i / 80, y = fit.a + fit.b * modelF(fit.model, n);
        y = Math.max(0, Math.min(ymax * 1.05, y));
        d += (i ? 'L' : 'M') + X(n).toFixed(1) + ' ' + Y(y).toFixed(1);
      }
      g.appendChild(svg('path', { 'class': 'fit', d: d }));
    }
    pts.forEach(function (p) {
      if (p[4] > p[2]) g.appendChild(svg('line', { 'class': 'range', x1: X(p[0]), x2: X(p[0]), y1: Y(p[2]), y2: Y(p[4]) }));
      var c = svg('circle', { 'class': 'pt', cx: X(p[0]), cy: Y(p[3]), r: 3 });
      c.appendChild(svg('title', {}, 'size ' + p[0] + ': ' + p[1] + ' activations, cost min ' + p[2] + ', mean ' + (+p[3].toPrecision(6)) + ', max ' + p[4]));
      g.appendChild(c);
    });
    return g;
  }

  function fitText(f) {
    if (f.model == null) return 'no model (fewer than 3 sizes)';
    return 'cost ~ ' + (+f.a.toPrecision(4)) + ' + ' + (+f.b.toPrecision(4)) + ' ' + (f.model === '1' ? '' : '\u00b7 ' + f.model) + ', R\u00b2 ' + f.r2.toFixed(4);
  }

  function drawInputSize() {
    var is = A.inputsize;
    if (!is) return;
    var s = section('inputsize', 'Input size');
    s.appendChild(el('p', { cls: 'note', text: 'For each function, the cost of its activations (bytecode instructions, its callees included) against their input size: TRMS counts input that other threads and the outside world produced, RMS does not. The line is the fitted model.' }));
    var rows = is.functions.map(function (f) {
      return { name: f['function'], calls: f.calls, cost: f.cost, trms: f.trms, rms: f.rms, model: f.trms_fit.model == null ? '-' : f.trms_fit.model, r2: f.trms_fit.r2, f: f };
    });
    s.appendChild(sortableTable([
      { key: 'name', label: 'function' }, { key: 'calls', label: 'activations', num: true }, { key: 'cost', label: 'cost', num: true },
      { key: 'trms', label: 'TRMS (total)', num: true }, { key: 'rms', label: 'RMS (total)', num: true },
      { key: 'model', label: 'model (TRMS)' }, { key: 'r2', label: 'R\u00b2', num: true, fmt: function (r) { return r.model === '-' ? '-' : r.r2.toFixed(4); } }
    ], rows, { sort: 'cost', limit: TABLE_ROWS }));
    var TOP = 8;
    var plotted = is.functions.filter(function (f) { return f.trms_fit.points.length >= 2; }).slice(0, TOP);
    if (!plotted.length) { s.appendChild(el('p', { cls: 'note', text: 'No function ran with two or more input sizes: nothing to plot.' })); return; }
    s.appendChild(el('h3', { text: 'Cost against input size (' + plotted.length + ' functions)' }));
    plotted.forEach(function (f) {
      var same = JSON.stringify(f.trms_fit.points) === JSON.stringify(f.rms_fit.points);
      var box = el('div', { cls: 'plotbox' });
      box.appendChild(plot(f.trms_fit, f['function'], same ? 'input size (TRMS = RMS)' : 'input size (TRMS)'));
      box.appendChild(el('div', { cls: 'cap', text: 'TRMS: ' + fitText(f.trms_fit) }));
      s.appendChild(box);
      if (!same) {
        var b2 = el('div', { cls: 'plotbox' });
        b2.appendChild(plot(f.rms_fit, f['function'], 'input size (RMS)'));
        b2.appendChild(el('div', { cls: 'cap', text: 'RMS: ' + fitText(f.rms_fit) }));
        s.appendChild(b2);
      }
    });
  }

  /* ---- self-test -------------------------------------------------------------------------------- */

  /* Opened as report.html#selftest (tests/profile/run_html_tests.py), the page works its own
   * controls the way a person would (zoom, search, hover, reset, sort, select) and writes what
   * it saw into <pre id="selftest"> as JSON: {check: true/false}; a headless browser's dump
   * of the DOM then shows whether the interactive parts work. */
  function selfTest() {
    var r = {};
    var box = document.querySelector('#flame .flame');
    if (box) {
      var frames = box.querySelectorAll('.frame');
      r.frames = frames.length > 1;
      /* The first frame below the root that is a function (not a thread's). */
      var target = Array.prototype.filter.call(frames, function (f, i) { return i > 0 && !/^thread \d+$/.test(f.textContent); })[0];
      var name = target ? target.textContent : '';
      if (target) {
        target.dispatchEvent(new MouseEvent('mousemove', { clientX: 10, clientY: 10, bubbles: true }));
        r.hover = tooltip.style.display === 'block' && tooltip.textContent.indexOf(name) >= 0 && /%/.test(tooltip.textContent);
        target.dispatchEvent(new MouseEvent('mouseleave'));
        target.click();
        var z = Array.prototype.filter.call(box.querySelectorAll('.frame'), function (f) {
          return f.textContent === name && !/\bdim\b/.test(f.className);
        })[0];
        r.zoom = !!z && Math.abs(z.offsetWidth - box.clientWidth) <= 2 && z.offsetLeft === 0;
        var input = document.querySelector('#flame input[type=search]');
        input.value = name;
        input.dispatchEvent(new Event('input'));
        r.search = box.querySelectorAll('.frame.match').length > 0 && /^matched: /.test(document.querySelector('#flame .controls .note').textContent);
        input.value = '';
        input.dispatchEvent(new Event('input'));
        document.querySelector('#flame .controls button').click();
        r.reset = box.querySelectorAll('.frame').length === frames.length;
        var again = Array.prototype.filter.call(box.querySelectorAll('.frame'), function (f) { return f.textContent === name; })[0];
        again.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
        var zoomed = box.querySelectorAll('.frame.dim').length > 0;
        box.querySelector('.frame').dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
        r.keys = zoomed && box.querySelectorAll('.frame.dim').length === 0;
        var sel = document.querySelector('#flame .controls select');
        if (sel.querySelector('option[value=merged]')) {
          sel.value = 'merged';
          sel.dispatchEvent(new Event('change'));
          var texts = Array.prototype.map.call(box.querySelectorAll('.frame'), function (f) { return f.textContent; });
          r.merged = texts.length > 1 && !texts.some(function (t) { return /^thread \d+$/.test(t); });
          sel.value = 'all';
          sel.dispatchEvent(new Event('change'));
        }
      }
    }
    var cgTable = document.querySelector('#callgraph table');
    if (cgTable) {
      var names = function () { return Array.prototype.map.call(cgTable.querySelectorAll('tbody tr'), function (tr) { return tr.firstChild.textContent; }); };
      cgTable.querySelector('th').click(); /* by name, ascending */
      var got = names(), want = got.slice().sort();
      r.sort = got.length > 0 && JSON.stringify(got) === JSON.stringify(want);
      var row = cgTable.querySelectorAll('tbody tr')[got.length > 1 ? 1 : 0];
      row.click();
      r.select = document.querySelector('#callgraph .cg-detail h3').textContent === got[got.length > 1 ? 1 : 0];
    }
    document.body.appendChild(el('pre', { id: 'selftest', text: JSON.stringify(r) }));
  }

  /* ---- main -------------------------------------------------------------------------------------- */

  try {
    var script = (D.run && D.run.argv || []).filter(function (a, i) { return i > 0 && !/^-/.test(a); })[0];
    document.title = 'tandem profile' + (script ? ': ' + script : '');
    var nav = el('nav');
    app.appendChild(el('header', { cls: 'top' }, [el('h1', { text: document.title }), nav]));
    app.appendChild(mainEl);
    document.body.appendChild(tooltip);
    drawRun();
    drawFlame();
    drawCallGraph();
    drawMethodCount();
    drawPaths();
    drawCache();
    drawInputSize();
    var known = { methodcount: 1, callgraph: 1, calltree: 1, pathprof: 1, cachesim: 1, inputsize: 1 };
    (D.analyses || []).forEach(function (a) {
      if (known[a.analysis]) return;
      var s = section('raw-' + a.analysis, a.analysis);
      s.appendChild(el('pre', { text: JSON.stringify(a, null, 1).slice(0, 200000) }));
    });
    navLinks.forEach(function (a) { nav.appendChild(a); });
    document.documentElement.setAttribute('data-viewer', 'ready');
    if (location.hash === '#selftest') selfTest();
  } catch (e) {
    showError(e && e.stack ? e.stack : String(e));
  }
})();
