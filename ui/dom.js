/** A tiny element builder: attributes set one by one, text only through text nodes (never HTML). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null || c === '') continue;
    el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return el;
}

/** Set an element's text when it changed (a redraw that leaves unchanged text alone keeps screen readers quiet). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
