import type { Separator } from '../../../domain/dump-lines.js';
import type { InputItem } from './items.js';

/** How a member is read: what its reader was told, or what its first lines told. */
export interface ReadOptions {
  /** The separator of a combolist or stealer log (else told from the first lines). */
  separator?: Separator;
  /** The columns of a headerless CSV or TSV. */
  columns?: readonly string[];
  /** Called once the format and separator are known (line formats tell them from their first lines). */
  told?: (format: string, separator?: Separator) => void;
}

/**
 * One input format of leaked data: how its first text is recognised, and how a member's text
 * (UTF-8, cut at line ends: see Utf8Lines) becomes items. A new format is one file in this folder
 * exporting one of these, and its place in FORMATS (registry.ts).
 */
export interface InputFormat {
  /** Its name, as `import-leaks --format` and the summary say it. */
  readonly name: string;
  /** How the summary names it ("a combolist"). */
  readonly title: string;
  /** Whether its items' index is a line number (from 1) rather than a place (from 0). */
  readonly numbered: boolean;
  /** Whether it takes a separator, which its read tells (options.told) from its first lines when none is given. */
  readonly separated?: boolean;
  /**
   * Whether a member is of this format, from the first line that says something (`first`) and the
   * sample it came from (the member's first 64 KiB); a separator it tells with it. Formats are asked
   * in FORMATS' order; one that cannot tell from a sample has none.
   */
  recognise?(first: string, sample: string): { separator?: Separator } | null;
  /** The member's items, an array per piece of input read (no promise per item). */
  read(text: AsyncIterable<Buffer>, options: ReadOptions): AsyncGenerator<InputItem[]>;
}

/**
 * Items a format hands on at a time: small arrays, so that the records die young (a megabyte
 * chunk's worth held at once outlived the young generation and cost the import a tenth of its time).
 */
export const YIELD_EVERY = 256;
