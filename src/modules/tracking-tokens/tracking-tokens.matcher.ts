import AhoCorasick from 'modern-ahocorasick';
import { pushTo } from '../../domain/collections.js';
import type { InsertedRecord } from '../hooks.js';

/** An active token as the leak matcher needs it. */
export interface LeakableToken {
  id: string;
  organization_id: string;
  kind: string;
  trigger_key: string | null;
  username_lower: string | null;
  password_sha1: string | null;
  api_key: string | null;
  api_key_sha1: string | null;
}

/** A token found in a record. */
export interface TokenFind {
  token: LeakableToken;
  record: InsertedRecord;
}

/**
 * The active tokens as an index for leaked records: credential usernames (ignoring case) and the
 * SHA-1s of credential passwords and of API keys in hash maps (the corpus keeps a password only as
 * its SHA-1), and API keys and trigger keys in one Aho-Corasick automaton over the record's text
 * fields, extra values included (a key is found inside a URL, a config line, a paste).
 */
export class LeakTokenIndex {
  private readonly usernames = new Map<string, LeakableToken[]>();
  private readonly sha1s = new Map<string, LeakableToken[]>();
  private readonly texts: LeakableToken[] = [];
  private readonly automaton: AhoCorasick | null;
  readonly size: number;

  constructor(tokens: readonly LeakableToken[]) {
    const patterns: string[] = [];
    for (const t of tokens) {
      if (t.username_lower) pushTo(this.usernames, t.username_lower, t);
      if (t.password_sha1) pushTo(this.sha1s, t.password_sha1, t);
      if (t.api_key_sha1) pushTo(this.sha1s, t.api_key_sha1, t);
      for (const text of [t.api_key, t.trigger_key]) {
        if (text) {
          patterns.push(text);
          this.texts.push(t);
        }
      }
    }
    this.automaton = patterns.length ? new AhoCorasick(patterns) : null;
    this.size = tokens.length;
  }

  /** Each (token, record) found, once. */
  find(records: readonly InsertedRecord[]): TokenFind[] {
    const out: TokenFind[] = [];
    for (const record of records) {
      const seen = new Set<LeakableToken>();
      const found = (tokens: LeakableToken[] | undefined) => {
        for (const token of tokens ?? []) {
          if (seen.has(token)) continue;
          seen.add(token);
          out.push({ token, record });
        }
      };
      if (record.username_lower) found(this.usernames.get(record.username_lower));
      if (record.password_sha1) found(this.sha1s.get(record.password_sha1));
      if (this.automaton) {
        for (const text of [record.email, record.username, record.domain, record.full_name, record.phone, ...Object.values(record.extra)]) {
          if (!text) continue;
          for (const m of this.automaton.search(text)) found([this.texts[m.patternIndex] as LeakableToken]);
        }
      }
    }
    return out;
  }
}
