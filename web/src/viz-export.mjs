// @ts-check
// Exports of attnlab/viz's views (viz.mjs): toSVG() composes a standalone SVG document of what a view shows (its
// maps as viz-heatmap.mjs's heatMapSVG gives them, their captions and a colour scale), toPNG() rasterises that SVG
// in a browser canvas. Node has no canvas: there toPNG rejects, saying so.

import { escapeXml, heatMapSVG, num, svgText, weightColour } from './viz-heatmap.mjs';

const kFont = 'font-family="system-ui, sans-serif" font-size="12"';

/**
 * A standalone SVG document of the given size in px around `body` (on white).
 * @param {number} width
 * @param {number} height
 * @param {string} body
 */
export function svgDocument(width, height, body) {
  const w = num(Math.ceil(width));
  const h = num(Math.ceil(height));
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
    `<rect width="${w}" height="${h}" fill="#fff"/>${body}</svg>`
  );
}

/**
 * The weights' colour scale at (x, y): a 160 × 10 px ramp from 0 to 1 with its two ends labelled; 30 px tall.
 * @param {number} x
 * @param {number} y
 */
export function rampSVG(x, y) {
  const stops = Array.from({ length: 11 }, (_, k) => `<stop offset="${k / 10}" stop-color="${weightColour(k / 10)}"/>`);
  return (
    `<g class="attnlab-scale"><defs><linearGradient id="attnlab-ramp">${stops.join('')}</linearGradient></defs>` +
    `<rect x="${num(x)}" y="${num(y)}" width="160" height="10" fill="url(#attnlab-ramp)"/>` +
    svgText(x, y + 21, '0', `text-anchor="start" ${kFont} fill="#333"`) +
    svgText(x + 160, y + 21, '1', `text-anchor="end" ${kFont} fill="#333"`) +
    '</g>'
  );
}

/**
 * Where `el` is inside `root` in CSS px, or null when the page has not laid either out (detached, display:none).
 * @param {Element} root
 * @param {Element} el
 */
function placeIn(root, el) {
  const r = root.getBoundingClientRect();
  const b = el.getBoundingClientRect();
  if (!(r.width > 0 && b.width > 0)) return null;
  return { x: b.left - r.left, y: b.top - r.top, width: b.width, height: b.height };
}

/**
 * An SVG document of a view's heat maps where the page shows them (captions above), or one under the other when the
 * page has not laid them out; the colour scale below. Each figure's map must have been painted (heatMap): an Error
 * where it could not be (a DOM without a 2-D canvas).
 * @param {HTMLElement} root
 * @param {Array<{ canvas: HTMLCanvasElement, caption: string, captionElement?: HTMLElement }>} figures
 */
export function figuresSVG(root, figures) {
  const parts = [];
  let width = 0;
  let height = 0;
  for (const f of figures) {
    const map = heatMapSVG(f.canvas);
    if (!map) throw new Error('toSVG: needs a DOM with a 2-D canvas (maps are exported as painted; none was here)');
    const at = placeIn(root, f.canvas) ?? { x: 0, y: height + 18, width: map.width, height: map.height };
    const k = at.width / map.width; // CSS may shrink the canvas
    const cap = f.captionElement && placeIn(root, f.captionElement);
    parts.push(svgText(cap ? cap.x : at.x, cap ? cap.y + cap.height / 2 : at.y - 9, f.caption, `${kFont} fill="#222"`));
    parts.push(`<g transform="translate(${num(at.x)} ${num(at.y)}) scale(${num(k)})">${map.svg}</g>`);
    width = Math.max(width, at.x + at.width);
    height = Math.max(height, at.y + at.height);
  }
  parts.push(rampSVG(0, height + 8));
  return svgDocument(Math.max(width, 160), height + 38, parts.join(''));
}

/**
 * A coloured chip with `label` at (x, y) (tokenLinks' legend buttons); returns its SVG and width.
 * @param {number} x
 * @param {number} y
 * @param {string} label
 * @param {string} colour
 * @param {boolean} on shown (else drawn faded, as a pressed-off button)
 */
export function chipSVG(x, y, label, colour, on) {
  const width = 16 + 7 * [...label].length;
  const svg =
    `<g opacity="${on ? 1 : 0.4}"><rect x="${num(x + 1)}" y="${num(y + 1)}" width="${num(width - 2)}" height="20" ` +
    `fill="#fff" stroke="${colour}" stroke-width="2"/>${svgText(x + width / 2, y + 11, label, `text-anchor="middle" ${kFont} fill="#222"`)}</g>`;
  return { svg, width };
}

/**
 * The PNG of an SVG document (svgDocument's) at `scale` × its size: drawn into a canvas of the page and encoded
 * with canvas.toBlob. Rejects with an Error where there is no 2-D canvas (Node).
 * @param {Document | undefined} doc
 * @param {string} svg
 * @param {number} [scale]
 * @returns {Promise<Blob>}
 */
export async function svgToPNG(doc, svg, scale = 1) {
  if (!(scale > 0 && Number.isFinite(scale)))
    throw new RangeError(`toPNG: scale must be a positive number, got ${scale}`);
  const canvas = doc?.createElement?.('canvas');
  const ctx = canvas?.getContext?.('2d');
  const win = doc?.defaultView;
  if (!canvas || !ctx || !win?.Image) {
    throw new Error('toPNG: needs a browser canvas (a DOM with a 2-D context); in Node, export toSVG() instead');
  }
  const [, w, h] = /width="([\d.]+)" height="([\d.]+)"/.exec(svg) ?? [];
  const url = win.URL.createObjectURL(new win.Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new win.Image();
    img.src = url;
    await img.decode();
    canvas.width = Math.round(Number(w) * scale);
    canvas.height = Math.round(Number(h) * scale);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
  } finally {
    win.URL.revokeObjectURL(url);
  }
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('toPNG: the canvas gave no PNG'))), 'image/png'),
  );
}

export { escapeXml, svgText, num };
