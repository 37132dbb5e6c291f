// @ts-check
// The shipped poem model's own training run (§10.1), from the model folder's losses.csv (written by the trainer,
// cpp/tools/train_poems.cc): the training loss every 50 steps and the loss on the first 1,000 validation poems every
// 500. No DOM (scratch.js draws it).

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
