/* skillc-index.js — reads a skillc bundle's BM25 index (api/index/) in a browser or in node.
 *
 * No dependencies.  Same tokenizer, same formula and the same order of float64 operations as
 * skillc's Python reader, so both return the same ranking to the bit:
 *   norm[d] = k1 * (1 - b + b * dl[d] / avgdl)
 *   score[d] += idf[t] * ((tf * (k1 + 1)) / (tf + norm[d]))   for each unique query term, in query order
 *   ties: lower document number first (documents are in ID byte order).
 *
 *   const index = await SkillcIndex.load("https://host/api/index/");   // or a loader function
 *   const hits = await index.search("deploy to production", 10);      // [{id, name, score, index}]
 *
 * A loader is `async (fileName) => ArrayBuffer | Uint8Array`.  Postings shards are fetched the first
 * time a query needs them; each file is checked against the SHA-256 in the header when Web Crypto
 * is available (any secure context, node >= 19).
 */
(function (root) {
  "use strict";

  var FORMAT = "skillc-search-index";
  var VERSION = 1;
  var ALNUM = /[\p{Alphabetic}\p{N}]/u;
  var encoder = new TextEncoder();
  var decoder = new TextDecoder("utf-8", { fatal: true });

  /* adk-rust's tokenizer: ASCII alphanumeric runs lower-cased; any other Unicode letter or digit
   * is a token of its own (not case-folded); everything else separates. */
  function tokenize(text) {
    var tokens = [];
    var run = "";
    for (var ch of text) {
      var c = ch.charCodeAt(0);
      if ((c >= 48 && c <= 57) || (c >= 97 && c <= 122)) {
        run += ch;
      } else if (c >= 65 && c <= 90) {
        run += String.fromCharCode(c + 32);
      } else {
        if (run) { tokens.push(run); run = ""; }
        if (c >= 128 && ALNUM.test(ch)) tokens.push(ch);
      }
    }
    if (run) tokens.push(run);
    return tokens;
  }

  function toBuffer(data) {
    if (data instanceof ArrayBuffer) return data;
    if (ArrayBuffer.isView(data)) return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    throw new Error("skillc-index: a loader must return an ArrayBuffer or a Uint8Array");
  }

  function urlLoader(base) {
    if (base.charAt(base.length - 1) !== "/") base += "/";
    return async function (name) {
      var response = await fetch(base + name);
      if (!response.ok) throw new Error("skillc-index: HTTP " + response.status + " for " + base + name);
      return response.arrayBuffer();
    };
  }

  async function sha256hex(buffer) {
    var subtle = root.crypto && root.crypto.subtle;
    if (!subtle) return null;
    var digest = new Uint8Array(await subtle.digest("SHA-256", buffer));
    var hex = "";
    for (var i = 0; i < digest.length; i++) hex += (digest[i] < 16 ? "0" : "") + digest[i].toString(16);
    return hex;
  }

  async function verified(load, name, size, sha256) {
    var buffer = toBuffer(await load(name));
    if (buffer.byteLength !== size) {
      throw new Error("skillc-index: " + name + " is " + buffer.byteLength + " bytes, the header says " + size);
    }
    var hex = await sha256hex(buffer);
    if (hex !== null && hex !== sha256) throw new Error("skillc-index: " + name + ": SHA-256 mismatch (corrupted)");
    return buffer;
  }

  var TYPES = { uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, float64: Float64Array };

  function section(buffer, sec) {
    return new TYPES[sec.type](buffer, sec.offset, sec.count);
  }

  function SkillcIndex(header, load, dictionary) {
    this.header = header;
    this.N = header.N;
    this._load = load;
    var sec = header.dictionary.sections;
    this._idf = section(dictionary, sec.idf);
    this._termOff = section(dictionary, sec.term_offsets);
    this._postOff = section(dictionary, sec.posting_offsets);
    this._blob = section(dictionary, sec.term_bytes);
    this._idOff = section(dictionary, sec.doc_id_offsets);
    this._ids = section(dictionary, sec.doc_ids);
    this._nameOff = section(dictionary, sec.doc_name_offsets);
    this._names = section(dictionary, sec.doc_names);
    var dl = section(dictionary, sec.doc_lengths);
    var k1 = header.bm25.k1, b = header.bm25.b, avgdl = header.avgdl;
    this._k1 = k1;
    this._norm = new Float64Array(this.N);
    for (var d = 0; d < this.N; d++) this._norm[d] = avgdl ? k1 * (1 - b + b * dl[d] / avgdl) : k1 * (1 - b);
    this._shardFirst = header.shards.map(function (s) { return s.first_term; });
    this._shards = new Map();
  }

  SkillcIndex.tokenize = tokenize;

  SkillcIndex.load = async function (source) {
    var load = typeof source === "function" ? source : urlLoader(String(source));
    var header = JSON.parse(decoder.decode(new Uint8Array(toBuffer(await load("search.json")))));
    if (!header || header.format !== FORMAT) throw new Error("skillc-index: not a skillc search index");
    if (!(header.version <= VERSION)) {
      throw new Error("skillc-index: index format version " + header.version + " is newer than this reader (" + VERSION + ")");
    }
    var d = header.dictionary;
    var dictionary = await verified(load, d.file, d.size, d.sha256);
    return new SkillcIndex(header, load, dictionary);
  };

  /* The skill ID and name of document d (documents are in ID byte order). */
  SkillcIndex.prototype.docId = function (d) {
    return decoder.decode(this._ids.subarray(this._idOff[d], this._idOff[d + 1]));
  };

  SkillcIndex.prototype.docName = function (d) {
    return decoder.decode(this._names.subarray(this._nameOff[d], this._nameOff[d + 1]));
  };

  SkillcIndex.prototype.termId = function (term) {
    var key = encoder.encode(term);
    var blob = this._blob, off = this._termOff;
    var lo = 0, hi = this.header.terms;
    while (lo < hi) {
      var mid = (lo + hi) >>> 1;
      var start = off[mid], end = off[mid + 1], cmp = 0;
      for (var i = 0; ; i++) {
        if (start + i === end) { cmp = i === key.length ? 0 : -1; break; }
        if (i === key.length) { cmp = 1; break; }
        var x = blob[start + i], y = key[i];
        if (x !== y) { cmp = x < y ? -1 : 1; break; }
      }
      if (cmp < 0) lo = mid + 1;
      else if (cmp > 0) hi = mid;
      else return mid;
    }
    return -1;
  };

  SkillcIndex.prototype._shard = async function (i) {
    var shard = this._shards.get(i);
    if (shard) return shard;
    var meta = this.header.shards[i];
    var buffer = await verified(this._load, meta.file, meta.size, meta.sha256);
    var n = meta.count;
    var wide = this.header.doc_id_type === "uint32";
    var size = wide ? 4 : 2;
    shard = {
      docs: wide ? new Uint32Array(buffer, 0, n) : new Uint16Array(buffer, 0, n),
      tf: new Uint16Array(buffer, size * n, n),
      base: meta.first_posting,
    };
    this._shards.set(i, shard);
    return shard;
  };

  SkillcIndex.prototype._shardOf = function (tid) {
    var lo = 0, hi = this._shardFirst.length;
    while (lo < hi) {
      var mid = (lo + hi) >>> 1;
      if (this._shardFirst[mid] <= tid) lo = mid + 1; else hi = mid;
    }
    return lo - 1;
  };

  /* The k best documents for the query (OR of its unique tokens), best first. */
  SkillcIndex.prototype.search = async function (query, k) {
    if (k === undefined) k = 10;
    var tids = [];
    var tokens = tokenize(query);
    for (var i = 0; i < tokens.length; i++) {
      var tid = this.termId(tokens[i]);
      if (tid >= 0 && tids.indexOf(tid) < 0) tids.push(tid);
    }
    if (!tids.length || k <= 0) return [];
    var acc = new Float64Array(this.N);
    var touched = [];
    var k1p1 = this._k1 + 1, norm = this._norm;
    for (var q = 0; q < tids.length; q++) {
      var t = tids[q];
      var shard = await this._shard(this._shardOf(t));
      var lo = this._postOff[t] - shard.base, hi = this._postOff[t + 1] - shard.base;
      var idf = this._idf[t], docs = shard.docs, tfs = shard.tf;
      for (var j = lo; j < hi; j++) {
        var d = docs[j], tf = tfs[j];
        if (acc[d] === 0) touched.push(d);
        acc[d] += idf * ((tf * k1p1) / (tf + norm[d]));
      }
    }
    touched.sort(function (a, b) { return acc[b] - acc[a] || a - b; });
    var self = this;
    return touched.slice(0, k).map(function (d) {
      return { id: self.docId(d), name: self.docName(d), score: acc[d], index: d };
    });
  };

  if (typeof module === "object" && module.exports) module.exports = SkillcIndex;
  else root.SkillcIndex = SkillcIndex;
})(typeof globalThis !== "undefined" ? globalThis : this);
