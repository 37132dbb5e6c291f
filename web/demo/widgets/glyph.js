// @ts-check
// Whether the fonts of this browser can draw a character in a given font stack. A character no font has is drawn
// as the same .notdef box as a code point no font has (U+10FFFD, private use), so comparing the two drawings tells
// them apart. The poem cells show the code point instead of a box (a few rare characters, outside the BMP, are in
// the poem model's vocabulary; the page's CSS stack falls back to fonts that have them where they exist).

/** The poem cells' font stack (style.css .poem-char). */
export const POEM_FONT =
  '"Noto Serif CJK SC", "Source Han Serif SC", "Songti SC", SimSun, "SimSun-ExtB", "MingLiU-ExtB", "HanaMinB", "Plangothic P1", "Plangothic P2", "BabelStone Han", serif';

const SIZE = 24;
/** @type {Map<string, boolean>} */
const KNOWN = new Map();
/** @type {{ font: string, ctx: CanvasRenderingContext2D, box: string } | null} */
let probe = null;

/**
 * The pixels of one character drawn in the stack, as a string (for comparison).
 * @param {CanvasRenderingContext2D} ctx
 * @param {string} ch
 */
function pixels(ctx, ch) {
  ctx.clearRect(0, 0, SIZE * 2, SIZE * 2);
  ctx.fillText(ch, 4, SIZE);
  return ctx.getImageData(0, 0, SIZE * 2, SIZE * 2).data.join(',');
}

/**
 * Can the page draw this character (one code point) in the font stack? True where no canvas can answer.
 * @param {string} ch
 * @param {string} [font]
 */
export function drawable(ch, font = POEM_FONT) {
  if ([...ch].length !== 1) throw new RangeError(`ch: one character expected, got "${ch}"`);
  const key = `${font}\n${ch}`;
  if (KNOWN.has(key)) return KNOWN.get(key);
  if (typeof document === 'undefined') return true;
  if (!probe || probe.font !== font) {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = SIZE * 2;
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    if (!ctx) return true;
    ctx.font = `${SIZE}px ${font}`;
    probe = { font, ctx, box: pixels(ctx, '\u{10FFFD}') };
  }
  const ok = pixels(probe.ctx, ch) !== probe.box;
  KNOWN.set(key, ok);
  return ok;
}

/** "U+2CB3B": a code point as it is written. @param {string} ch */
export const codePoint = (ch) => `U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
