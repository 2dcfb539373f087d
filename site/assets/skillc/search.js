/* skillc docs site: search, in the header of every page and on the Search page.
 *
 * Skills: BM25 over the bundle's own index (api/index/, read by api/index/skillc-index.js, which
 * fetches the header, the document lengths and only the shards of the query's terms): the ranking
 * of `skillc search`, every hit, shown a page at a time.  Each shown hit's ID, name and description
 * snippet come from the index's document chunk that holds it (api/index/docs-NNN.json, fetched
 * for the hits shown), with the query's terms highlighted.  The Search page adds collections (api/skill-collections.json)
 * and, when the bundle has a snapshot, memories.
 * Everything is shown with text nodes: nothing from the bundle is ever parsed as HTML.
 */
(function () {
  "use strict";
  var PAGE = 10; // hits a page, in the header box and on the Search page
  var box = document.querySelector(".skillc-qs");
  if (!box || typeof SkillcIndex === "undefined") return;
  var root = new URL(box.getAttribute("data-root") || ".", location.href);
  var cache = {};

  function once(key, make) {
    if (!cache[key]) cache[key] = make();
    return cache[key];
  }
  function json(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status + " for " + url);
      return r.json();
    });
  }
  function index() {
    return once("index", function () { return SkillcIndex.load(new URL("api/index/", root).href); });
  }
  function skillHref(id) {
    return new URL("skills/" + id.split("/").map(encodeURIComponent).join("/") + "/", root).href;
  }
  function collectionHref(path) {
    return new URL("collections/" + path.split("/").map(encodeURIComponent).join("/") + "/", root).href;
  }
  function visible(text) {
    // (bidirectional controls shown as code points: "\u202eevil" would read "live"; markdown_safe.py does the same)
    return String(text).replace(/[\u202a-\u202e\u2066-\u2069]/g, function (c) {
      return "[U+" + c.charCodeAt(0).toString(16).toUpperCase() + "]";
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = visible(text);
    return e;
  }
  /* `text` into `parent` with every query token marked (the index's tokenizer: ASCII runs lower-cased,
   * any other letter or digit a token of its own). */
  function highlighted(parent, text, terms) {
    var parts = visible(text).split(/([A-Za-z0-9]+|[^\x00-\x7f])/);
    var plain = "";
    function flush() { if (plain) { parent.appendChild(document.createTextNode(plain)); plain = ""; } }
    for (var i = 0; i < parts.length; i++) {
      var p = parts[i];
      if (i % 2 === 1 && terms.has(p.toLowerCase())) {
        flush();
        parent.appendChild(el("mark", null, p));
      } else {
        plain += p;
      }
    }
    flush();
    return parent;
  }
  function hitItem(h, r, terms) {
    var li = el("li", "skillc-hit");
    var a = el("a", "skillc-hit__name");
    a.href = skillHref(h.id);
    highlighted(a, h.name, terms);
    li.appendChild(a);
    li.appendChild(el("span", "skillc-hit__id", " " + h.id));
    if (r && r[2]) li.appendChild(highlighted(el("p", "skillc-hit__snippet"), r[2], terms));
    return li;
  }
  /* Every hit of `q`, best first (the ranking of `skillc search`). */
  async function skillHits(q) {
    var idx = await index();
    return idx.search(q, idx.N, { documents: false });  // IDs, names and snippets only for the hits shown
  }
  /* Hits [from, from + PAGE) of `hits` as list items, with their snippets. */
  async function page(hits, from, terms) {
    var slice = hits.slice(from, from + PAGE);
    var idx = await index();
    var docs = await Promise.all(slice.map(function (h) { return idx.doc(h.index); }));
    return slice.map(function (h, i) {
      var d = docs[i];
      return hitItem({ id: d.id, name: d.name, index: h.index }, [null, null, d.description], terms);
    });
  }
  function termSet(q) {
    return new Set(SkillcIndex.tokenize(q));
  }

  /* A list of hits shown PAGE at a time, with a "More results" button. */
  function pagedList(container, hits, terms, onFirst) {
    var list = el("ol", "skillc-hits");
    var more = el("button", "md-button skillc-more", "More results");
    more.type = "button";
    var shown = 0;
    async function next() {
      more.disabled = true;
      (await page(hits, shown, terms)).forEach(function (li) { list.appendChild(li); });
      shown = Math.min(hits.length, shown + PAGE);
      more.disabled = false;
      more.hidden = shown >= hits.length;
      more.textContent = "More results (" + (hits.length - shown) + " left)";
    }
    more.addEventListener("click", next);
    container.appendChild(list);
    container.appendChild(more);
    return next().then(onFirst);
  }

  /* --- the header box: results as you type --------------------------------------------- */
  var input = document.getElementById("skillc-qs-input");
  var panel = document.getElementById("skillc-qs-results");
  var seq = 0, timer = null;
  function close() { panel.hidden = true; }
  async function quick(q) {
    var mine = ++seq;
    q = q.trim();
    if (!q) { panel.textContent = ""; close(); return; }
    try {
      var hits = await skillHits(q);
      if (mine !== seq) return;
      panel.textContent = "";
      var status = el("p", "skillc-qs__status", hits.length ? hits.length + " skill" + (hits.length === 1 ? "" : "s")
        : "No skill matches “" + q + "”.");
      panel.appendChild(status);
      var all = el("a", "skillc-qs__all", "All results");
      all.href = new URL("search/?q=" + encodeURIComponent(q), root).href;
      status.appendChild(document.createTextNode(" · "));
      status.appendChild(all);
      panel.hidden = false;
      if (hits.length) await pagedList(panel, hits, termSet(q));
    } catch (err) {
      if (mine === seq) { panel.textContent = "Search failed: " + err.message; panel.hidden = false; }
    }
  }
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { quick(input.value); }, 60);
  });
  input.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") { close(); input.blur(); }
    if (ev.key === "Enter") location.href = new URL("search/?q=" + encodeURIComponent(input.value), root).href;
  });
  input.addEventListener("focus", function () { if (panel.childNodes.length && input.value.trim()) panel.hidden = false; });
  document.addEventListener("click", function (ev) { if (!box.contains(ev.target)) close(); });

  /* --- the Search page: skills, collections and memories ------------------------------- */
  var form = document.getElementById("skillc-search-form");
  if (!form) return;
  var pageInput = document.getElementById("skillc-search-input");
  var status = document.getElementById("skillc-search-status");
  var results = document.getElementById("skillc-search-results");
  var memoryUrl = form.getAttribute("data-memory");
  var pageSeq = 0;

  function matchesAll(text, toks) {
    var hay = " " + SkillcIndex.tokenize(text).join(" ") + " ";
    return toks.every(function (t) { return hay.indexOf(" " + t) !== -1; });
  }
  function simpleSection(title, items) {
    if (!items.length) return;
    results.appendChild(el("h2", null, title + " (" + items.length + ")"));
    var ul = el("ul", "skillc-hits");
    items.forEach(function (li) { ul.appendChild(li); });
    results.appendChild(ul);
  }
  function simpleHit(href, label, detail) {
    var li = el("li", "skillc-hit");
    var a = el(href ? "a" : "span", null, label);
    if (href) a.href = href;
    li.appendChild(a);
    if (detail) li.appendChild(el("span", "skillc-hit__id", " " + detail));
    return li;
  }
  async function run(q) {
    var mine = ++pageSeq;
    q = q.trim();
    results.textContent = "";
    if (!q) { status.textContent = ""; return; }
    status.textContent = "Searching…";
    var toks = SkillcIndex.tokenize(q);
    try {
      var hits = await skillHits(q);
      var cols = ((await once("collections", function () { return json(new URL("api/skill-collections.json", root).href); }))
        .collections || []).filter(function (c) { return matchesAll(c.path + " " + (c.description || ""), toks); });
      var mems = [];
      if (memoryUrl) {
        var snap = await once("memory", function () { return json(new URL(memoryUrl, location.href).href); });
        mems = (snap.entries || []).filter(function (e) {
          return (e.status || "active") === "active" &&
            matchesAll([e.content, (e.keywords || []).join(" "), e.namespace].join(" "), toks);
        });
      }
      if (mine !== pageSeq) return;
      var count = hits.length + cols.length + mems.length;
      status.textContent = count ? count + " result" + (count === 1 ? "" : "s") + " for “" + q + "”" : "No results for “" + q + "”.";
      if (hits.length) {
        results.appendChild(el("h2", null, "Skills (" + hits.length + ")"));
        var holder = el("div", "skillc-search-skills");
        results.appendChild(holder);
        await pagedList(holder, hits, termSet(q));
      }
      simpleSection("Collections", cols.map(function (c) {
        return simpleHit(collectionHref(c.path), c.path, "— " + c.count + " skill" + (c.count === 1 ? "" : "s"));
      }));
      var memHref = new URL("memory/", root).href;
      simpleSection("Memories", mems.map(function (e) {
        return simpleHit(memHref, (e.category ? "[" + e.category + "] " : "") + e.content, "— " + e.namespace);
      }));
    } catch (err) {
      status.textContent = "Search failed: " + err.message;
    }
  }
  function submit() {
    var url = new URL(location.href);
    url.searchParams.set("q", pageInput.value);
    history.replaceState(null, "", url.href);
    run(pageInput.value);
  }
  form.addEventListener("submit", function (ev) { ev.preventDefault(); submit(); });
  pageInput.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(submit, 60);
  });
  var initial = new URL(location.href).searchParams.get("q");
  if (initial) {
    pageInput.value = initial;
    run(initial);
  }
})();
