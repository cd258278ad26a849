// The reference for Reel's tokenizer tests and benchmark: the Hugging Face tokenizers library
// (npm package `tokenizers`, a native binding of the Rust crate).
//
//   node encode.js ids TOKENIZER.json CORPUS OUT [--add-special-tokens]
//       CORPUS: documents as (uint32 little-endian byte length, UTF-8 bytes)...; invalid UTF-8
//       is decoded with U+FFFD replacement, as Reel does. OUT: per document (uint32 count,
//       uint32 ids...).
//   node encode.js decode TOKENIZER.json IDS OUT [--skip-special-tokens]
//       IDS: per document (uint32 count, uint32 ids...). OUT: texts as in CORPUS.
//   node encode.js time TOKENIZER.json TEXTFILE REPEATS
//       Encodes the whole file REPEATS times (the library encodes one text on one thread);
//       prints "wall_seconds cpu_seconds tokens" of the fastest run (for bench/tokenizer_bench;
//       CPU time is the whole process's, user + system).
//   node encode.js normalize KIND CORPUS OUT          (KIND: nfc nfd nfkc nfkd lowercase)
//   node encode.js pretokenize PRE_TOKENIZER_JSON CORPUS OUT
//       The pieces a pre-tokenizer makes of each document: per document (uint32 count, then the
//       pieces as in CORPUS).
//   node encode.js serve
//       Requests on standard input, one per line: a JSON array of the arguments of the ids,
//       decode, normalize or pretokenize mode; answers one line each on standard output, "ok" or
//       "error MESSAGE". A tokenizer file is loaded once per process (tests ask several questions
//       of one file: tests/support/tokenizer_reference.cc).
// The module is found through NODE_PATH (the folder the test setup installed it into).
'use strict';
const fs = require('fs');
const tk = require('tokenizers');

function readDocs(path) {
  const buf = fs.readFileSync(path);
  const docs = [];
  let off = 0;
  while (off < buf.length) {
    const n = buf.readUInt32LE(off);
    off += 4;
    docs.push(buf.toString('utf8', off, off + n));
    off += n;
  }
  return docs;
}

function writeIdLists(path, lists) {
  let total = 0;
  for (const l of lists) total += 4 + 4 * l.length;
  const out = Buffer.alloc(total);
  let off = 0;
  for (const l of lists) {
    out.writeUInt32LE(l.length, off);
    off += 4;
    for (const id of l) {
      out.writeUInt32LE(id, off);
      off += 4;
    }
  }
  fs.writeFileSync(path, out);
}

function readIdLists(path) {
  const buf = fs.readFileSync(path);
  const lists = [];
  let off = 0;
  while (off < buf.length) {
    const n = buf.readUInt32LE(off);
    off += 4;
    const l = [];
    for (let i = 0; i < n; i++) {
      l.push(buf.readUInt32LE(off));
      off += 4;
    }
    lists.push(l);
  }
  return lists;
}

function writeDocs(path, docs) {
  const parts = [];
  for (const d of docs) {
    const b = Buffer.from(d, 'utf8');
    const h = Buffer.alloc(4);
    h.writeUInt32LE(b.length, 0);
    parts.push(h, b);
  }
  fs.writeFileSync(path, Buffer.concat(parts));
}

const loaded = new Map();

function load(path) {
  if (loaded.has(path)) return loaded.get(path);
  const t = tk.Tokenizer.fromFile(path);
  t.disableTruncation();
  t.disablePadding();
  loaded.set(path, t);
  return t;
}

async function serve() {
  const lines = require('readline').createInterface({input: process.stdin, terminal: false});
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let answer = 'ok';
    try {
      const [mode, ...args] = JSON.parse(line);
      if (mode === 'time' || mode === 'serve') throw new Error('mode ' + mode + ' is not served');
      await run(mode, args);
    } catch (e) {
      answer = 'error ' + String(e && e.message || e).replace(/\n/g, ' ');
    }
    process.stdout.write(answer + '\n');
  }
}

async function main() {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'serve') return serve();
  return run(mode, args);
}

async function run(mode, args) {
  if (mode === 'ids') {
    const [tokPath, corpus, out, flag] = args;
    const t = load(tokPath);
    const docs = readDocs(corpus);
    const addSpecialTokens = flag === '--add-special-tokens';
    const lists = [];
    for (const d of docs) {
      const e = await t.encode(d, null, {addSpecialTokens});
      lists.push(e.getIds());
    }
    writeIdLists(out, lists);
  } else if (mode === 'decode') {
    const [tokPath, idsPath, out, flag] = args;
    const t = load(tokPath);
    const texts = [];
    for (const l of readIdLists(idsPath)) texts.push(await t.decode(l, flag === '--skip-special-tokens'));
    writeDocs(out, texts);
  } else if (mode === 'time') {
    const [tokPath, textPath, repeats] = args;
    const t = load(tokPath);
    const text = fs.readFileSync(textPath, 'utf8');
    let best = Infinity;
    let bestCpu = Infinity;
    let tokens = 0;
    for (let i = 0; i < Number(repeats); i++) {
      const cpu0 = process.cpuUsage();
      const start = process.hrtime.bigint();
      const e = await t.encode(text, null, {addSpecialTokens: false});
      const s = Number(process.hrtime.bigint() - start) / 1e9;
      const cpu = process.cpuUsage(cpu0);
      tokens = e.getIds().length;
      best = Math.min(best, s);
      bestCpu = Math.min(bestCpu, (cpu.user + cpu.system) / 1e6);
    }
    console.log(best, bestCpu, tokens);
  } else if (mode === 'normalize') {
    const [kind, corpus, out] = args;
    const n = {nfc: tk.nfcNormalizer, nfd: tk.nfdNormalizer, nfkc: tk.nfkcNormalizer,
               nfkd: tk.nfkdNormalizer, lowercase: tk.lowercase}[kind]();
    writeDocs(out, readDocs(corpus).map((d) => n.normalizeString(d)));
  } else if (mode === 'pretokenize') {
    const [config, corpus, out] = args;
    const t = tk.Tokenizer.fromString(JSON.stringify({
      version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
      pre_tokenizer: JSON.parse(config), post_processor: null, decoder: null,
      model: {type: 'WordLevel', vocab: {'[UNK]': 0}, unk_token: '[UNK]'}}));
    const p = t.getPreTokenizer();
    const parts = [];
    for (const d of readDocs(corpus)) {
      const pieces = p.preTokenizeString(d);
      const h = Buffer.alloc(4);
      h.writeUInt32LE(pieces.length, 0);
      parts.push(h);
      for (const [piece] of pieces) {
        const b = Buffer.from(piece, 'utf8');
        const l = Buffer.alloc(4);
        l.writeUInt32LE(b.length, 0);
        parts.push(l, b);
      }
    }
    fs.writeFileSync(out, Buffer.concat(parts));
  } else {
    throw new Error('unknown mode ' + mode);
  }
}

main().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
