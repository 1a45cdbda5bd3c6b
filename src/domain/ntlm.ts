import { createMD4 } from 'hash-wasm';

// MD4 is gone from OpenSSL 3's default provider (node:crypto refuses it); hash-wasm's hasher is
// synchronous once made, so the module is ready for the synchronous normalisation of records.
const md4 = await createMD4();

/** The NTLM hash of a password (MD4 of its UTF-16LE bytes), in upper-case hex as Have I Been Pwned's NTLM ranges write it. */
export function ntlmHex(password: string): string {
  md4.init();
  md4.update(Buffer.from(password, 'utf16le'));
  return md4.digest('hex').toUpperCase();
}
