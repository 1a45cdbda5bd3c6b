import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';

/**
 * The most bytes of one line held while waiting for its end: past it, the line's bytes go on in
 * pieces (each cut between two characters) and whoever splits lines rejects it at its own limit.
 * A JSON array on one line still reaches its parser whole, a piece at a time.
 */
export const MAX_HELD_LINE_BYTES = 1024 * 1024;

const EMPTY = Buffer.alloc(0);

/**
 * Whatever the encoding, UTF-8 out, cut at line ends (a line's bytes never split across two pushes,
 * unless it is longer than `maxLine`): a UTF-8 BOM is dropped, UTF-16 with a BOM is decoded, and a
 * line that is not valid UTF-8 is read as Windows-1252 (counted in `windows1252Lines`). Linear in
 * the input, and never holds more than `maxLine` bytes and a chunk, whatever a line's length.
 */
export class Utf8Lines {
  windows1252Lines = 0;
  private started = false;
  private utf16?: { write(b: Buffer): string; end(): string | undefined };
  /** The bytes of the line begun and not ended, in the pieces they came in. */
  private carry: Buffer[] = [];
  private carried = 0;

  constructor(private readonly maxLine = MAX_HELD_LINE_BYTES) {}

  push(chunk: Buffer): Buffer {
    if (!this.started) {
      this.started = true;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
      else if (chunk[0] === 0xff && chunk[1] === 0xfe) this.utf16 = iconv.getDecoder('utf16le');
      else if (chunk[0] === 0xfe && chunk[1] === 0xff) this.utf16 = iconv.getDecoder('utf16be');
    }
    // UTF-16: decoded (a BOM the decoder drops itself), then cut at line ends like the rest.
    if (this.utf16) chunk = Buffer.from(this.utf16.write(chunk), 'utf8');
    const last = chunk.lastIndexOf(10);
    if (last < 0) {
      this.hold(chunk);
      return this.carried > this.maxLine ? this.flushLong() : EMPTY;
    }
    const lines = this.carried ? Buffer.concat([...this.carry, chunk.subarray(0, last + 1)]) : chunk.subarray(0, last + 1);
    this.carry = [];
    this.carried = 0;
    this.hold(chunk.subarray(last + 1));
    const out = this.mend(lines);
    return this.carried > this.maxLine ? Buffer.concat([out, this.flushLong()]) : out;
  }

  end(): Buffer {
    if (this.utf16) this.hold(Buffer.from(this.utf16.end() ?? '', 'utf8'));
    const tail = Buffer.concat(this.carry);
    this.carry = [];
    this.carried = 0;
    return this.mend(tail);
  }

  private hold(piece: Buffer): void {
    if (piece.length === 0) return;
    this.carry.push(piece);
    this.carried += piece.length;
  }

  /** The held part of a line too long to hold, cut after its last whole character; the rest stays held. */
  private flushLong(): Buffer {
    const held = Buffer.concat(this.carry);
    let cut = held.length;
    // Back to the start of the last character (at most 3 continuation bytes), and before it unless it is whole.
    let start = cut - 1;
    while (start > 0 && cut - start < 4 && ((held[start] as number) & 0xc0) === 0x80) start--;
    const lead = held[start] as number;
    const width = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (cut - start < width) cut = start;
    this.carry = cut < held.length ? [held.subarray(cut)] : [];
    this.carried = held.length - cut;
    return this.mend(held.subarray(0, cut));
  }

  /** Whole lines, each that is not UTF-8 decoded as Windows-1252. */
  private mend(lines: Buffer): Buffer {
    if (lines.length === 0 || isUtf8(lines)) return lines;
    const parts: Buffer[] = [];
    let good = 0;
    let at = 0;
    while (at < lines.length) {
      const nl = lines.indexOf(10, at);
      const end = nl < 0 ? lines.length : nl + 1;
      const line = lines.subarray(at, end);
      if (!isUtf8(line)) {
        if (at > good) parts.push(lines.subarray(good, at));
        parts.push(Buffer.from(iconv.decode(line, 'win1252'), 'utf8'));
        this.windows1252Lines++;
        good = end;
      }
      at = end;
    }
    if (good < lines.length) parts.push(lines.subarray(good));
    return Buffer.concat(parts);
  }
}
