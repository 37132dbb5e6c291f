// @ts-check
// The page's colour scales: a sequential one for weights in [0, 1], a diverging one for signed values, and the text
// colour that reads on a cell. No DOM.

/**
 * One colour each for Q, K and V across the page (#28): labels, captions and arrows (never a cell's background, whose
 * red/blue is a value's sign, nor the heads' blue/orange): Q violet, K teal, V brown. Each reads on white (contrast ≥ 4.5).
 */
export const QKV = Object.freeze({ q: '#6a3d9a', k: '#00796b', v: '#a0522d' });

/**
 * Relative luminance of '#rrggbb' (WCAG 2).
 * @param {string} hex
 */
export function luminance(hex) {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

// white → blue → deep indigo, for weights in [0, 1]
const SEQ_STOPS = /** @type {[number, number[]][]} */ ([
  [0, [247, 251, 255]],
  [0.25, [198, 219, 239]],
  [0.5, [107, 174, 214]],
  [0.75, [33, 113, 181]],
  [1, [8, 48, 107]],
]);
const DIV_NEG = [33, 102, 172];
const DIV_POS = [178, 24, 43];

/**
 * @param {[number, number[]][]} stops
 * @param {number} t
 */
function lerpStops(stops, t) {
  t = Math.min(1, Math.max(0, t));
  for (let i = 1; i < stops.length; i++) {
    if (t <= stops[i][0]) {
      const [t0, c0] = stops[i - 1];
      const [t1, c1] = stops[i];
      const u = (t - t0) / (t1 - t0);
      return c0.map((c, k) => Math.round(c + (c1[k] - c) * u));
    }
  }
  return stops[stops.length - 1][1];
}

/**
 * Colour of a weight in [0, 1] (yellow for a non-finite one).
 * @param {number} t
 */
export function seqColor(t) {
  if (!Number.isFinite(t)) return 'rgb(255, 214, 0)';
  const [r, g, b] = lerpStops(SEQ_STOPS, t);
  return `rgb(${r}, ${g}, ${b})`;
}

/**
 * Colour of a signed value on a symmetric scale [-m, m].
 * @param {number} v
 * @param {number} m
 */
export function divColor(v, m) {
  if (Number.isNaN(v)) return 'rgb(255, 214, 0)';
  if (v === -Infinity) return 'rgb(60, 60, 60)';
  if (v === Infinity) return 'rgb(120, 0, 20)';
  const t = m > 0 ? Math.min(1, Math.abs(v) / m) : 0;
  const end = v < 0 ? DIV_NEG : DIV_POS;
  const [r, g, b] = [255, 255, 255].map((c, k) => Math.round(c + (end[k] - c) * t));
  return `rgb(${r}, ${g}, ${b})`;
}

/**
 * Black or white text for a background colour "rgb(r, g, b)".
 * @param {string} rgb
 */
export function textOn(rgb) {
  const [r, g, b] = rgb.match(/\d+/g).map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b < 140 ? '#fff' : '#111';
}
