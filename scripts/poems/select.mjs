// The poems of chinese-poetry 2.0.1 that the poem and couplet models read (docs/poem-model.md, docs/couplet-model.md):
// the Tang and Song quatrains and regulated verses of 5- or 7-character lines, in simplified characters, each kept
// once; the split bucket of an id; the vocabulary of a training split. Shared by scripts/poems/prepare.mjs and
// scripts/couplet/prepare.mjs.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SPECIALS, UNK, BOS, EOS, PAD } from './tokenizer.mjs';

// poet.tang.0.json, poet.tang.1000.json, …, then poet.song.*.json.
export function poemFiles(dir) {
  const files = readdirSync(dir).filter((f) => /^poet\.(tang|song)\.\d+\.json$/.test(f));
  const key = (f) => {
    const [, era, n] = f.match(/^poet\.(tang|song)\.(\d+)\.json$/);
    return [era === 'tang' ? 0 : 1, Number(n)];
  };
  return files.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0] - y[0] || x[1] - y[1];
  });
}

const IDEOGRAPH = /^\p{Unified_Ideograph}+$/u;
const cps = (s) => [...s].length;

// The line length n (5 or 7) when every paragraph is "n，n。" of ideographs, else 0.
export function coupletLength(paragraphs) {
  let n = 0;
  for (const p of paragraphs) {
    if (typeof p !== 'string') return 0;
    const m = p.match(/^([^，。]+)，([^，。]+)。$/u);
    if (!m || !IDEOGRAPH.test(m[1]) || !IDEOGRAPH.test(m[2])) return 0;
    const a = cps(m[1]);
    if (a !== cps(m[2]) || (a !== 5 && a !== 7) || (n && a !== n)) return 0;
    n = a;
  }
  return n;
}

// Tone labels aligned with the paragraphs: same count, each line the same length with "，"/"。" in the same places.
export function alignedStrains(strains, paragraphs) {
  if (!Array.isArray(strains) || strains.length !== paragraphs.length) return null;
  for (let i = 0; i < strains.length; i++) {
    const s = [...String(strains[i])];
    const p = [...paragraphs[i]];
    if (s.length !== p.length) return null;
    for (let j = 0; j < s.length; j++) {
      const punct = p[j] === '，' || p[j] === '。';
      if (punct ? s[j] !== p[j] : !/^[平仄○]$/u.test(s[j])) return null;
    }
  }
  return strains.map(String);
}

export function bucketOf(id) {
  return createHash('sha256').update(String(id)).digest().readUInt32BE(0) % 100;
}

export function sha256(buf) {
  return createHash('sha256').update(buf).digest('hex');
}

// The tone labels of every poem that has them, by id.
export function readStrains(dist) {
  const strainsDir = join(dist, 'strains', 'json');
  const strainsById = new Map();
  if (existsSync(strainsDir)) {
    for (const f of poemFiles(strainsDir)) {
      for (const s of JSON.parse(readFileSync(join(strainsDir, f), 'utf8'))) strainsById.set(s.id, s.strains);
    }
  }
  return strainsById;
}

// One poem of the package → its record (simplified text, form, aligned tone labels), or the reason it is dropped.
export function selectPoem(poem, era, toSimplified, strainsById, seen) {
  const paragraphs = Array.isArray(poem.paragraphs) ? poem.paragraphs : [];
  const np = paragraphs.length;
  if (np !== 2 && np !== 4) return { drop: 'other' };
  const n = coupletLength(paragraphs);
  if (!n) return { drop: 'rejected' };
  const kind = np === 2 ? 'quatrain' : 'regulated';
  const traditional = paragraphs.join('');
  const text = toSimplified(traditional);
  if (cps(text) !== cps(traditional) || coupletLength(text.match(/[^。]+。/gu) ?? []) !== n) {
    return { kind, drop: 'changedByConversion' };
  }
  if (seen.has(text)) return { kind, drop: 'duplicate' };
  seen.add(text);
  const record = {
    id: poem.id,
    era,
    form: `${np === 2 ? 'jueju' : 'lushi'}${n}`,
    author: poem.author,
    title: poem.title,
  };
  Object.assign(record, { text, traditional });
  const strains = alignedStrains(strainsById.get(poem.id), paragraphs);
  if (strains) record.strains = strains;
  return { kind, record };
}

// Every Tang and Song poem of the package → the kept quatrains and regulated verses, counting what was dropped.
export function selectPoems(dist, toSimplified, stats) {
  const strainsById = readStrains(dist);
  const seen = new Set();
  const kept = { quatrain: [], regulated: [] };
  const srcDir = join(dist, 'quantangshi');
  for (const f of poemFiles(srcDir)) {
    stats.files++;
    const era = f.split('.')[1];
    for (const poem of JSON.parse(readFileSync(join(srcDir, f), 'utf8'))) {
      stats.poems++;
      const r = selectPoem(poem, era, toSimplified, strainsById, seen);
      if (r.drop === 'rejected') stats.rejectedTwoOrFourParagraphs++;
      else if (r.drop && r.kind) stats[r.kind][r.drop]++;
      else if (r.record) {
        stats[r.kind].kept++;
        kept[r.kind].push(r.record);
      }
    }
  }
  return kept;
}

// Split by poem: bucket < 90 train, < 95 validation, else test; regulated verses of buckets ≥ 95 are the neighbour set.
export function splitPoems({ quatrain, regulated }) {
  const splits = { train: [], validation: [], test: [], neighbour: [] };
  for (const p of quatrain) {
    const b = bucketOf(p.id);
    splits[b < 90 ? 'train' : b < 95 ? 'validation' : 'test'].push(p);
  }
  for (const p of regulated) if (bucketOf(p.id) >= 95) splits.neighbour.push(p);
  return splits;
}

// The vocabulary, from the training split only: specials, punctuation, then characters seen ≥ minCount times.
export function buildVocab(train, minCount) {
  const counts = new Map();
  for (const p of train) for (const ch of p.text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const punct = ['，', '。'];
  const chars = [...counts]
    .filter(([ch, c]) => c >= minCount && !punct.includes(ch))
    .sort((a, b) => b[1] - a[1] || a[0].codePointAt(0) - b[0].codePointAt(0))
    .map(([ch]) => ch);
  const vocab = [...SPECIALS, ...punct, ...chars];
  if (vocab.length > 65535) throw new Error('vocabulary too large for uint16 files');
  const astral = [...counts.keys()].filter((ch) => ch.codePointAt(0) > 0xffff);
  const info = {
    size: vocab.length,
    minCount,
    specials: { '[PAD]': PAD, '[UNK]': UNK, '[BOS]': BOS, '[EOS]': EOS },
    distinctTrainCharacters: counts.size,
    belowMinCount: counts.size - chars.length - punct.filter((c) => counts.has(c)).length,
    outsideBmpInTrain: astral.length,
    outsideBmpInVocab: chars.filter((ch) => ch.codePointAt(0) > 0xffff),
  };
  return { vocab, counts, info };
}
