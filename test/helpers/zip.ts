import zlib from 'node:zlib';

/**
 * A zip of `members` as zip tools write them: stored (`deflate` false: the bytes as they are) or
 * deflated. Local headers, the members, the central directory and its end record.
 */
export function zipOf(members: Array<[string, Buffer]>, deflate = false): Buffer {
  const parts: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of members) {
    const packed = deflate ? zlib.deflateRawSync(data) : data;
    const nameBytes = Buffer.from(name);
    const header = (central: boolean) => {
      const h = Buffer.alloc(central ? 46 : 30);
      h.writeUInt32LE(central ? 0x02014b50 : 0x04034b50, 0);
      // The central record has "made by" before the fields both share.
      const at = central ? 2 : 0;
      if (central) h.writeUInt16LE(20, 4);
      h.writeUInt16LE(20, 4 + at);
      h.writeUInt16LE(deflate ? 8 : 0, 8 + at);
      h.writeUInt32LE(zlib.crc32(data), 14 + at);
      h.writeUInt32LE(packed.length, 18 + at);
      h.writeUInt32LE(data.length, 22 + at);
      h.writeUInt16LE(nameBytes.length, 26 + at);
      if (central) h.writeUInt32LE(offset, 42);
      return h;
    };
    parts.push(header(false), nameBytes, packed);
    centrals.push(header(true), nameBytes);
    offset += 30 + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, end]);
}
