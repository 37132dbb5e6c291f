// @ts-check
// The page's one hover tooltip (a single element, created on first use).

/** @type {HTMLDivElement | null} */
let tip = null;

/**
 * Show text near the page position (x, y), kept inside the window.
 * @param {string} text
 * @param {number} x
 * @param {number} y
 */
export function showTip(text, x, y) {
  if (!tip) {
    tip = document.createElement('div');
    tip.className = 'tooltip';
    tip.setAttribute('role', 'tooltip');
    document.body.append(tip);
  }
  tip.textContent = text;
  tip.hidden = false;
  const w = tip.offsetWidth;
  const h = tip.offsetHeight;
  const left = Math.min(window.scrollX + window.innerWidth - w - 8, x + 14);
  const top = y + 16 + h > window.scrollY + window.innerHeight ? y - h - 10 : y + 16;
  tip.style.left = `${Math.max(window.scrollX + 4, left)}px`;
  tip.style.top = `${top}px`;
}

export function hideTip() {
  if (tip) tip.hidden = true;
}
