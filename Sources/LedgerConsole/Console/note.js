// Signed notes in the browser (C2SP signed-note, tlog-checkpoint, tlog-cosignature), read as the
// Swift verifier reads them (TransparencyLog: NoteKey, SignedNote, Checkpoint, Cosignature), with
// nothing but crypto.subtle. Contract:
//   - parseVerifierKey(text) / parseWitnessKey(text) → {name, keyId, publicKey, text}: the key text
//     name+<8 hex>+base64(type ‖ 32-byte Ed25519 key), type 0x01 (the log) or 0x04 (a witness),
//     its id the first 4 bytes of SHA-256(name ‖ "\n" ‖ type ‖ key). Throws NoteError otherwise.
//   - openCheckpoint(note, key, witnesses = []) → {origin, size, rootHash, text, otherSignatures,
//     cosigners}: the note signed by key (every line of its name and id must verify, and one must
//     be there), its origin the key's name; otherSignatures the names of every other line,
//     unverified; cosigners [{name, time}] the given witnesses whose cosignature verifies (one
//     absent or failing is left out, never thrown: the caller decides). Throws NoteError.
//   - renamedKey(key, name) → the same Ed25519 key under another name (NoteVerifier(name:publicKey:)),
//     its id recomputed; throws NoteError for a name no key may have.
//   - The byte helpers the other verifying modules share (strict base64, SHA-256, UTF-8).
// Names are compared as Swift compares Strings (canonical equivalence), and a signature line is
// cut into characters (grapheme clusters) as Swift's hasPrefix and split do.

export class NoteError extends Error {
  constructor(message) { super(message); this.name = 'NoteError'; }
}

// Standard padded base64, strictly: the text must be what encoding its bytes gives back, so one
// value has one spelling (atob alone would skip spaces and accept stray padding bits).
export function b64decode(text) {
  if (typeof text !== 'string' || text.length % 4 !== 0) return null;
  let raw;
  try { raw = atob(text); } catch { return null; }
  const bytes = Uint8Array.from(raw, (c) => c.charCodeAt(0));
  return b64encode(bytes) === text ? bytes : null;
}
export function b64encode(bytes) {
  let raw = '';
  for (let i = 0; i < bytes.length; i += 0x8000) raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(raw);
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}
export const equalBytes = (a, b) => !!a && !!b && a.length === b.length && a.every((x, i) => x === b[i]);
export async function sha256(...parts) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', concat(...parts)));
}
export const utf8 = (text) => new TextEncoder().encode(text);
// A JS string may hold a lone surrogate (a JSON \ud800 escape); a Swift String cannot, and
// TextEncoder would turn it into U+FFFD: such a text is refused rather than compared.
export function wellFormed(text) {
  return typeof text === 'string' && new TextDecoder().decode(utf8(text)) === text;
}
const same = (a, b) => a.normalize('NFD') === b.normalize('NFD');   // Swift's String ==
const hex8 = (n) => n.toString(16).padStart(8, '0');
const bigEndian32 = (b) => ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;

// Foundation's whitespacesAndNewlines (JS trim also drops U+FEFF and keeps U+0085).
const SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const EDGE = new RegExp(`^${SPACE}+|${SPACE}+$`, 'g');

async function keyId(name, type, publicKey) {
  return bigEndian32(await sha256(utf8(name), Uint8Array.of(0x0a, type), publicKey));
}

async function parseKey(text, type, usage) {
  if (typeof text !== 'string' || !wellFormed(text)) throw new NoteError(usage);
  // The base64 part may itself hold '+': cut at the first two only.
  const all = text.replace(EDGE, '').split('+');
  const parts = all.length < 3 ? all : [all[0], all[1], all.slice(2).join('+')];
  const key = parts.length === 3 ? b64decode(parts[2]) : null;
  if (!key || !/^[0-9a-fA-F]{8}$/.test(parts[1]) || key.length !== 33 || key[0] !== type) throw new NoteError(usage);
  const name = parts[0];
  if (!name || /[\p{White_Space}\u0000-\u001f+]/u.test(name)) {
    throw new NoteError(`a key name must be non-empty, without spaces or '+': ${JSON.stringify(name)}`);
  }
  const publicKey = key.subarray(1);
  const id = await keyId(name, type, publicKey);
  if (id !== parseInt(parts[1], 16)) throw new NoteError(`key id ${parts[1]} does not match its name and key`);
  return { name, keyId: id, publicKey, text: `${name}+${hex8(id)}+${b64encode(key)}` };
}
export const parseVerifierKey = (text) =>
  parseKey(text, 0x01, 'a verifier key looks like name+<8 hex digits>+<base64 of 0x01 and 32 key bytes>');
export const parseWitnessKey = (text) =>
  parseKey(text, 0x04, 'a witness key looks like name+<8 hex digits>+<base64 of 0x04 and 32 key bytes>');

// On shards, shard k's checkpoint key is the deployment's under the shard's origin.
export async function renamedKey(key, name) {
  const id = await keyId(name, 0x01, key.publicKey);
  return parseVerifierKey(`${name}+${hex8(id)}+${b64encode(concat(Uint8Array.of(0x01), key.publicKey))}`);
}

