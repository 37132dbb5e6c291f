// @ts-check
// The shipped poem model's own training run (§10.1), from the model folder's losses.csv (written by the trainer,
// cpp/tools/train_poems.cc): the training loss every 50 steps and the loss on the first 1,000 validation poems every
// 500; and from its snapshots.json (scripts/poems/snapshots.mjs): the run's weights at chosen steps on the panel's
// held-out probes. No DOM (shipped-view.js draws it).

/**
 * @typedef {object} ShippedRun
 * @property {[number, number][]} train       [step, mean training loss of the last 50 steps]
 * @property {[number, number][]} validation  [step, validation loss]
 * @property {number} steps
 */

/**
 * @param {string} csv  losses.csv: a header naming step, train_loss and val_loss (empty between evaluations)
 * @returns {ShippedRun}
 */
export function parseLossesCsv(csv) {
  const [header, ...rows] = csv.trim().split(/\r?\n/);
  const cols = header.split(',');
  const at = (/** @type {string} */ name) => {
    const i = cols.indexOf(name);
    if (i < 0) throw new Error(`losses.csv: no column '${name}' in '${header}'`);
    return i;
  };
  const [step, train, val] = [at('step'), at('train_loss'), at('val_loss')];
  /** @type {ShippedRun} */
  const out = { train: [], validation: [], steps: 0 };
  for (const row of rows) {
    const f = row.split(',');
    const s = Number(f[step]);
    if (!Number.isFinite(s) || f[train] === '') throw new Error(`losses.csv: a bad row '${row}'`);
    out.train.push([s, Number(f[train])]);
    if (f[val] !== '' && f[val] !== undefined) out.validation.push([s, Number(f[val])]);
    out.steps = Math.max(out.steps, s);
  }
  return out;
}

/** Held-out poems the §10.1 panel probes a run on (the shipped run's snapshots and the from-scratch run alike). */
export const PROBES = 16;

/**
 * The probes: the last PROBES held-out quatrains, the last one first (it is the one drawn).
 * @param {string[]} heldOut  the held-out quatrains' texts
 */
export const probeTexts = (heldOut) => heldOut.slice(-PROBES).reverse();

// ---------------------------------------------------------------------------------------------------------------
// snapshots.json: the shipped run seen from inside (scripts/poems/snapshots.mjs writes it)

export const SNAPSHOTS_FORMAT = 1;

/**
 * Causal attention maps → base64 strings of bytes round(255·p), one per layer, each head's lower triangle row by row
 * (j ≤ i: the rest is 0): probabilities to within 1/510.
 * @param {Float32Array[]} maps  per layer (H·T·T)
 * @param {number} T
 * @returns {string[]}
 */
export function quantiseMaps(maps, T) {
  return maps.map((m) => {
    const bytes = [];
    for (let r = 0; r < m.length / T; r++) for (let j = 0; j <= r % T; j++) bytes.push(Math.round(255 * m[r * T + j]));
    return btoa(String.fromCharCode(...bytes));
  });
}

/**
 * quantiseMaps' string of one layer → its (H·T·T) maps.
 * @param {string} b64
 * @param {number} T
 * @param {string} where  for the error
 */
function unpackMaps(b64, T, where) {
  const bytes = atob(b64);
  const perHead = (T * (T + 1)) / 2;
  if (bytes.length % perHead !== 0)
    throw new Error(`snapshots.json: ${where}: ${bytes.length} values, not heads × ${T}·${T + 1}/2`);
  const m = new Float32Array((bytes.length / perHead) * T * T);
  let k = 0;
  for (let r = 0; r < m.length / T; r++) for (let j = 0; j <= r % T; j++) m[r * T + j] = bytes.charCodeAt(k++) / 255;
  return m;
}

/**
 * @typedef {object} Snapshot  the shipped model's weights after `step`, on the probes
 * @property {number} step
 * @property {number} probeLoss  mean loss on the probes (nats)
 * @property {Record<string, { best: number, baseline: number }>} patterns  heads.js bestPatternScores
 * @property {number[][]} entropy  per (layer, head), mean row entropy on the first probe
 * @property {Float32Array[]} maps  the first probe's maps, per layer (H·T·T)
 */

/**
 * snapshots.json → the labels of the drawn probe and its snapshots by step; a file of another format or with a map
 * of the wrong size is an error naming it.
 * @param {any} json
 * @returns {{ probes: number, labels: string[], steps: Snapshot[], rerun: { lastStep: number, matchedLogs: number } }}
 */
export function parseSnapshots(json) {
  if (json?.format !== SNAPSHOTS_FORMAT) throw new Error(`snapshots.json: format ${json?.format}, expected 1`);
  const T = json.labels.length;
  const steps = json.steps.map((/** @type {any} */ s) => {
    const maps = s.maps.map((/** @type {string} */ b64, /** @type {number} */ l) =>
      unpackMaps(b64, T, `step ${s.step} layer ${l}`),
    );
    return { step: s.step, probeLoss: s.probeLoss, patterns: s.patterns, entropy: s.entropy, maps };
  });
  return { probes: json.probes, labels: json.labels, steps, rerun: json.rerun };
}
