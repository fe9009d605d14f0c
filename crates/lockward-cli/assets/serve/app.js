// The lockward dashboard: polls the JSON API of `lockward serve` and draws the registry's locks,
// the keys it does not know, and a timeline of each ledger lock's cycles.
//
// Every piece of text that comes from the server (application names, hosts, registry text) reaches
// the page through textContent or setAttribute, never as markup: a database client controls some
// of it. The CSP the server sends forbids inline script and style, so presentation is by class
// (app.css) and SVG presentation attributes.
'use strict';

(() => {
  const SVG = 'http://www.w3.org/2000/svg';

  // Host colours: twelve that stay apart, most of them Kelly's colours of maximum contrast (less
  // the reds, the greys and black: red means failed or unled, black lost, grey stopped), at least
  // CIE76 ΔE 20 from each other and from the status colours (tests/cli/browser.rs checks it).
  const PALETTE = [
    '#0067a5', '#f38400', '#008856', '#875692', '#a1caf1', '#f3c300',
    '#654522', '#e68fac', '#8db600', '#4f46e5', '#c2b280', '#2a9d8f',
  ];

  // What the legend fills a host-coloured mark with.
  const NEUTRAL = '#8a96a3';

  // Geometry of one timeline row, in pixels.
  const ROW_HEIGHT = 30;
  const MARK_Y = 10;
  const MARK_HEIGHT = 17;
  const AXIS_HEIGHT = 20;

  // What each status looks like, for the legend (the drawing itself is app.css's).
  const MARK_KINDS = [
    ['done', 'done (in its host\'s colour)'],
    ['running', 'running'],
    ['cancelled', 'cancelled'],
    ['failed', 'failed'],
    ['lost', 'lost'],
    ['unled', 'nobody led'],
    ['stopped', 'stopped on purpose (nobody led)'],
    ['foreign', 'led by another project (a collision)'],
    ['overlap', 'overlapping leaders'],
  ];

  const RANGES = { '5m': 'last 5 minutes', '15m': 'last 15 minutes', hour: 'last hour', day: 'last day' };
  const RANGE_MS = { '5m': 300e3, '15m': 900e3, hour: 3600e3, day: 86400e3 };

  // The steps an axis's ticks can take, in minutes; the finest that leaves each label its room.
  const TICK_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720];
  const TICK_LABEL_PX = 48;

  // The ledger is read whole once per range, then only from `since` on (what can still change),
  // and whole again this often: a transaction-mode cycle's row appears only when its job
  // commits, which can be after the page has drawn that cycle as nobody led.
  const LEDGER_WHOLE_EVERY_MS = 5 * 60e3;

  const byId = (id) => document.getElementById(id);

  const state = {
    status: null,
    range: 'hour',
    // The database shown, by name (`#database=NAME`); null: the server's first.
    database: null,
    // Whether the server shows several databases: null until /api/fleet said.
    fleet: null,
    timer: null,
    inflight: false,
    again: false,
    lastGood: null,
    hostColours: new Map(),
    lockRows: new Map(),
    unknownRows: new Map(),
    timelineRows: new Map(),
    scaleKey: '',
    ledger: null,
    // The last ledger answer merged, per range: { data, range, wholeAt }.
    ledgerCache: null,
    legendHosts: '',
  };

  // ---- small DOM helpers -------------------------------------------------------------------

  /** An HTML element with attributes (set with setAttribute) and children (strings as text). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }

  /** An SVG element with attributes. */
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    setAttrs(node, attrs);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    for (const name of Object.keys(attrs)) {
      const value = attrs[name];
      if (value !== null && value !== undefined && value !== false) {
        node.setAttribute(name, String(value));
      }
    }
  }

  /** Sets a node's text only when it differs, so unchanged refreshes touch nothing. */
  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  // ---- time formatting ---------------------------------------------------------------------

  const pad2 = (n) => (n < 10 ? '0' : '') + n;
  const pad3 = (n) => (n < 10 ? '00' : n < 100 ? '0' : '') + n;

  function clock(ms) {
    const d = new Date(ms);
    return pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
  }

  function clockMs(ms) {
    return clock(ms) + '.' + pad3(new Date(ms).getMilliseconds());
  }

  function day(ms) {
    const d = new Date(ms);
    return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate());
  }

  /** A held-since time: the clock alone when it is today, else with its date. */
  function sinceText(iso) {
    if (!iso) return '';
    const ms = Date.parse(iso);
    if (Number.isNaN(ms)) return iso;
    return day(ms) === day(Date.now()) ? clock(ms) : day(ms) + ' ' + clock(ms);
  }

  function duration(ms) {
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
    const minutes = Math.floor(ms / 60000);
    if (minutes < 60) return minutes + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
    return Math.floor(minutes / 60) + ' h ' + (minutes % 60) + ' min';
  }

  function periodText(seconds) {
    if (seconds === null || seconds === undefined) return 'period unknown';
    if (seconds % 3600 === 0) return 'every ' + seconds / 3600 + ' h';
    if (seconds % 60 === 0) return 'every ' + seconds / 60 + ' min';
    return 'every ' + seconds + ' s';
  }

  function plural(n, one, many) {
    return n + ' ' + (n === 1 ? one : many);
  }

  // ---- fetching ----------------------------------------------------------------------------

  async function getJson(path) {
    let response;
    try {
      response = await fetch(path, {
        credentials: 'same-origin',
        cache: 'no-store',
        headers: { Accept: 'application/json' },
      });
    } catch (error) {
      throw new Error(path + ': the server did not answer (' + error.message + ')');
    }
    const text = await response.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch (error) {
      if (response.ok) throw new Error(path + ': the answer is not JSON (' + error.message + ')');
    }
    if (!response.ok) {
      const message = body && typeof body.error === 'string' ? body.error : text.slice(0, 200);
      throw new Error(path + ': ' + response.status + ' ' + message);
    }
    return body;
  }

  // ---- the header --------------------------------------------------------------------------

  function showStatus(status) {
    setText(byId('project'), status.project || '');
    setText(byId('database'), status.database || '');
    setText(byId('version'), status.version || '');
    showLedgerState(status.ledger);
    document.title = 'lockward' + (status.project ? ' · ' + status.project : '');
  }

  /**
   * Whether the database has a ledger: /api/status says so once, at load; a ledger that appears
   * later (the first worker with .ledger(true) creates it) shows as soon as it has cycles.
   */
  function showLedgerState(present) {
    setText(byId('ledger-state'), present === true ? 'yes' : present === false ? 'none' : '?');
  }

  // ---- the registry table ------------------------------------------------------------------

  function keyText(key) {
    if (!key) return '';
    if (key.pair) return key.pair[0] + ',' + key.pair[1];
    return String(key.bigint);
  }

  function memberOf(row) {
    return row.key && row.key.pair ? row.key.pair[1] : null;
  }

  /** Who a foreign holder is, in words (the text `lockward live` prints). */
  function foreignText(foreign) {
    if (foreign.kind === 'project') {
      return 'project ' + foreign.project + '\'s worker ' + foreign.worker + ' (pid ' + foreign.pid + ')';
    }
    if (foreign.kind === 'worker') {
      return 'this project\'s worker ' + foreign.worker + ', of another lock (pid ' + foreign.pid + ')';
    }
    let text = foreign.application_name
      ? 'application "' + foreign.application_name + '"'
      : 'a session with no application name';
    if (foreign.client_addr) text += ' from ' + foreign.client_addr;
    return text + ' (pid ' + foreign.pid + ')';
  }

  function flagBadges(flags, lives) {
    const cell = el('td', { class: 'flags', 'data-label': 'flags' });
    for (const flag of flags) cell.append(el('span', { class: 'flag flag-' + flag }, flag), ' ');
    for (const live of lives) {
      if (live.foreign) cell.append(el('div', { class: 'foreign-who' }, foreignText(live.foreign)));
    }
    return cell;
  }

  /**
   * Who a waiting or contending session is, in a few words: a worker's host and pid (its lock
   * too when it is not `lock`, the one the key is registered to), else its application name.
   */
  function sessionText(session, lock) {
    const id = session.identity;
    if (id) {
      const named = id.lock + (id.member !== null && id.member !== undefined ? '/' + id.member : '');
      return (named === lock ? '' : named + '@') + id.host + ' (pid ' + id.pid + ')';
    }
    return (session.application_name || 'a session with no name') + ' (backend ' + session.pid + ')';
  }

  /**
   * Cells for the holders of one or more keys, one line per held key: the holder's project, lock
   * (and member), host, pid and since, parsed from a lockward worker's identity (the whole
   * application name, which PostgreSQL cuts at 63 bytes, is the cells' title); another session
   * shows its application name, client address and backend pid. Each cell has a label for the
   * narrow layout, where a row is a card.
   */
  function holderCells(lives, showMember) {
    const cell = (cls, label) => el('td', { class: cls, 'data-label': label });
    const project = cell('project', 'project');
    const lock = cell('mono holder', 'holder');
    const host = cell('mono host', 'host');
    const pid = cell('mono num pid', 'pid');
    const since = cell('mono since', 'since');
    const waiters = cell('mono waiters', 'waiters');
    for (const live of lives) {
      const member = memberOf(live);
      const prefix = showMember && member !== null ? '#' + member + ' ' : '';
      const holder = live.holder;
      const id = holder && holder.identity;
      const whole = holder ? holder.application_name || null : null;
      project.append(el('div', null, id ? id.project : holder ? '—' : ''));
      let who = '';
      if (id) who = id.lock + (id.member !== null && id.member !== undefined ? ' /' + id.member : '');
      else if (holder) who = holder.application_name || '(no application name)';
      lock.append(el('div', { title: whole, class: id ? null : 'raw' }, holder ? prefix + who : prefix + '—'));
      host.append(el('div', { title: holder && holder.client_addr ? 'client ' + holder.client_addr : null },
        id ? id.host : holder && holder.client_addr ? holder.client_addr : ''));
      pid.append(el('div', { title: holder ? 'server backend ' + holder.pid : null },
        holder ? String(id ? id.pid : holder.pid) : ''));
      since.append(el('div', { title: holder ? holder.since : null }, holder ? sinceText(holder.since) : ''));
      const own = live.constant
        ? live.constant + (member !== null && showMember ? '/' + member : '')
        : null;
      const waiting = (live.waiting || []).map((w) => sessionText(w, own));
      const contenders = (live.contenders || []).map((c) => sessionText(c, own) + ' contends');
      const line = el('div', {
        title: waiting.length || contenders.length
          ? 'sessions waiting for this key; contends: a worker that found it held by another worker'
          : null,
      });
      for (const text of waiting.concat(contenders)) line.append(el('div', { class: 'waiter' }, text));
      waiters.append(line);
    }
    const cells = [project, lock, host, pid, since, waiters];
    // The narrow layout leaves out a card's empty lines.
    for (const cell of cells) if (cell.textContent === '') cell.classList.add('empty-cell');
    return cells;
  }

  function lockRow(entry, lives) {
    const held = lives.some((live) => live.holder);
    const flags = [...new Set(lives.flatMap((live) => live.flags))];
    const classes = [held ? 'held' : 'free'];
    if (flags.length) classes.push('flagged');
    if (entry.kind === 'retired' || entry.kind === 'reserved') classes.push('inactive');
    const tr = el('tr', {
      'data-id': entry.id,
      'data-state': held ? 'held' : 'free',
      'data-flags': flags.join(' '),
      class: classes.join(' '),
    });
    tr.append(el('td', { class: 'mono id', 'data-label': 'id', title: 'id ' + entry.id },
      entry.literal || String(entry.id)));
    const name = el('td', {
      class: 'name',
      'data-label': 'constant',
      title: [entry.worker, ...(entry.defined_in || [])].filter(Boolean).join('\n') || null,
    });
    if (entry.constant) name.append(el('span', { class: 'mono' }, entry.constant));
    else if (entry.site) name.append(el('span', { class: 'mono site' }, entry.site));
    else name.append(el('span', { class: 'muted' }, '—'));
    if (entry.reason) name.append(' ', el('span', { class: 'muted reason' }, entry.reason));
    tr.append(name);
    tr.append(el('td', { class: 'owner', 'data-label': 'owner' }, entry.owner || '—'));
    const kind = el('td', { class: 'kind', 'data-label': 'kind' },
      el('span', { class: 'kind-' + entry.kind }, entry.kind));
    if (entry.key === 'family') kind.append(' ', el('span', { class: 'muted' }, 'family'));
    if (entry.source && entry.source !== 'registry') kind.append(' ', el('span', { class: 'muted' }, entry.source));
    tr.append(kind);
    const count = lives.filter((live) => live.holder).length;
    tr.append(el('td', { class: 'state', 'data-label': 'state' },
      el('span', { class: 'badge ' + (held ? 'badge-held' : 'badge-free') },
        held ? (count > 1 ? 'held ×' + count : 'held') : 'free')));
    tr.append(flagBadges(flags, lives));
    tr.append(...holderCells(lives, entry.key === 'family'));
    return tr;
  }

  function haystack(entry, lives) {
    const parts = [entry.literal, String(entry.id), entry.constant, entry.site, entry.owner,
      entry.kind, entry.worker, entry.reason, lives.length ? 'held' : 'free'];
    for (const live of lives) {
      parts.push(...live.flags);
      if (live.foreign) parts.push(foreignText(live.foreign));
      if (live.holder) {
        parts.push(String(live.holder.pid), live.holder.application_name, live.holder.client_addr);
        const id = live.holder.identity;
        if (id) parts.push(id.project, id.lock, id.host, String(id.pid));
      }
      for (const waiter of live.waiting || []) parts.push(waiter.application_name);
    }
    return parts.filter(Boolean).join(' ').toLowerCase();
  }

  /**
   * Brings `tbody` to `items` (each {key, sig, build}): rows whose signature is unchanged stay as
   * they are; changed ones are replaced, new ones inserted in order, gone ones removed.
   */
  function reconcile(tbody, cache, items) {
    const keep = new Set();
    let previous = null;
    for (const item of items) {
      keep.add(item.key);
      let cached = cache.get(item.key);
      if (!cached || cached.sig !== item.sig) {
        const tr = item.build();
        if (cached) cached.tr.replaceWith(tr);
        cached = { sig: item.sig, tr, haystack: item.haystack, held: item.held };
        cache.set(item.key, cached);
      }
      const expected = previous ? previous.nextSibling : tbody.firstChild;
      if (expected !== cached.tr) tbody.insertBefore(cached.tr, expected);
      previous = cached.tr;
    }
    for (const [key, cached] of cache) {
      if (!keep.has(key)) {
        cached.tr.remove();
        cache.delete(key);
      }
    }
  }

  /** Whether a live row is a key of another project's registry (`[[share]]`), not this one's. */
  function otherProjects(row) {
    return Boolean(row.project && state.status && state.status.project && row.project !== state.status.project);
  }

  /** Whether a live row has no entry in this registry: unknown, or another project's. */
  function outside(row) {
    return row.id === null || row.id === undefined || otherProjects(row);
  }

  function renderLocks(registry, live) {
    const byEntry = new Map();
    for (const row of live.locks) {
      if (outside(row)) continue;
      if (!byEntry.has(row.id)) byEntry.set(row.id, []);
      byEntry.get(row.id).push(row);
    }
    for (const rows of byEntry.values()) {
      rows.sort((a, b) => (memberOf(a) ?? -Infinity) - (memberOf(b) ?? -Infinity));
    }
    let held = 0;
    let flagged = 0;
    // A since time shows its date when not today: a new day redraws the rows that show one.
    const today = day(Date.now());
    const items = registry.locks.map((entry) => {
      const lives = byEntry.get(entry.id) || [];
      if (lives.some((l) => l.holder)) held += 1;
      if (lives.some((l) => l.flags.length)) flagged += 1;
      return {
        key: String(entry.id),
        sig: JSON.stringify([entry, lives, lives.length ? today : '']),
        haystack: haystack(entry, lives),
        held: lives.some((l) => l.holder),
        build: () => lockRow(entry, lives),
      };
    });
    reconcile(byId('locks').tBodies[0], state.lockRows, items);
    applyFilter();
    const parts = [plural(registry.locks.length, 'entry', 'entries'), held + ' held'];
    if (flagged) parts.push(flagged + ' flagged');
    setText(byId('locks-summary'), parts.join(' · '));
  }

  function applyFilter() {
    const words = byId('filter').value.toLowerCase().split(/\s+/).filter(Boolean);
    const heldOnly = byId('held-only').checked;
    for (const cached of state.lockRows.values()) {
      const show = (!heldOnly || cached.held) && words.every((w) => cached.haystack.includes(w));
      if (cached.tr.hidden === show) cached.tr.hidden = !show;
    }
  }

  function unknownRow(live) {
    const key = keyText(live.key);
    const classes = [live.holder ? 'held' : 'free'];
    if (live.flags.length) classes.push('flagged');
    const tr = el('tr', { 'data-key': key, 'data-project': live.project || null, class: classes.join(' ') });
    const cell = el('td', { class: 'mono id', 'data-label': 'key' },
      live.key.pair ? '(' + live.key.pair.join(', ') + ')' : key);
    if (otherProjects(live)) {
      cell.append(el('div', { class: 'shared-entry' },
        'project ' + live.project + (live.constant ? ' · ' + live.constant : live.kind ? ' · ' + live.kind : '')));
    } else if (live.well_known && live.well_known.length) {
      cell.append(el('div', { class: 'shared-entry well-known' },
        live.well_known.map((w) => w.holder).join(' or ')));
    }
    tr.append(cell);
    tr.append(flagBadges(live.flags, [live]));
    tr.append(...holderCells([live], false));
    return tr;
  }

  function renderUnknown(live) {
    const unknown = live.locks.filter(outside);
    const tbody = byId('unknown').tBodies[0];
    const today = day(Date.now());
    const items = unknown.map((row) => ({
      key: keyText(row.key),
      sig: JSON.stringify([row, today]),
      build: () => unknownRow(row),
    }));
    if (!items.length) {
      items.push({
        key: '',
        sig: 'empty',
        build: () => el('tr', { class: 'empty' },
          el('td', { colspan: 8 }, 'No key outside the registry is held or waited for.')),
      });
    }
    reconcile(tbody, state.unknownRows, items);
    setText(byId('unknown-summary'), unknown.length ? plural(unknown.length, 'key', 'keys') : '');
  }

  // ---- host colours ------------------------------------------------------------------------

  function hash(text) {
    let h = 2166136261;
    for (let i = 0; i < text.length; i += 1) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return h >>> 0;
  }

  /**
   * A host's colour, fixed for the life of the page: its hash picks a palette slot, the next free
   * one when that is taken, and past the palette a hue away from red.
   */
  function hostColour(host) {
    let colour = state.hostColours.get(host);
    if (colour) return colour;
    const used = new Set(state.hostColours.values());
    const start = hash(host) % PALETTE.length;
    for (let k = 0; k < PALETTE.length && !colour; k += 1) {
      const candidate = PALETTE[(start + k) % PALETTE.length];
      if (!used.has(candidate)) colour = candidate;
    }
    if (!colour) colour = 'hsl(' + (30 + (hash(host) % 300)) + ' 45% 45%)';
    state.hostColours.set(host, colour);
    return colour;
  }

  // ---- the legend --------------------------------------------------------------------------

  function swatch(attrs) {
    const box = svg('svg', { width: 14, height: 12, class: 'swatch', 'aria-hidden': 'true' });
    box.append(svg('rect', Object.assign({ x: 1, y: 1, width: 12, height: 10 }, attrs)));
    return box;
  }

  function renderLegend(hosts) {
    const key = hosts.join('\n');
    if (key !== state.legendHosts) {
      state.legendHosts = key;
      const group = byId('legend-hosts');
      group.replaceChildren();
      if (hosts.length) group.append(el('span', { class: 'legend-title' }, 'hosts'));
      for (const host of hosts) {
        group.append(el('span', { class: 'legend-item', 'data-host': host },
          swatch({ fill: hostColour(host), class: 'm' }), host));
      }
    }
    const marks = byId('legend-marks');
    if (!marks.firstChild) {
      marks.append(el('span', { class: 'legend-title' }, 'marks'));
      for (const [kind, label] of MARK_KINDS) {
        const item = el('span', { class: 'legend-item' });
        if (kind === 'overlap') {
          const box = svg('svg', { width: 14, height: 12, class: 'swatch', 'aria-hidden': 'true' });
          box.append(svg('polygon', { points: '2,1 12,1 7,10', class: 'overlap-marker' }));
          item.append(box);
        } else {
          // Led marks take their host's colour; the legend shows their shape in a neutral one.
          item.append(swatch({ fill: NEUTRAL, class: 'm ' + kind }));
        }
        item.append(label);
        marks.append(item);
      }
    }
  }

  // ---- timelines ---------------------------------------------------------------------------

  function plotWidth() {
    const plot = document.querySelector('#axis .tl-plot');
    // The content box: the plot's padding is not the drawing's to take.
    const style = getComputedStyle(plot);
    const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    return Math.max(100, Math.floor(plot.clientWidth - padding));
  }

  /**
   * The ticks of an axis over [from, to) that is `width` pixels wide, aligned on the local clock:
   * the finest step whose labels do not overprint (a phone's axis gets fewer, not crowded ones).
   */
  function ticks(fromMs, toMs, width) {
    const span = toMs - fromMs;
    const fit = Math.max(2, Math.floor(width / TICK_LABEL_PX));
    const stepMinutes = TICK_STEPS.find((step) => span / (step * 60e3) <= fit) || TICK_STEPS[TICK_STEPS.length - 1];
    const first = new Date(fromMs);
    first.setSeconds(0, 0);
    if (stepMinutes < 60) {
      first.setMinutes(Math.ceil(first.getMinutes() / stepMinutes) * stepMinutes);
    } else {
      first.setMinutes(0);
      const hours = stepMinutes / 60;
      first.setHours(Math.ceil(first.getHours() / hours) * hours);
    }
    const out = [];
    for (let t = first.getTime(); t < toMs; t += stepMinutes * 60e3) {
      if (t >= fromMs) out.push(t);
    }
    return out;
  }

  function renderAxis(fromMs, toMs, width, sx) {
    const box = byId('axis-svg');
    box.setAttribute('width', width);
    box.setAttribute('viewBox', '0 0 ' + width + ' ' + AXIS_HEIGHT);
    const nodes = [];
    const list = ticks(fromMs, toMs, width);
    for (const t of list) {
      const x = (t - fromMs) * sx;
      nodes.push(svg('line', { x1: x, x2: x, y1: AXIS_HEIGHT - 5, y2: AXIS_HEIGHT, class: 'tick' }));
      // A label at either edge is drawn inside the axis, not cut in half.
      const anchor = x < 16 ? 'start' : x > width - 16 ? 'end' : 'middle';
      const label = svg('text', { x, y: AXIS_HEIGHT - 8, class: 'tick-label', 'text-anchor': anchor });
      const d = new Date(t);
      label.textContent = pad2(d.getHours()) + ':' + pad2(d.getMinutes());
      nodes.push(label);
    }
    box.replaceChildren(...nodes);
    const offset = -new Date(toMs).getTimezoneOffset();
    const sign = offset < 0 ? '−' : '+';
    const zone = offset === 0 ? 'UTC' : 'UTC' + sign + pad2(Math.floor(Math.abs(offset) / 60)) + ':' + pad2(Math.abs(offset) % 60);
    setText(byId('axis-label'), RANGES[state.range] + ', local time (' + zone + ')');
    return list;
  }

  function createTimelineRow(lock) {
    const section = el('section', { class: 'tl-row', 'data-lock-key': lock.lock_key });
    const head = el('div', { class: 'tl-head' });
    const title = el('div', { class: 'tl-title' });
    const key = el('span', { class: 'mono tl-key' });
    const name = el('span', { class: 'mono tl-name' });
    title.append(key, ' ', name);
    const meta = el('div', { class: 'tl-meta' });
    const chips = el('div', { class: 'tl-chips' });
    head.append(title, meta, chips);
    const plot = el('div', { class: 'tl-plot' });
    const box = svg('svg', { height: ROW_HEIGHT, class: 'tl-svg', role: 'img' });
    const grid = svg('g', { class: 'grid' });
    const shift = svg('g', { class: 'shift' });
    const marks = svg('g', { class: 'marks' });
    const markers = svg('g', { class: 'markers' });
    shift.append(marks, markers);
    box.append(grid, shift);
    plot.append(box);
    section.append(head, plot);
    return {
      section, key, name, meta, chips, box, grid, shift, marks, markers,
      originMs: 0, period: undefined, cycles: new Map(), generation: 0, chipsSig: '',
    };
  }

  /** The hover text of one cycle. */
  function cycleTitle(cycle, startMs, endMs, previous) {
    const lines = [day(startMs) + ' ' + clock(startMs) + ' – ' + clock(endMs) + '  ' + cycle.status];
    if (cycle.status === 'unled') {
      lines.push('nobody led this cycle');
      return lines.join('\n');
    }
    if (cycle.status === 'stopped') {
      lines.push('nobody led this cycle: the lock\'s last leader had stopped on purpose' +
        (previous && previous.stopped_at ? ' at ' + clockMs(Date.parse(previous.stopped_at)) : ''));
      return lines.join('\n');
    }
    if (cycle.status === 'foreign') {
      lines.push('COLLISION: a worker of project ' + (cycle.project ?? '?') +
        ' led this cycle on this lock\'s key; this lock\'s job did not run');
    }
    lines.push('host ' + (cycle.host ?? '?') + ' · pid ' + (cycle.pid ?? '?') +
      ' · fencing token ' + (cycle.fencing_token ?? '?'));
    const started = cycle.started_at ? Date.parse(cycle.started_at) : null;
    const finished = cycle.finished_at ? Date.parse(cycle.finished_at) : null;
    let times = 'started ' + (started !== null ? clockMs(started) : '?');
    times += finished !== null ? ' · finished ' + clockMs(finished) : ' · not finished';
    if (started !== null && finished !== null) times += ' (' + duration(finished - started) + ')';
    lines.push(times);
    if (cycle.overlaps_previous) {
      let text = 'OVERLAP: led while the previous leader';
      if (previous && previous.host) text += ' (' + previous.host + ', pid ' + previous.pid + ')';
      text += previous && previous.finished_at
        ? ' had not finished (it finished ' + clockMs(Date.parse(previous.finished_at)) + ')'
        : ' was still running';
      lines.push(text);
    }
    if (cycle.detail) lines.push((cycle.status === 'failed' ? 'error: ' : '') + cycle.detail);
    if (cycle.stopped_at) lines.push('its leader then stopped on purpose, at ' + clockMs(Date.parse(cycle.stopped_at)));
    if (cycle.application_name) lines.push(cycle.application_name);
    return lines.join('\n');
  }

  function markClass(cycle) {
    let cls = 'm ' + cycle.status;
    if (cycle.overlaps_previous) cls += ' overlap';
    return cls;
  }

  /** Updates one row to `lock`: only cycles that are new or changed get new nodes. */
  function updateTimelineRow(row, lock, fromMs, toMs, sx, tickList) {
    if (row.period !== lock.period_seconds) {
      row.period = lock.period_seconds;
      row.marks.replaceChildren();
      row.markers.replaceChildren();
      row.cycles.clear();
      row.originMs = fromMs;
    }
    setText(row.key, lock.lock_key);
    setText(row.name, lock.constant || (lock.id === null ? 'not in the registry' : ''));
    row.name.classList.toggle('unknown', lock.id === null);
    const meta = [lock.owner, lock.kind, periodText(lock.period_seconds)].filter(Boolean);
    setText(row.meta, meta.join(' · '));

    const periodMs = lock.period_seconds ? lock.period_seconds * 1000 : null;
    const counts = {
      led: 0, unled: 0, stopped: 0, foreign: 0, failed: 0, lost: 0, running: 0, cancelled: 0, overlaps: 0,
    };
    const fragment = document.createDocumentFragment();
    const markerFragment = document.createDocumentFragment();
    // Every cycle seen in this update gets the row's new generation; the others are gone.
    const generation = (row.generation += 1);
    const cycles = lock.cycles;
    let previousLed = null;
    for (let i = 0; i < cycles.length; i += 1) {
      const cycle = cycles[i];
      const start = cycle.cycle_start;
      const unledOrStopped = cycle.status === 'unled' || cycle.status === 'stopped';
      if (unledOrStopped || cycle.status === 'foreign') counts[cycle.status] += 1;
      else counts.led += 1;
      if (!unledOrStopped && cycle.status !== 'foreign' && cycle.status in counts) {
        counts[cycle.status] += 1;
      }
      if (cycle.overlaps_previous) counts.overlaps += 1;
      // Without a period a mark ends where the next cycle starts (or the row ends).
      const next = periodMs ? '' : i + 1 < cycles.length ? cycles[i + 1].cycle_start : cycle.finished_at || 'now';
      const sig = cycle.status + '|' + cycle.host + '|' + cycle.pid + '|' + cycle.fencing_token + '|' +
        cycle.started_at + '|' + cycle.finished_at + '|' + cycle.overlaps_previous + '|' +
        cycle.application_name + '|' + cycle.project + '|' + cycle.detail + '|' + cycle.stopped_at + '|' +
        next + '|' + (previousLed ? previousLed.finished_at + '|' + previousLed.stopped_at : '');
      const cached = row.cycles.get(start);
      if (cached && cached.sig === sig && next !== 'now') {
        cached.generation = generation;
        if (cycle.status !== 'unled' && cycle.status !== 'stopped') previousLed = cycle;
        continue;
      }
      if (cached) {
        cached.rect.remove();
        if (cached.marker) cached.marker.remove();
      }
      const startMs = Date.parse(start);
      let endMs;
      if (periodMs) endMs = startMs + periodMs;
      else if (next === 'now') endMs = toMs;
      else endMs = Date.parse(next);
      const x = (startMs - row.originMs) * sx;
      const w = (endMs - startMs) * sx;
      const problem = (cycle.status !== 'done' && cycle.status !== 'stopped') || cycle.overlaps_previous;
      const width = w > 4 ? w - 1 : Math.max(w, problem ? 2 : 1);
      const rect = svg('rect', {
        x: x.toFixed(2), y: MARK_Y, width: width.toFixed(2), height: MARK_HEIGHT,
        class: markClass(cycle),
        fill: cycle.host && cycle.status !== 'foreign' ? hostColour(cycle.host) : null,
        'data-status': cycle.status,
        'data-host': cycle.host ?? '',
        'data-cycle-start': start,
        'data-overlap': cycle.overlaps_previous ? 'true' : null,
      });
      const title = svg('title');
      title.textContent = cycleTitle(cycle, startMs, endMs, previousLed);
      rect.append(title);
      fragment.append(rect);
      let marker = null;
      if (cycle.overlaps_previous) {
        const cx = x + width / 2;
        marker = svg('polygon', {
          points: (cx - 5).toFixed(1) + ',0 ' + (cx + 5).toFixed(1) + ',0 ' + cx.toFixed(1) + ',8',
          class: 'overlap-marker',
          'data-cycle-start': start,
        });
        const markerTitle = svg('title');
        markerTitle.textContent = title.textContent;
        marker.append(markerTitle);
        markerFragment.append(marker);
      }
      row.cycles.set(start, { sig, rect, marker, generation });
      if (cycle.status !== 'unled' && cycle.status !== 'stopped') previousLed = cycle;
    }
    for (const [start, cached] of row.cycles) {
      if (cached.generation !== generation) {
        cached.rect.remove();
        if (cached.marker) cached.marker.remove();
        row.cycles.delete(start);
      }
    }
    row.marks.append(fragment);
    row.markers.append(markerFragment);
    row.shift.setAttribute('transform', 'translate(' + ((row.originMs - fromMs) * sx).toFixed(2) + ',0)');

    const grid = tickList.map((t) => {
      const x = ((t - fromMs) * sx).toFixed(1);
      return svg('line', { x1: x, x2: x, y1: 0, y2: ROW_HEIGHT, class: 'gridline' });
    });
    row.grid.replaceChildren(...grid);

    row.section.setAttribute('data-overlaps', counts.overlaps);
    row.section.setAttribute('data-unled', counts.unled);
    row.section.setAttribute('data-stopped', counts.stopped);
    row.section.setAttribute('data-foreign', counts.foreign);
    row.section.classList.toggle('has-overlap', counts.overlaps > 0);
    row.box.setAttribute('aria-label', lock.lock_key + ': ' + counts.led + ' cycles led, ' +
      counts.unled + ' nobody led, ' + counts.stopped + ' stopped on purpose, ' + counts.foreign + ' led by another project, ' +
      counts.failed + ' failed, ' + counts.lost + ' lost, ' +
      counts.overlaps + ' overlapping');
    const chipsSig = JSON.stringify(counts);
    if (chipsSig !== row.chipsSig) {
      row.chipsSig = chipsSig;
      const chips = [el('span', { class: 'chip' }, counts.led + ' led')];
      if (counts.running) chips.push(el('span', { class: 'chip chip-running' }, counts.running + ' running'));
      if (counts.cancelled) chips.push(el('span', { class: 'chip chip-cancelled' }, counts.cancelled + ' cancelled'));
      if (counts.unled) chips.push(el('span', { class: 'chip chip-unled' }, counts.unled + ' nobody led'));
      if (counts.stopped) chips.push(el('span', { class: 'chip chip-stopped' }, counts.stopped + ' stopped'));
      if (counts.foreign) {
        chips.push(el('span', { class: 'chip chip-foreign' }, counts.foreign + ' led by another project'));
      }
      if (counts.failed) chips.push(el('span', { class: 'chip chip-failed' }, counts.failed + ' failed'));
      if (counts.lost) chips.push(el('span', { class: 'chip chip-lost' }, counts.lost + ' lost'));
      if (counts.overlaps) {
        chips.push(el('span', { class: 'chip chip-overlap' }, plural(counts.overlaps, 'overlap', 'overlaps')));
      }
      row.chips.replaceChildren(...chips);
    }
  }

  function renderTimelines(ledger) {
    state.ledger = ledger;
    if (ledger.locks.length && state.status && !state.status.ledger) {
      state.status.ledger = true;
      showLedgerState(true);
    }
    const fromMs = Date.parse(ledger.from);
    const toMs = Date.parse(ledger.to);
    const container = byId('timelines');
    const width = plotWidth();
    const sx = width / Math.max(1, toMs - fromMs);
    // Marks are drawn at a fixed scale and shifted as time passes; a new scale redraws them all.
    const scaleKey = width + '|' + Math.round((toMs - fromMs) / 1000);
    if (scaleKey !== state.scaleKey) {
      state.scaleKey = scaleKey;
      for (const row of state.timelineRows.values()) row.section.remove();
      state.timelineRows.clear();
    }
    const hosts = [...new Set(ledger.locks.flatMap((lock) => lock.cycles.map((c) => c.host)).filter(Boolean))].sort();
    for (const host of hosts) hostColour(host);
    renderLegend(hosts);
    const tickList = renderAxis(fromMs, toMs, width, sx);

    const keep = new Set();
    let previous = null;
    let cycles = 0;
    let overlaps = 0;
    let unled = 0;
    for (const lock of ledger.locks) {
      keep.add(lock.lock_key);
      let row = state.timelineRows.get(lock.lock_key);
      if (!row) {
        row = createTimelineRow(lock);
        row.originMs = fromMs;
        row.box.setAttribute('width', width);
        state.timelineRows.set(lock.lock_key, row);
      }
      updateTimelineRow(row, lock, fromMs, toMs, sx, tickList);
      const expected = previous ? previous.nextSibling : container.firstChild;
      if (expected !== row.section) container.insertBefore(row.section, expected);
      previous = row.section;
      cycles += lock.cycles.length;
      overlaps += Number(row.section.getAttribute('data-overlaps'));
      unled += Number(row.section.getAttribute('data-unled'));
    }
    for (const [key, row] of state.timelineRows) {
      if (!keep.has(key)) {
        row.section.remove();
        state.timelineRows.delete(key);
      }
    }
    const empty = byId('timelines-empty');
    empty.hidden = ledger.locks.length > 0;
    if (!ledger.locks.length) {
      setText(empty, state.status && !state.status.ledger
        ? 'This database has no ledger. Workers record their cycles in one with .ledger(true) or lockward run --ledger.'
        : 'No cycle was recorded in the ' + RANGES[state.range] + '.');
    }
    const summary = [];
    if (ledger.locks.length) {
      summary.push(plural(ledger.locks.length, 'lock', 'locks'), plural(cycles, 'cycle', 'cycles'));
      if (unled) summary.push(unled + ' nobody led');
      if (overlaps) summary.push(plural(overlaps, 'overlap', 'overlaps'));
    }
    setText(byId('ledger-summary'), summary.join(' · '));
  }

  // ---- the ledger, read incrementally -------------------------------------------------------

  // How far before the last answer's end a read goes back at least: a row is claimed just after
  // its boundary, as stamped by its host's clock, which may be behind the server's.
  const LEDGER_LOOKBACK_MS = 60e3;

  /**
   * The time from which cycles may have changed since `data` was read: a boundary ends up
   * nobody led only once its period has passed, and a late host claims a cycle up to a period
   * after its boundary (two periods allow for hosts' clock skew); a running cycle is read again
   * until it ends.
   */
  function changedSince(data) {
    const toMs = Date.parse(data.to);
    let since = toMs - LEDGER_LOOKBACK_MS;
    for (const lock of data.locks) {
      const periodMs = (Number(lock.period_seconds) || 0) * 1000;
      since = Math.min(since, toMs - 2 * periodMs);
      for (const cycle of lock.cycles) {
        if (cycle.status === 'running') since = Math.min(since, Date.parse(cycle.cycle_start));
      }
    }
    return since;
  }

  /** `answer` (cycles from its `from` on) laid over the cached cycles before it, within the range. */
  function mergeLedger(cached, answer, range) {
    const startMs = Date.parse(answer.to) - RANGE_MS[range];
    const answerFromMs = Date.parse(answer.from);
    const old = new Map(cached.locks.map((lock) => [lock.lock_key, lock.cycles]));
    return {
      from: new Date(startMs).toISOString(),
      to: answer.to,
      locks: answer.locks.map((lock) => {
        const kept = (old.get(lock.lock_key) || []).filter((cycle) => {
          const ms = Date.parse(cycle.cycle_start);
          return ms >= startMs && ms < answerFromMs;
        });
        return Object.assign({}, lock, { cycles: kept.concat(lock.cycles) });
      }),
    };
  }

  /** The ledger of `range` as a whole read would answer it, fetching only what may have changed. */
  async function ledgerFor(range) {
    const base = api('/api/ledger') + (state.database ? '&' : '?') + 'range=' + encodeURIComponent(range);
    const cache = state.ledgerCache;
    const whole = async () => {
      const data = await getJson(base);
      state.ledgerCache = { range, data, wholeAt: Date.now() };
      byId('status').setAttribute('data-ledger-read', 'whole');
      return data;
    };
    if (!cache || cache.range !== range || Date.now() - cache.wholeAt > LEDGER_WHOLE_EVERY_MS) {
      return whole();
    }
    const since = new Date(changedSince(cache.data)).toISOString();
    const answer = await getJson(base + '&since=' + encodeURIComponent(since));
    // A lock new to the ledger may have cycles before `since`: read it all.
    const known = new Set(cache.data.locks.map((lock) => lock.lock_key));
    if (answer.locks.some((lock) => !known.has(lock.lock_key))) return whole();
    const data = mergeLedger(cache.data, answer, range);
    if (state.ledgerCache === cache) state.ledgerCache = { range, data, wholeAt: cache.wholeAt };
    byId('status').setAttribute('data-ledger-read', 'since');
    return data;
  }

  // ---- a fleet of databases ---------------------------------------------------------------

  /** `path` of the API for the database shown. */
  function api(path) {
    return state.database ? path + '?database=' + encodeURIComponent(state.database) : path;
  }


  function keepInAddress() {
    const hash = new URLSearchParams();
    hash.set('range', state.range);
    if (state.database) hash.set('database', state.database);
    history.replaceState(null, '', '#' + hash.toString());
  }

  /**
   * One row per database: up or down (with why), and what it holds; the one shown marked. The
   * first answer also says whether there is a fleet at all: with one database the panel and the
   * chooser stay hidden and /api/fleet is not asked again. (It does not wait for /api/status,
   * which fails while the database shown is down: the other databases are still shown.)
   */
  function renderFleet(answer) {
    const fleet = answer.databases;
    if (state.fleet === null) {
      state.fleet = fleet.length > 1;
      byId('database-pick').hidden = !state.fleet;
      byId('fleet-panel').hidden = !state.fleet;
      const choice = byId('database-choice');
      choice.replaceChildren(...fleet.map((database) => el('option', { value: database.name }, database.name)));
      choice.value = state.database || fleet[0].name;
    }
    if (!state.fleet) return;
    const shown = state.database || fleet[0].name;
    const rows = answer.databases.map((database) => {
      const tr = el('tr', {
        'data-database': database.name,
        'data-up': database.up ? 'true' : 'false',
        class: (database.up ? 'held' : 'flagged down') + (database.name === shown ? ' shown' : ''),
      });
      tr.append(el('td', { class: 'mono name', 'data-label': 'database', title: database.target },
        database.name + (database.name === shown ? ' (shown)' : '')));
      tr.append(el('td', { class: 'state', 'data-label': 'state' },
        el('span', { class: 'badge ' + (database.up ? 'badge-held' : 'badge-down') }, database.up ? 'up' : 'down')));
      tr.append(el('td', { class: 'mono num', 'data-label': 'held' }, database.up ? String(database.held) : '—'));
      tr.append(el('td', { class: 'mono num', 'data-label': 'flagged' }, database.up ? String(database.flagged) : '—'));
      tr.append(el('td', { class: 'mono num', 'data-label': 'waiting' }, database.up ? String(database.waiting) : '—'));
      tr.append(el('td', { class: 'error-text', 'data-label': 'error' }, database.error || ''));
      return tr;
    });
    byId('fleet').tBodies[0].replaceChildren(...rows);
    const down = answer.databases.filter((database) => !database.up).length;
    setText(byId('fleet-summary'), plural(answer.databases.length, 'database', 'databases') +
      (down ? ' · ' + down + ' down' : ''));
  }

  // ---- refreshing --------------------------------------------------------------------------

  function showError(error) {
    const banner = byId('error');
    const when = clock(Date.now());
    let text = 'Refresh failed at ' + when + ': ' + error.message + '.';
    text += state.lastGood ? ' Showing what was read at ' + clock(state.lastGood) + '.' : '';
    text += ' Retrying every ' + interval() / 1000 + ' s.';
    setText(banner, text);
    banner.hidden = false;
    const status = byId('status');
    setText(status, 'refresh failed ' + when);
    status.classList.add('failing');
  }

  function interval() {
    const seconds = state.status && Number(state.status.interval_seconds);
    return seconds > 0 ? seconds * 1000 : 2000;
  }

  function schedule(delay) {
    clearTimeout(state.timer);
    if (document.visibilityState === 'hidden') return;
    state.timer = setTimeout(refresh, delay);
  }

  async function refresh() {
    clearTimeout(state.timer);
    if (state.inflight) {
      state.again = true;
      return;
    }
    state.inflight = true;
    state.again = false;
    const range = state.range;
    for (const name of ['lockward-refresh-start', 'lockward-refresh-fetched', 'lockward-refresh-end']) {
      performance.clearMarks(name);
    }
    performance.clearMeasures('lockward-refresh');
    performance.clearMeasures('lockward-render');
    performance.mark('lockward-refresh-start');
    try {
      // A fleet: every database's state beside the one shown, read with the rest.
      const fleetRead = state.fleet === false ? Promise.resolve() : getJson('/api/fleet').then(renderFleet);
      if (!state.status) {
        // Its failure leaves the fleet's read to finish and be drawn.
        state.status = await getJson(api('/api/status')).catch(async (error) => {
          await fleetRead.catch(() => {});
          throw error;
        });
        showStatus(state.status);
      }
      // Each part is drawn from what answered: a failing ledger read leaves the live table
      // fresh, and a part that failed keeps what it showed, under the banner.
      const [live, registry, ledger, fleet] = await Promise.allSettled([
        getJson(api('/api/live')),
        getJson('/api/registry'),
        ledgerFor(range),
        fleetRead,
      ]);
      if (range !== state.range) {
        state.again = true;
        return;
      }
      performance.mark('lockward-refresh-fetched');
      if (live.status === 'fulfilled' && registry.status === 'fulfilled') {
        renderLocks(registry.value, live.value);
        renderUnknown(live.value);
      }
      if (ledger.status === 'fulfilled') renderTimelines(ledger.value);
      const failed = [live, registry, ledger, fleet].filter((part) => part.status === 'rejected');
      if (failed.length) throw new Error(failed.map((part) => part.reason.message).join('; '));
      performance.mark('lockward-refresh-end');
      const measure = performance.measure('lockward-refresh', 'lockward-refresh-start', 'lockward-refresh-end');
      const render = performance.measure('lockward-render', 'lockward-refresh-fetched', 'lockward-refresh-end');
      done(measure.duration, render.duration);
    } catch (error) {
      showError(error);
    } finally {
      state.inflight = false;
      if (state.again) refresh();
      else schedule(interval());
    }
  }

  /** A good refresh: `ms` from its first fetch to the DOM updated, `renderMs` of that drawing. */
  function done(ms, renderMs) {
    state.lastGood = Date.now();
    byId('error').hidden = true;
    const status = byId('status');
    status.classList.remove('failing');
    status.removeAttribute('data-frame-ms');
    status.setAttribute('data-refreshed-at', new Date(state.lastGood).toISOString());
    status.setAttribute('data-refresh-ms', ms.toFixed(1));
    status.setAttribute('data-render-ms', renderMs.toFixed(1));
    setText(status, 'updated ' + clock(state.lastGood) + ' in ' + Math.round(ms) + ' ms · every ' + interval() / 1000 + ' s');
    // When the browser has drawn the result: the next frame, then the task after it.
    const startedAt = performance.getEntriesByName('lockward-refresh-start', 'mark')[0];
    requestAnimationFrame(() => setTimeout(() => {
      if (startedAt) status.setAttribute('data-frame-ms', (performance.now() - startedAt.startTime).toFixed(1));
    }, 0));
  }

  function start() {
    const axis = el('div', { class: 'tl-row tl-axis', id: 'axis' },
      el('div', { class: 'tl-head', id: 'axis-label' }),
      el('div', { class: 'tl-plot' }));
    axis.lastChild.append(svg('svg', { id: 'axis-svg', height: AXIS_HEIGHT, class: 'axis-svg' }));
    const timelines = byId('timelines');
    timelines.before(axis);
    timelines.after(el('p', { id: 'timelines-empty', class: 'empty-note', hidden: true }));

    // The range and the database are kept in the address (#range=day&database=NAME), so a
    // bookmark or a reload keeps them.
    const select = byId('range');
    const hash = new URLSearchParams(location.hash.slice(1));
    const fromHash = hash.get('range');
    state.range = fromHash in RANGES ? fromHash : select.value in RANGES ? select.value : 'hour';
    state.database = hash.get('database') || null;
    select.value = state.range;
    select.addEventListener('change', () => {
      state.range = select.value in RANGES ? select.value : 'hour';
      keepInAddress();
      refresh();
    });
    // Another database is another page's worth of state: the page loads again on it.
    byId('database-choice').addEventListener('change', (event) => {
      state.database = event.target.value;
      keepInAddress();
      location.reload();
    });
    byId('filter').addEventListener('input', applyFilter);
    byId('held-only').addEventListener('change', applyFilter);
    let resizeTimer = null;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        if (state.ledger) renderTimelines(state.ledger);
      }, 150);
    });
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') refresh();
      else clearTimeout(state.timer);
    });
    refresh();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
