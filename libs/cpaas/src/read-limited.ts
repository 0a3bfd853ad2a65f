import type { Readable } from 'node:stream';

/**
 * Reads an HTTP body as text, up to `maxBytes`; the rest is not read (the stream is destroyed). By its `data`
 * events rather than `for await`, whose async iterator costs a promise a chunk (every provider call reads one).
 */
export function readLimited(body: Pick<Readable, 'on' | 'off' | 'destroy'>, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const text = () => (chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    // The error listener stays: a destroyed body emits one (undici's RequestAbortedError), which must not go unheard,
    // and a promise already settled ignores it.
    const done = () => {
      body.off('data', onData);
      body.off('end', onEnd);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        done();
        // What was read before the bound: it is cut, so it is not the whole answer (and not valid JSON).
        body.destroy();
        resolve(text());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(text());
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
  });
}
