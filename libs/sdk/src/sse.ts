/**
 * A Server-Sent Events parser (the WHATWG "event stream" format) over a fetch body: lines end in
 * CRLF, LF or CR; `event`, `data` (several join with LF), `id` and `retry` fields; lines starting
 * with `:` are comments; a blank line dispatches the event. Chunks may split lines, even a CRLF.
 */

export interface ServerSentEvent {
  /** `message` when the stream named none. */
  event: string;
  data: string;
  /** The last event id seen so far on the stream. */
  id?: string;
  /** A reconnection delay the server asked for, in ms. */
  retry?: number;
}

export class ServerSentEventParser {
  private buffer = '';
  private afterCarriageReturn = false;
  private event = '';
  private data: string[] = [];
  private lastEventId: string | undefined;
  private retry: number | undefined;

  /** Feeds decoded text; returns the events completed by it. */
  push(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const char = text[i];
      if (char !== '\n' && char !== '\r') {
        this.afterCarriageReturn = false;
        continue;
      }
      // The LF of a CRLF split across two chunks ends nothing new.
      if (char === '\n' && this.afterCarriageReturn && i === start && this.buffer === '') {
        this.afterCarriageReturn = false;
        start = i + 1;
        continue;
      }
      const line = this.buffer + text.slice(start, i);
      this.buffer = '';
      if (char === '\r' && text[i + 1] === '\n') i++;
      this.afterCarriageReturn = char === '\r' && i === text.length - 1;
      start = i + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer += text.slice(start);
    return events;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const hasData = this.data.length > 0;
    const event: ServerSentEvent = { event: this.event || 'message', data: this.data.join('\n') };
    if (this.lastEventId !== undefined) event.id = this.lastEventId;
    if (this.retry !== undefined) event.retry = this.retry;
    this.event = '';
    this.data = [];
    return hasData ? event : undefined;
  }
}

/** Reads a body stream as events until it ends or `signal` aborts. */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new ServerSentEventParser();
  const cancel = (): void => {
    reader.cancel().catch(() => undefined);
  };
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) return;
      const { done, value } = await reader.read();
      if (done) break;
      for (const event of parser.push(decoder.decode(value, { stream: true }))) {
        // Events already read in this chunk are dropped once the caller has stopped.
        if (signal?.aborted) return;
        yield event;
      }
    }
    yield* parser.push(decoder.decode());
  } finally {
    signal?.removeEventListener('abort', cancel);
    cancel();
  }
}
