/**
 * An incremental parser for the `text/event-stream` format (the SSE binding of
 * AEP-0003 §3.3): it takes decoded text in chunks cut anywhere and hands out
 * each dispatched message and each comment line. Lines end in CRLF, LF or a
 * lone CR (a CR at the end of a chunk waits for the next one); a `data` field
 * repeated in one message is joined with LF; `id` sets the last event id, and
 * a value holding NUL is ignored; unknown fields are ignored; a message with
 * no data is not dispatched. One line is bounded so a stream without line
 * breaks cannot grow memory without limit.
 */

export interface SseMessage {
  /** the `event:` field, 'message' when absent */
  readonly event: string;
  readonly data: string;
  /** the last event id in force when this message was dispatched ('' when none was ever set) */
  readonly id: string;
  /** whether this very message carried an `id:` field */
  readonly hasId: boolean;
}

export interface SseHandlers {
  message(m: SseMessage): void;
  /** a comment line, without its leading ':' and one optional space */
  comment?(text: string): void;
  /** a line over the bound was discarded (its message is dropped) */
  oversize?(): void;
}

/** 16 MiB: far above any event line the daemon writes (its body limit bounds events) */
export const DEFAULT_MAX_LINE = 16 * 1024 * 1024;

export class SseParser {
  private buf = '';
  private pendingCr = false;
  private started = false;
  private dropping = false;
  /** the current message lost a line to the bound: it is not dispatched */
  private poisoned = false;
  private data: string[] = [];
  private event = '';
  private sawId = false;
  private lastId = '';

  constructor(
    private readonly on: SseHandlers,
    private readonly maxLine = DEFAULT_MAX_LINE,
  ) {}

  /** the last event id the stream set (what a reconnect sends as `Last-Event-ID`) */
  get lastEventId(): string {
    return this.lastId;
  }

  push(chunk: string): void {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.pendingCr) {
      this.pendingCr = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    let from = 0;
    for (;;) {
      const cr = text.indexOf('\r', from);
      const lf = text.indexOf('\n', from);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      this.appendPart(text.slice(from, end));
      this.endLine();
      if (text[end] === '\r') {
        if (end + 1 === text.length) {
          this.pendingCr = true;
          from = end + 1;
          break;
        }
        from = text[end + 1] === '\n' ? end + 2 : end + 1;
      } else {
        from = end + 1;
      }
    }
    this.appendPart(text.slice(from));
  }

  private appendPart(part: string): void {
    if (this.dropping || part.length === 0) return;
    if (this.buf.length + part.length > this.maxLine) {
      this.buf = '';
      this.dropping = true;
      this.on.oversize?.();
      return;
    }
    this.buf += part;
  }

  private endLine(): void {
    const line = this.buf;
    this.buf = '';
    if (this.dropping) {
      // the oversize line is gone and so is the message it belonged to
      this.dropping = false;
      this.data = [];
      this.event = '';
      this.sawId = false;
      this.poisoned = true;
      return;
    }
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.on.comment?.(line.slice(line.startsWith(': ') ? 2 : 1));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\u0000')) {
      this.lastId = value;
      this.sawId = true;
    }
  }

  private dispatch(): void {
    const data = this.data;
    const event = this.event;
    const hasId = this.sawId;
    const poisoned = this.poisoned;
    this.data = [];
    this.event = '';
    this.sawId = false;
    this.poisoned = false;
    if (data.length === 0 || poisoned) return;
    this.on.message({ event: event || 'message', data: data.join('\n'), id: this.lastId, hasId });
  }
}
