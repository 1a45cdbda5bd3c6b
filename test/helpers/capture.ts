import { Writable } from 'node:stream';

/** An output stream for an import, and what was written to it so far. */
export function capture() {
  let text = '';
  const out = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  return { out, said: () => text };
}
