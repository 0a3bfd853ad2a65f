import { ServerSentEventParser, readServerSentEvents, type ServerSentEvent } from './sse';

function parseInChunks(chunks: string[]): ServerSentEvent[] {
  const parser = new ServerSentEventParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

describe('ServerSentEventParser', () => {
  it('reads named events with JSON data, as NestJS writes them', () => {
    const events = parseInChunks(['id: 1\nevent: snapshot\ndata: {"providers":[]}\n\n', 'event: provider\ndata: {"name":"primary"}\n\n']);
    expect(events).toEqual([
      { event: 'snapshot', data: '{"providers":[]}', id: '1' },
      { event: 'provider', data: '{"name":"primary"}', id: '1' },
    ]);
  });

  it('joins multi-line data, skips comments, defaults the name to message, reads retry', () => {
    const events = parseInChunks([': keep-alive\n\ndata: a\ndata:b\nretry: 5000\nfoo: ignored\n\n']);
    expect(events).toEqual([{ event: 'message', data: 'a\nb', retry: 5000 }]);
  });

  it('gives the same events however the bytes are split, with LF, CR or CRLF line ends', () => {
    const stream = 'event: transition\r\ndata: {"to":"OPEN"}\r\n\r\nevent: provider\rdata: x\r\rdata: y\n\n';
    const whole = parseInChunks([stream]);
    expect(whole).toEqual([
      { event: 'transition', data: '{"to":"OPEN"}' },
      { event: 'provider', data: 'x' },
      { event: 'message', data: 'y' },
    ]);
    for (let cut = 1; cut < stream.length; cut++) {
      expect(parseInChunks([stream.slice(0, cut), stream.slice(cut)])).toEqual(whole);
    }
    expect(parseInChunks(stream.split(''))).toEqual(whole);
  });

  it('dispatches nothing for an event without data, nor for an unfinished one', () => {
    expect(parseInChunks(['event: snapshot\n\n', 'data: half'])).toEqual([]);
  });
});

describe('readServerSentEvents', () => {
  it('decodes a byte stream, including a character split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: café ✓\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const events: ServerSentEvent[] = [];
    for await (const event of readServerSentEvents(body)) events.push(event);
    expect(events).toEqual([{ event: 'message', data: 'café ✓' }]);
  });

  it('ends, and cancels the body, when the signal aborts', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: one\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const stop = new AbortController();
    const seen: string[] = [];
    for await (const event of readServerSentEvents(body, stop.signal)) {
      seen.push(event.data);
      stop.abort();
    }
    expect(seen).toEqual(['one']);
    expect(cancelled).toBe(true);
  });
});
