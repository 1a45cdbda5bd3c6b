import { detectLineFormat, DumpLines, type LineFormat, type ReadLine, sampleLines, UnknownLineFormat } from '../../../domain/dump-lines.js';
import { type InputFormat, type ReadOptions, YIELD_EVERY } from './format.js';
import { type InputItem, lineResult } from './items.js';

const item = (l: ReadLine): InputItem => {
  const result = lineResult(l.parsed);
  return result.ok ? { index: l.line, result, bytes: l.bytes } : { index: l.line, result, bytes: l.bytes, text: l.text };
};

/**
 * Combolist or stealer-log lines (`format`, or with none told from the first lines): each line an
 * item numbered from 1, blank and `#` lines skipped, a line past 4,096 characters rejected as it
 * streams (see DumpLines). When the text fails part-way (a body cut off, a member ended by the
 * expansion limits), the whole lines read before are items first.
 */
export function readLines(format: LineFormat | undefined) {
  return async function* (text: AsyncIterable<Buffer>, options: ReadOptions): AsyncGenerator<InputItem[]> {
    const lines = new DumpLines(format, options.separator);
    let told = false;
    // Handed on a few hundred at a time, so that the records die young (see ndjson's read).
    async function* items(read: Iterable<ReadLine>) {
      let out: InputItem[] = [];
      for (const l of read) {
        out.push(item(l));
        if (!told && lines.told) {
          told = true;
          options.told?.(lines.told.format, lines.told.separator);
        }
        if (out.length >= YIELD_EVERY) {
          yield out;
          out = [];
        }
      }
      if (out.length) yield out;
    }
    try {
      for await (const chunk of text) yield* items(lines.push(chunk.toString('utf8')));
    } catch (err) {
      // The lines held to tell the format by are items too, if it can be told from them.
      let drained: ReadLine[] = [];
      try {
        drained = [...lines.drain()];
      } catch (unknown) {
        if (!(unknown instanceof UnknownLineFormat)) throw unknown;
      }
      yield* items(drained);
      throw err;
    }
    yield* items(lines.push('', true));
  };
}

/** A line format recognised from the first lines that say something, with the separator most of them read with. */
const recogniseAs = (format: LineFormat) => (_first: string, sample: string) => {
  const found = detectLineFormat(sampleLines(sample).slice(0, 200));
  return found?.format === format ? { separator: found.separator } : null;
};

/** Combolists: `login<SEP>secret` lines. */
export const combo: InputFormat = { name: 'combo', title: 'a combolist', numbered: true, separated: true, recognise: recogniseAs('combo'), read: readLines('combo') };

/** Stealer-log credential lines: `url<SEP>login<SEP>password`. */
export const stealer: InputFormat = { name: 'stealer', title: 'stealer-log lines', numbered: true, separated: true, recognise: recogniseAs('stealer'), read: readLines('stealer') };
