// table-files.js: a bundle's tables as Node reads them from disk, without the loader: each part
// (manifest `tables.<name>.parts`) zstd-decoded and parsed, and the table whole, its parts merged as
// docs/format.md says (every top-level list the concatenation of that member over the parts).
import fs from 'node:fs';
import path from 'node:path';
import { decompress as unzstd } from 'fzstd';

/** The parsed parts of the table `ref` of the bundle at `dir`, in order. */
export function tablePartsOnDisk(dir, ref) {
  return ref.parts.map((p) => JSON.parse(Buffer.from(unzstd(fs.readFileSync(path.join(dir, p)))).toString('utf8')));
}

/** The table `ref` of the bundle at `dir`, whole. */
export function tableOnDisk(dir, ref) {
  const [first, ...rest] = tablePartsOnDisk(dir, ref);
  for (const part of rest) {
    for (const [key, value] of Object.entries(first)) if (Array.isArray(value)) value.push(...part[key]);
  }
  return first;
}
