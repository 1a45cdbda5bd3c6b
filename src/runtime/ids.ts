import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/**
 * UUIDv7 ids from uuid's v7(), laid out and ordered as its default ones are (a counter from a
 * random start in each millisecond keeps ids made in the same millisecond in order), with random
 * bytes drawn 4 KiB at a time: uuid refills its own 256-byte pool every 15 ids, a visible cost to
 * a bulk load's writer.
 */
export function uuidV7Ids(): () => string {
  const pool = new Uint8Array(4096);
  let at = pool.length;
  let msecs = -Infinity;
  let seq = 0;
  // The id's bytes, then its text written into one buffer and read out as one string: uuid's own
  // stringify concatenates 20 pieces, about 700 bytes of garbage an id, a quarter of what a bulk
  // load's writer allocated.
  const bytes = new Uint8Array(16);
  const text = Buffer.alloc(36);
  return () => {
    if (at + 16 > pool.length) {
      randomFillSync(pool);
      at = 0;
    }
    const random = pool.subarray(at, (at += 16));
    const now = Date.now();
    if (now > msecs) {
      msecs = now;
      seq = ((random[6] as number) << 23) | ((random[7] as number) << 16) | ((random[8] as number) << 8) | (random[9] as number);
    } else {
      seq = (seq + 1) | 0;
      if (seq === 0) msecs++;
    }
    uuidv7({ random, msecs, seq }, bytes);
    let o = 0;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[o++] = DASH;
      const b = bytes[i] as number;
      text[o++] = HEX_DIGITS[b >> 4] as number;
      text[o++] = HEX_DIGITS[b & 15] as number;
    }
    return text.toString('latin1');
  };
}

const DASH = 0x2d;
/** The character codes of 0-9a-f. */
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
