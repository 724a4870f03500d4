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
  const value = (): JsonSpan => {
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const members: JsonMember[] = [];
      ws();
      while (text[i] !== '}') {
        ws();
        const ks = string();
        const key = JSON.parse(text.slice(ks, i)) as string;
        ws();
        i++; // :
        members.push({ key, start: ks, value: value() });
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      i++;
      return { kind: 'object', start, end: i, members };
    }
    if (c === '[') {
      i++;
      const elements: JsonSpan[] = [];
      ws();
      while (text[i] !== ']') {
        elements.push(value());
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      i++;
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
