/**
 * Where each value of a JSON text sits (start and end offsets), so a file can
 * be edited by splicing instead of re-serialising it. The text must already
 * have passed JSON.parse; this only measures it.
 */

export type JsonSpan =
  | { readonly kind: 'object'; readonly start: number; readonly end: number; readonly members: readonly JsonMember[] }
  | { readonly kind: 'array'; readonly start: number; readonly end: number; readonly elements: readonly JsonSpan[] }
  | { readonly kind: 'scalar'; readonly start: number; readonly end: number };

export interface JsonMember {
  readonly key: string;
  readonly start: number;
  readonly value: JsonSpan;
}

export function jsonSpans(text: string): JsonSpan {
  let i = text.startsWith('\uFEFF') ? 1 : 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const string = (): number => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return start;
  };
  /** the comma-separated items of an object or array, from its opening bracket past its closing one */
  const items = <T>(close: string, item: () => T): T[] => {
    const out: T[] = [];
    i++;
    ws();
    while (text[i] !== close) {
      ws();
      out.push(item());
      ws();
      if (text[i] === ',') i++;
      ws();
    }
    i++;
    return out;
  };
  const value = (): JsonSpan => {
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      const members = items('}', (): JsonMember => {
        const ks = string();
        const key = JSON.parse(text.slice(ks, i)) as string;
        ws();
        i++; // :
        return { key, start: ks, value: value() };
      });
      return { kind: 'object', start, end: i, members };
    }
    if (c === '[') {
      const elements = items(']', value);
      return { kind: 'array', start, end: i, elements };
    }
    if (c === '"') {
      string();
      return { kind: 'scalar', start, end: i };
    }
    while (i < text.length && !' \t\r\n,]}'.includes(text[i]!)) i++;
    return { kind: 'scalar', start, end: i };
  };
  return value();
}