// Ed25519 as CryptoKit answers it: a key that does not import verifies nothing. A browser without
// Ed25519 in WebCrypto throws (never "does not verify", which would read as tampering).
async function ed25519(publicKey, signature, message) {
  try {
    const key = await crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
  } catch (err) {
    if (err && err.name === 'NotSupportedError') {
      throw new Error('this browser\'s WebCrypto has no Ed25519 to check signatures with: use ledger audit members');
    }
    return false;
  }
}

const segmenter = typeof Intl !== 'undefined' && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;
const characters = (s) => (segmenter ? Array.from(segmenter.segment(s), (x) => x.segment) : Array.from(s));

// The note's text (ending in its newline) and its signature lines, checked for form only:
// [{name, keyId, bytes, line}]. At most 64 lines, as SignedNote.swift.
export function parseNote(note) {
  if (typeof note !== 'string' || !wellFormed(note)) throw new NoteError('a signed note is text');
  if (!note.endsWith('\n')) throw new NoteError('a signed note ends with a newline');
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new NoteError('a note holds no control characters but newlines');
  // The text ends at the last blank line; the signature lines follow it.
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('no blank line between the note text and its signatures');
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > 64) throw new NoteError('more than 64 signatures');
  const signatures = lines.map((line) => {
    const malformed = new NoteError(`malformed signature line: ${JSON.stringify(line)}`);
    const chars = characters(line);
    if (chars[0] !== '\u2014' || chars[1] !== ' ') throw malformed;
    const fields = [''];
    for (const c of chars.slice(2)) if (c === ' ') fields.push(''); else fields[fields.length - 1] += c;
    const blob = fields.length === 2 && fields[0] ? b64decode(fields[1]) : null;
    if (!blob || blob.length <= 4) throw malformed;
    return { name: fields[0], keyId: bigEndian32(blob), bytes: blob.subarray(4), line: line + '\n' };
  });
  return { text: note.slice(0, split) + '\n', signatures };
}

// The checkpoint body: origin, size (decimal, no leading zero, an Int64), root (32 bytes of
// base64), then extension lines, none empty. A size past 2^53 is refused: no log is that long,
// and the console's positions are numbers.
export function parseCheckpoint(text) {
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new NoteError('a checkpoint has at least three lines: origin, size, root hash');
  if (lines.some((l) => !l)) throw new NoteError('a checkpoint has no empty lines');
  const sizeText = lines[1];
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || BigInt(sizeText) > 0x7fffffffffffffffn) {
    throw new NoteError(`checkpoint size ${JSON.stringify(sizeText)} is not a decimal number without leading zeroes`);
  }
  if (!Number.isSafeInteger(Number(sizeText))) throw new NoteError(`checkpoint size ${sizeText} is past what the console reads`);
  const rootHash = b64decode(lines[2]);
  if (!rootHash || rootHash.length !== 32) throw new NoteError('checkpoint root hash is not 32 bytes of standard base64');
  return { origin: lines[0], size: Number(sizeText), rootHash };
}

// The witness's cosignature time of text among the lines, or null: none by it, or one that does
// not verify (CosignatureVerifier.time throws there; here the witness is just not counted).
async function cosignedAt(witness, text, signatures) {
  let time = null;
  for (const s of signatures) {
    if (!same(s.name, witness.name) || s.keyId !== witness.keyId) continue;
    if (s.bytes.length !== 72) return null;
    const stamp = new DataView(s.bytes.buffer, s.bytes.byteOffset, 8).getBigUint64(0);
    const message = utf8(`cosignature/v1\ntime ${stamp}\n${text}`);
    if (stamp > 0x7fffffffffffffffn || !(await ed25519(witness.publicKey, s.bytes.subarray(8), message))) return null;
    if (time === null || stamp > time) time = stamp;
  }
  return time;
}

// Opens a signed checkpoint with the log's key (parsed), as Checkpoint.open does, and reads the
// other lines: witnesses (parsed) that cosigned it, and every other line's name.
export async function openCheckpoint(note, key, witnesses = []) {
  const { text, signatures } = parseNote(note);
  let verified = false;
  const others = [];
  for (const s of signatures) {
    if (!same(s.name, key.name) || s.keyId !== key.keyId) { others.push(s.name); continue; }
    // One line of the key that fails refuses the note, whatever the others say.
    if (!(await ed25519(key.publicKey, s.bytes, utf8(text)))) {
      throw new NoteError(`the signature by ${key.name} does not verify: the note was altered or signed by another key`);
    }
    verified = true;
  }
  if (!verified) throw new NoteError(`not signed by the key ${key.name}+${hex8(key.keyId)} (signed by another key?)`);
  const checkpoint = parseCheckpoint(text);
  if (!same(checkpoint.origin, key.name)) {
    throw new NoteError(`checkpoint origin ${checkpoint.origin} is not the key's name ${key.name}`);
  }
  const cosigners = [];
  for (const w of witnesses) {
    const time = await cosignedAt(w, text, signatures);
    if (time !== null) cosigners.push({ name: w.name, time: Number(time) });
  }
  return { ...checkpoint, text, otherSignatures: others, cosigners };
}
