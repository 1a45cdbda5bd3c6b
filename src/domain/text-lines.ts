import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';

/**
 * Whatever the encoding, UTF-8 out, cut at line ends (a line's bytes never split across two pushes):
 * a UTF-8 BOM is dropped, UTF-16 with a BOM is decoded, and a line that is not valid UTF-8 is read
 * as Windows-1252 (counted in `windows1252Lines`).
 */
export class Utf8Lines {
  windows1252Lines = 0;
  private started = false;
  private utf16?: { write(b: Buffer): string; end(): string | undefined };
  private carry: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer {
    if (!this.started) {
      this.started = true;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
      else if (chunk[0] === 0xff && chunk[1] === 0xfe) this.utf16 = iconv.getDecoder('utf16le');
      else if (chunk[0] === 0xfe && chunk[1] === 0xff) this.utf16 = iconv.getDecoder('utf16be');
    }
    // UTF-16: decoded (a BOM the decoder drops itself), then cut at line ends like the rest.
    if (this.utf16) chunk = Buffer.from(this.utf16.write(chunk), 'utf8');
    const data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const last = data.lastIndexOf(10);
    if (last < 0) {
      this.carry = Buffer.from(data);
      return Buffer.alloc(0);
    }
    this.carry = Buffer.from(data.subarray(last + 1));
    return this.mend(data.subarray(0, last + 1));
  }

  end(): Buffer {
    const tail = this.utf16 ? Buffer.concat([this.carry, Buffer.from(this.utf16.end() ?? '', 'utf8')]) : this.carry;
    this.carry = Buffer.alloc(0);
    return this.mend(tail);
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
