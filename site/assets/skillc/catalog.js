/* skillc docs site: filters and sorting on the "All skills" pages, without a server.
 *
 * The pages list every skill as static cards (PAGE_SIZE a page, so each stays small at any size);
 * here the reader filters all of them by text, collection (and below), tag, source, lint status and
 * size, and sorts them.  The data is the catalog (assets/skillc/catalog/index.json and its chunks),
 * loaded the first time a filter is used.  Everything is shown with text nodes.
 */
(function () {
  "use strict";
  var PAGE = 50;
  var script = document.currentScript;
  var form = document.getElementById("skillc-facets");
  var out = document.getElementById("skillc-f-results");
  if (!form || !out) return;
  var root = new URL(script.getAttribute("data-root") || ".", location.href);
  var base = new URL("assets/skillc/catalog/", root);
  var F = { id: 0, name: 1, description: 2, collection: 3, tags: 4, repository: 5, warnings: 6, size: 7, tokens: 8 };
  var head = null, rows = null, statusEl = document.getElementById("skillc-f-status");
  var field = function (name) { return document.getElementById("skillc-f-" + name); };

  function json(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status + " for " + url);
      return r.json();
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text).replace(/[\u202a-\u202e\u2066-\u2069]/g, function (c) {
      return "[U+" + c.charCodeAt(0).toString(16).toUpperCase() + "]";
    });
    return e;
  }
  function options(select, values) {
    values.forEach(function (v) { select.appendChild(el("option", null, v)).value = v; });
  }
  function size(n) {
    return n < 1024 ? n + " bytes" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(1) + " MiB";
  }
  function href(kind, path) {
    return new URL(kind + "/" + path.split("/").map(encodeURIComponent).join("/") + "/", root).href;
  }
  async function load() {
    if (rows) return rows;
    var chunks = await Promise.all(head.chunks.map(function (n) { return json(new URL(n, base).href); }));
    rows = [].concat.apply([], chunks.map(function (c) { return c.skills; }));
    return rows;
  }
  function wanted() {
    var text = field("text").value.trim().toLowerCase(), col = field("collection").value, tag = field("tag").value;
    var repo = field("repository").value, lint = field("lint").value, range = field("size").value.split("-");
    var lo = range[0] ? +range[0] : 0, hi = range[1] ? +range[1] : Infinity;
    return function (r) {
      return (!text || (r[F.name] + " " + r[F.id] + " " + r[F.description]).toLowerCase().indexOf(text) !== -1) &&
        (!col || r[F.collection] === col || r[F.collection].indexOf(col + "/") === 0) &&
        (!tag || r[F.tags].indexOf(tag) !== -1) && (!repo || r[F.repository] === repo) &&
        (!lint || (lint === "ok") === (r[F.warnings] === 0)) && (!range[0] && !range[1] || (r[F.size] >= lo && r[F.size] < hi));
    };
  }
  var ORDER = {
    id: function () { return 0; },
    name: function (a, b) { return a[F.name] < b[F.name] ? -1 : a[F.name] > b[F.name] ? 1 : 0; },
    size: function (a, b) { return b[F.size] - a[F.size]; },
    tokens: function (a, b) { return b[F.tokens] - a[F.tokens]; },
    warnings: function (a, b) { return b[F.warnings] - a[F.warnings]; },
  };
  function card(r) {
    var li = el("li", "skillc-card");
    var a = el("a", null, r[F.name]);
    a.href = href("skills", r[F.id]);
    var strong = el("strong");
    strong.appendChild(a);
    li.appendChild(strong);
    var lint = r[F.warnings] ? " ⚠ " + r[F.warnings] + " warning" + (r[F.warnings] === 1 ? "" : "s") : " ✓ ok";
    li.appendChild(document.createTextNode(lint + " · " + (r[F.collection] || "(top level)") + " · " + r[F.repository] +
      " · " + size(r[F.size]) + " · ≈" + r[F.tokens] + " tokens"));
    if (r[F.description]) li.appendChild(el("p", "skillc-card__description", r[F.description]));
    if (r[F.tags].length) {
      var tags = el("p", "skillc-card__tags");
      r[F.tags].forEach(function (t) { tags.appendChild(el("code", null, t)); tags.appendChild(document.createTextNode(" ")); });
      li.appendChild(tags);
    }
    return li;
  }
  function active() {
    return ["text", "collection", "tag", "repository", "lint", "size"].some(function (n) { return field(n).value; }) ||
      field("sort").value !== "id";
  }
  function showStatic(show) {
    var article = form.parentNode;
    for (var n = form.nextElementSibling; n; n = n.nextElementSibling) {
      if (n !== out && n.tagName !== "H1") n.hidden = !show;
    }
    out.hidden = show;
    article.classList.toggle("skillc-filtering", !show);
  }
  async function apply() {
    if (!active()) { showStatic(true); statusEl.textContent = ""; return; }
    statusEl.textContent = "Loading…";
    var all = await load();
    var hits = all.filter(wanted());
    var order = ORDER[field("sort").value] || ORDER.id;
    hits = hits.map(function (r, i) { return [r, i]; }).sort(function (a, b) { return order(a[0], b[0]) || a[1] - b[1]; })
      .map(function (p) { return p[0]; });
    statusEl.textContent = hits.length + " of " + all.length + " skills";
    out.textContent = "";
    var list = el("ul", "skillc-cards");
    var more = el("button", "md-button skillc-more", "More");
    more.type = "button";
    var shown = 0;
    function next() {
      hits.slice(shown, shown + PAGE).forEach(function (r) { list.appendChild(card(r)); });
      shown = Math.min(hits.length, shown + PAGE);
      more.hidden = shown >= hits.length;
      more.textContent = "More (" + (hits.length - shown) + " left)";
    }
    more.addEventListener("click", next);
    out.appendChild(list);
    out.appendChild(more);
    next();
    showStatic(false);
  }
  json(new URL("index.json", base).href).then(function (h) {
    head = h;
    options(field("collection"), h.collections);
    options(field("tag"), h.tags);
    options(field("repository"), h.repositories);
    var intro = form.parentNode.querySelector("h1 + p");
    if (intro) intro.after(form, out);
    form.hidden = false;
    form.addEventListener("input", function () { apply().catch(function (e) { statusEl.textContent = "Filter failed: " + e.message; }); });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); });
  });
})();
