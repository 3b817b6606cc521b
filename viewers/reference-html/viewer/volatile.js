// volatile.js: what in a payload is volatile by nature (object ids, addresses, temporary paths,
// compile ids, the AOT counter, pids, measured times, the rank), masked by maskVolatile: a mirror
// of mask_volatile in src/analysis/cross_rank/volatile.rs, the one rule `tlparse-build compare`
// and the rank differ compare payloads by. Keep the two in step: tests/volatile_cases.json holds
// the cases both are tested on. The rule reads only ASCII, so masking a decoded string here
// gives what masking the bytes there gives.

/** The text that stands for a masked value. */
export const MASK = '<?>';

const isDigit = (c) => c >= '0' && c <= '9';
const isNumber = (c) => isDigit(c) || c === '.';
const isHex = (c) => isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
const isAlnum = (c) => isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const isWord = (c) => isAlnum(c) || c === '_';
/** Characters a path is made of (after its leading `/`). */
const isPath = (c) => isAlnum(c) || '/._-~+'.includes(c);

/** Values after a fixed prefix that are volatile whatever they hold (see KEYED in volatile.rs). */
const COMPILE_ID_KEY = '"compile_id": "';
const KEYED = [
  [COMPILE_ID_KEY, (c) => c !== '"'],
  ["# AOT ID: ['", isDigit],
  ['Guard latency = ', isNumber],
  ['"compile_time_us": ', isNumber],
  ['__builtins_dict___', isDigit],
  ['"pid": ', isDigit],
  ["'rank': ", isDigit],
];

function runEnd(text, from, f) {
  let i = from;
  while (i < text.length && f(text[i])) i++;
  return i;
}

/** Artifacts whose content is a list of compile ids (the order graphs ran in): never masked. */
const COMPILE_IDS_ARE_CONTENT = ['graph_execution', 'inductor_graph_execution'];

/** The payload `text` of an artifact called `name` with what is volatile by nature replaced by
 * MASK (the rule is volatile.rs's). */
export function maskVolatile(text, name = '') {
  const idsKept = COMPILE_IDS_ARE_CONTENT.includes(name);
  let out = '';
  let i = 0;
  while (i < text.length) {
    const before = i > 0 ? text[i - 1] : null;
    const lineStart = before === null || before === '\n';
    const skip = keyed(text, i, idsKept) ?? hexAddress(text, i, before) ?? tempPath(text, i, before)
      ?? (idsKept ? null : compileId(text, i, before, lineStart)) ?? longDigits(text, i, before);
    if (skip) {
      out += text.slice(i, skip[0]) + MASK;
      i = skip[1];
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}

// Each returns the span masked at `i`: [end of what is kept of it, end of the span], or null.

function keyed(text, i, idsKept) {
  for (const [prefix, value] of KEYED) {
    if ((idsKept && prefix === COMPILE_ID_KEY) || !text.startsWith(prefix, i)) continue;
    const kept = i + prefix.length;
    const end = runEnd(text, kept, value);
    if (end > kept) return [kept, end];
  }
  return null;
}

function hexAddress(text, i, before) {
  if ((before !== null && isWord(before)) || !text.startsWith('0x', i)) return null;
  const end = runEnd(text, i + 2, isHex);
  return end > i + 2 ? [i + 2, end] : null;
}

function tempPath(text, i, before) {
  if (text[i] !== '/' || (before !== null && isPath(before))) return null;
  const end = runEnd(text, i + 1, isPath);
  const path = text.slice(i, end);
  const temporary = path.startsWith('/tmp/') || path.startsWith('/var/tmp/');
  return temporary || path.includes('/torchinductor_') ? [i, end] : null;
}

const isIdChar = (c) => isDigit(c) || c === '/' || c === '_' || c === '-';

function compileId(text, i, before, lineStart) {
  if (text[i] === '[') {
    const from = i + 1 + (text[i + 1] === '!' ? 1 : 0);
    const end = runEnd(text, from, isIdChar);
    const id = text.slice(from, end);
    return text[end] === ']' && id.includes('/') && isDigit(id[0]) ? [i + 1, end] : null;
  }
  if (!(lineStart || before === '"') || !isDigit(text[i])) return null;
  const end = runEnd(text, i, isIdChar);
  return text.startsWith(': ', end) && text.slice(i, end).includes('/') ? [i, end] : null;
}

/** Seven digits or more, but for a size in a shape or stride list (after `[` or `, `, before `,` or `]`). */
function longDigits(text, i, before) {
  if (!isDigit(text[i]) || (before !== null && isDigit(before))) return null;
  const end = runEnd(text, i, isDigit);
  const opensItem = before === '[' || (before === ' ' && text[i - 2] === ',');
  const closesItem = text[end] === ',' || text[end] === ']';
  return end - i >= 7 && !(opensItem && closesItem) ? [i, end] : null;
}
