/* skillc docs site: the Search page.
 *
 * Skills: BM25 over the bundle's own index (api/index/, read by api/index/skillc-index.js, which
 * fetches the header, the dictionary and only the postings shards a query needs).  Collections:
 * every query token in the path or description (api/skill-collections.json).  Memories (when the
 * bundle has a snapshot): every query token in the content, keywords or namespace.
 * Everything is shown with text nodes: nothing from the bundle is ever parsed as HTML.
 */
(function () {
  "use strict";
  var form = document.getElementById("skillc-search-form");
  if (!form) return;
  var input = document.getElementById("skillc-search-input");
  var status = document.getElementById("skillc-search-status");
  var results = document.getElementById("skillc-search-results");
  var root = new URL(form.getAttribute("data-root") || ".", location.href);
  var memoryUrl = form.getAttribute("data-memory");
  var cache = {};

  function once(key, make) {
    if (!cache[key]) cache[key] = make();
    return cache[key];
  }
  function json(path) {
    return fetch(new URL(path, location.href).href).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status + " for " + path);
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
  function tokens(q) {
    return SkillcIndex.tokenize ? SkillcIndex.tokenize(q) : q.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  }
  function matchesAll(text, toks) {
    var hay = " " + tokens(text).join(" ") + " ";
    return toks.every(function (t) { return hay.indexOf(" " + t) !== -1; });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    // (bidirectional controls shown as code points: "\u202eevil" would read "live"; markdown_safe.py does the same)
    if (text !== undefined) e.textContent = String(text).replace(/[\u202a-\u202e\u2066-\u2069]/g, function (c) {
      return "[U+" + c.charCodeAt(0).toString(16).toUpperCase() + "]";
    });
    return e;
  }
  function section(title, items) {
    if (!items.length) return;
    var h = el("h2", null, title + " (" + items.length + ")");
    var ul = el("ul", "skillc-hits");
    items.forEach(function (li) { ul.appendChild(li); });
    results.appendChild(h);
    results.appendChild(ul);
  }
  function hit(href, label, detail) {
    var li = el("li", "skillc-hit");
    if (href) {
      var a = el("a", null, label);
      a.href = href;
      li.appendChild(a);
    } else {
      li.appendChild(el("span", null, label));
    }
    if (detail) li.appendChild(el("span", "skillc-hit-detail", " " + detail));
    return li;
  }

  async function run(q) {
    results.textContent = "";
    q = q.trim();
    if (!q) { status.textContent = ""; return; }
    status.textContent = "Searching…";
    var toks = tokens(q);
    var count = 0;
    try {
      var idx = await index();
      var hits = await idx.search(q, 50);
      count += hits.length;
      section("Skills", hits.map(function (h) {
        return hit(skillHref(h.id), h.id, h.name !== h.id.split("/").pop() ? "— " + h.name : "");
      }));
      var cols = (await once("collections", function () { return json(new URL("api/skill-collections.json", root).href); })).collections || [];
      var colHits = cols.filter(function (c) { return matchesAll(c.path + " " + (c.description || ""), toks); });
      count += colHits.length;
      section("Collections", colHits.map(function (c) {
        return hit(collectionHref(c.path), c.path, "— " + c.count + " skill" + (c.count === 1 ? "" : "s"));
      }));
      if (memoryUrl) {
        var snap = await once("memory", function () { return json(memoryUrl); });
        var mems = (snap.entries || []).filter(function (e) {
          return (e.status || "active") === "active" &&
            matchesAll([e.content, (e.keywords || []).join(" "), e.namespace].join(" "), toks);
        }).slice(0, 50);
        count += mems.length;
        var memHref = new URL("memory/", root).href;
        section("Memories", mems.map(function (e) {
          return hit(memHref, (e.category ? "[" + e.category + "] " : "") + e.content, "— " + e.namespace);
        }));
      }
      status.textContent = count ? count + " result" + (count === 1 ? "" : "s") + " for “" + q + "”" : "No results for “" + q + "”.";
    } catch (err) {
      status.textContent = "Search failed: " + err.message;
    }
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var url = new URL(location.href);
    url.searchParams.set("q", input.value);
    history.replaceState(null, "", url.href);
    run(input.value);
  });
  var initial = new URL(location.href).searchParams.get("q");
  if (initial) {
    input.value = initial;
    run(initial);
  }
})();
