import { type Separator, UnknownLineFormat } from '../../../domain/dump-lines.js';
import { Utf8Lines } from '../../../domain/text-lines.js';
import type { InputItem } from './items.js';
import { peek, utf8Chunks } from './members.js';
import { readLines } from './lines.js';
import { detectFormat, formatNamed, FORMATS, IMPORT_FORMATS } from './registry.js';

/** What is sampled of a member to tell its format. */
const SAMPLE_BYTES = 64 * 1024;

/** A member whose format cannot be told from its content (UnknownLineFormat for a door to word its own way). */
export { UnknownLineFormat };

export interface OpenOptions {
  /** The format, else told from the first 64 KiB (then, for lines, from the first lines that say something). */
  format?: string;
  /** The formats it may be, when not given (default: every one). */
  among?: readonly string[];
  separator?: Separator;
  columns?: readonly string[];
  /** Called once the member's format (and a line format's separator) is known, before its first item. */
  told?: (told: { format: string; title: string; separator?: Separator; numbered: boolean }) => void;
  /** The decoder of the member's text, to read its count of Windows-1252 lines after. */
  encoding?: Utf8Lines;
}

/**
 * The one way into the leak pipeline, for the CLI's reader thread and the API's bodies alike: a
 * member's bytes, in any encoding Utf8Lines takes, as items of its format (given, or told from its
 * content), an array per piece read. When the format cannot be told: UnknownLineFormat.
 */
export async function* openInput(chunks: AsyncIterable<Buffer>, options: OpenOptions = {}): AsyncGenerator<InputItem[]> {
  const encoding = options.encoding ?? new Utf8Lines();
  const { head, all } = await peek(utf8Chunks(chunks, encoding), options.format ? 0 : SAMPLE_BYTES);
  const given = options.format === undefined ? undefined : formatNamed(options.format);
  if (options.format !== undefined && !given) throw new Error(`no input format "${options.format}": one of ${IMPORT_FORMATS.join(', ')}`);
  const detected = given ? null : detectFormat(head.toString('utf8'), options.among ? FORMATS.filter((f) => options.among?.includes(f.name)) : FORMATS);
  const format = given ?? (detected ? formatNamed(detected.format) : undefined);
  const separator = options.separator ?? detected?.separator;
  const readOptions = { separator, columns: options.columns };
  if (format && (!format.separated || separator)) {
    options.told?.({ format: format.name, title: format.title, separator, numbered: format.numbered });
    yield* format.read(all, readOptions);
    return;
  }
  // Lines whose format or separator the sample could not tell (its first line longer than the
  // sample, say): told from the first lines that can be read.
  const read = format ? format.read : readLines(undefined);
  yield* read(all, {
    ...readOptions,
    told: (name, sep) => {
      const f = formatNamed(name);
      options.told?.({ format: name, title: f?.title ?? name, separator: sep, numbered: true });
    },
  });
}
