/**
 * threatmon's icon, drawn in code (nothing fetched, no binary file to keep): a navy disc with a
 * teal ring and centre, a radar's look. As SVG for pages that name it, and as the ICO browsers ask
 * /favicon.ico for by themselves.
 */
const NAVY = [0x1f, 0x3a, 0x5f] as const;
const TEAL = [0x2a, 0xb7, 0xa9] as const;

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#1f3a5f"/><circle cx="16" cy="16" r="9.5" fill="none" stroke="#2ab7a9" stroke-width="2.5"/><circle cx="16" cy="16" r="3.5" fill="#2ab7a9"/></svg>`;

/** The colour of the icon's pixel (x, y) of 32, with alpha, from the same three circles. */
function pixel(x: number, y: number): [number, number, number, number] {
  const d = Math.hypot(x + 0.5 - 16, y + 0.5 - 16);
  if (d > 15) return [0, 0, 0, 0];
  const teal = d <= 3.5 || Math.abs(d - 9.5) <= 1.25;
  const [r, g, b] = teal ? TEAL : NAVY;
  return [r, g, b, 255];
}

/** One 32x32 32-bit bitmap in an ICO container (ICONDIR, one entry, BITMAPINFOHEADER, rows bottom-up, AND mask). */
export function faviconIco(): Buffer {
  const size = 32;
  const pixels = size * size * 4;
  const mask = size * 4;
  const image = 40 + pixels + mask;
  const out = Buffer.alloc(6 + 16 + image);
  out.writeUInt16LE(1, 2);
  out.writeUInt16LE(1, 4);
  out.writeUInt8(size, 6);
  out.writeUInt8(size, 7);
  out.writeUInt16LE(1, 10);
  out.writeUInt16LE(32, 12);
  out.writeUInt32LE(image, 14);
  out.writeUInt32LE(22, 18);
  out.writeUInt32LE(40, 22);
  out.writeInt32LE(size, 26);
  out.writeInt32LE(size * 2, 30);
  out.writeUInt16LE(1, 34);
  out.writeUInt16LE(32, 36);
  out.writeUInt32LE(pixels + mask, 42);
  let at = 62;
  for (let y = size - 1; y >= 0; y--) {
    for (let x = 0; x < size; x++) {
      const [r, g, b, a] = pixel(x, y);
      out.writeUInt8(b, at);
      out.writeUInt8(g, at + 1);
      out.writeUInt8(r, at + 2);
      out.writeUInt8(a, at + 3);
      at += 4;
    }
  }
  return out;
}
