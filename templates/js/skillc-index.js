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
 * A loader is `async (fileName) => ArrayBuffer | Uint8Array`.  Shards (terms and their postings) are
 * fetched the first time a query needs them, chunks of IDs and names the first time a hit in them is shown; each file is checked against the SHA-256 in the header when Web Crypto
 * is available (any secure context, node >= 19).
 */
(function (root) {
  "use strict";

  var FORMAT = "skillc-search-index";
  var VERSION = 2;
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
    var dl = section(dictionary, header.dictionary.sections.doc_lengths);
    var k1 = header.bm25.k1, b = header.bm25.b, avgdl = header.avgdl;
    this._k1 = k1;
    this._norm = new Float64Array(this.N);
    for (var d = 0; d < this.N; d++) this._norm[d] = avgdl ? k1 * (1 - b + b * dl[d] / avgdl) : k1 * (1 - b);
    this._shardFirst = header.shards.map(function (s) { return encoder.encode(s.first); });
    this._shards = new Map();
    this._chunks = new Map();
  }

  SkillcIndex.tokenize = tokenize;

  SkillcIndex.load = async function (source) {
    var load = typeof source === "function" ? source : urlLoader(String(source));
    var header = JSON.parse(decoder.decode(new Uint8Array(toBuffer(await load("search.json")))));
    if (!header || header.format !== FORMAT) throw new Error("skillc-index: not a skillc search index");
    if (header.version !== VERSION) {
      throw new Error("skillc-index: index format version " + header.version + ", this reader reads " + VERSION);
    }
    var d = header.dictionary;
    var dictionary = await verified(load, d.file, d.size, d.sha256);
    return new SkillcIndex(header, load, dictionary);
  };

  /* The IDs and names of one chunk of documents, fetched the first time a hit in it is shown. */
  SkillcIndex.prototype._chunk = function (c) {
    var got = this._chunks.get(c);
    if (!got) {
      var meta = this.header.docs.files[c];
      got = verified(this._load, meta.file, meta.size, meta.sha256).then(function (buffer) {
        return JSON.parse(decoder.decode(new Uint8Array(buffer)));
      });
      this._chunks.set(c, got);
    }
    return got;
  };

  /* The skill ID, name and description (cut) of document d (documents are in ID byte order). */
  SkillcIndex.prototype.doc = async function (d) {
    var size = this.header.docs.chunk;
    var chunk = await this._chunk(Math.floor(d / size));
    return { id: chunk.ids[d % size], name: chunk.names[d % size], description: chunk.descriptions[d % size] };
  };

  function compare(blob, start, end, key) {
    for (var i = 0; ; i++) {
      if (start + i === end) return i === key.length ? 0 : -1;
      if (i === key.length) return 1;
      var x = blob[start + i], y = key[i];
      if (x !== y) return x < y ? -1 : 1;
    }
  }

  /* The shard whose first term is the last one <= key (byte order), or -1. */
  SkillcIndex.prototype._shardOf = function (key) {
    var firsts = this._shardFirst, lo = 0, hi = firsts.length;
    while (lo < hi) {
      var mid = (lo + hi) >>> 1;
      if (compare(firsts[mid], 0, firsts[mid].length, key) <= 0) lo = mid + 1; else hi = mid;
    }
    return lo - 1;
  };

  /* A shard: idf (float64 x T), term and posting offsets (uint32 x T+1), docs, tf (uint16),
   * fields (uint8), each `count` long, then the terms' UTF-8 bytes.  docs: per term its first document,
 * then the gaps to the next (they compress). */
  SkillcIndex.prototype._shard = async function (i) {
    var shard = this._shards.get(i);
    if (shard) return shard;
    var meta = this.header.shards[i];
    var buffer = await verified(this._load, meta.file, meta.size, meta.sha256);
    var t = meta.terms, n = meta.count;
    var wide = this.header.doc_id_type === "uint32";
    var size = wide ? 4 : 2, docsAt = 16 * t + 8;
    var postOff = new Uint32Array(buffer, 12 * t + 4, t + 1);
    var gaps = wide ? new Uint32Array(buffer, docsAt, n) : new Uint16Array(buffer, docsAt, n);
    var docs = new Uint32Array(n);  // each term's first document, then the gaps to the next
    for (var term = 0; term < t; term++) {
      for (var j = postOff[term], acc = 0; j < postOff[term + 1]; j++) docs[j] = acc += gaps[j];
    }
    shard = {
      idf: new Float64Array(buffer, 0, t),
      termOff: new Uint32Array(buffer, 8 * t, t + 1),
      postOff: postOff,
      docs: docs,
      tf: new Uint16Array(buffer, docsAt + size * n, n),
      blob: new Uint8Array(buffer, docsAt + (size + 3) * n),
    };
    this._shards.set(i, shard);
    return shard;
  };

  /* {shard, lo, hi, idf} of a term's postings, or null. */
  SkillcIndex.prototype._postings = async function (term) {
    var key = encoder.encode(term);
    var si = this._shardOf(key);
    if (si < 0) return null;
    var shard = await this._shard(si);
    var lo = 0, hi = shard.idf.length;
    while (lo < hi) {
      var mid = (lo + hi) >>> 1;
      var cmp = compare(shard.blob, shard.termOff[mid], shard.termOff[mid + 1], key);
      if (cmp < 0) lo = mid + 1;
      else if (cmp > 0) hi = mid;
      else return { shard: shard, lo: shard.postOff[mid], hi: shard.postOff[mid + 1], idf: shard.idf[mid] };
    }
    return null;
  };

  /* The k best documents for the query (OR of its unique tokens), best first. */
  /* options.documents === false: hits without their ID and name (fetch them with doc(d) for the
   * hits shown, so listing every hit downloads no document chunk). */
  SkillcIndex.prototype.search = async function (query, k, options) {
    if (k === undefined) k = 10;
    var tokens = tokenize(query), seen = [], terms = [];
    for (var i = 0; i < tokens.length; i++) {
      if (seen.indexOf(tokens[i]) >= 0) continue;
      seen.push(tokens[i]);
      var found = await this._postings(tokens[i]);
      if (found) terms.push(found);
    }
    if (!terms.length || k <= 0) return [];
    var acc = new Float64Array(this.N);
    var touched = [];
    var k1p1 = this._k1 + 1, norm = this._norm;
    for (var q = 0; q < terms.length; q++) {
      var p = terms[q], idf = p.idf, docs = p.shard.docs, tfs = p.shard.tf;
      for (var j = p.lo; j < p.hi; j++) {
        var d = docs[j], tf = tfs[j];
        if (acc[d] === 0) touched.push(d);
        acc[d] += idf * ((tf * k1p1) / (tf + norm[d]));
      }
    }
    touched.sort(function (a, b) { return acc[b] - acc[a] || a - b; });
    var self = this;
    if (options && options.documents === false) {
      return touched.slice(0, k).map(function (d) { return { score: acc[d], index: d }; });
    }
    return Promise.all(touched.slice(0, k).map(async function (d) {
      var doc = await self.doc(d);
      return { id: doc.id, name: doc.name, score: acc[d], index: d };
    }));
  };

  if (typeof module === "object" && module.exports) module.exports = SkillcIndex;
  else root.SkillcIndex = SkillcIndex;
})(typeof globalThis !== "undefined" ? globalThis : this);
