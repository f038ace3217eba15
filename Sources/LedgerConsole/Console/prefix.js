// The verifiable index's hashes and prefix proofs checked in the browser as the Swift verifier
// checks them (LedgerIndex PrefixProof, PrefixProof+Bytes.swift and IndexHashing; docs/TRUST.md
// "The verifiable index"). Pure functions over Uint8Array; each refusal is an Error whose message
// says which step failed, for the caller to name its link. Contract:
//   - indexHash(tag, ...parts) → SHA-256(tag ‖ parts…), tag 0x10 … 0x14 (TRUST.md's table).
//   - parsePrefixProof(bytes) → {terminal, siblings}: a proof's bytes exactly; throws otherwise.
//   - verifyPrefixProof(proof, keyHash, root) → {present, value}: the proof of keyHash (the hash
//     of the key asked) under root, TRUST.md's rules 1–4 in their order; throws unless they hold.
import { sha256, b64encode, equalBytes } from './note.js';

// The index's hashes, each input opening with its own tag (0x10 … 0x14, TRUST.md's table).
export const indexHash = (tag, ...parts) => sha256(Uint8Array.of(tag), ...parts);

// A prefix proof's bytes (PrefixProof+Bytes.swift): kind 1 found (value), 2 another key's leaf
// (its key hash, then its value), 3 empty; the depth as a big-endian u16, at most 256 (rule 1);
// that many 32-byte siblings, top down; nothing after.
export function parsePrefixProof(bytes) {
  let at = 0;
  const take = (n) => {
    if (bytes.length - at < n) throw new Error(`a proof cut short at byte ${bytes.length}`);
    at += n;
    return bytes.subarray(at - n, at);
  };
  const kind = take(1)[0];
  let terminal;
  if (kind === 1) terminal = { kind: 'found', value: take(32) };
  else if (kind === 2) terminal = { kind: 'leaf', key: take(32), value: take(32) };
  else if (kind === 3) terminal = { kind: 'empty' };
  else throw new Error(`a terminal of kind ${kind}, not 1, 2 or 3`);
  const big = take(2);
  const depth = (big[0] << 8) | big[1];
  if (depth > 256) throw new Error(`a path of ${depth} levels, past 256`);
  const siblings = [];
  for (let i = 0; i < depth; i++) siblings.push(take(32));
  if (at !== bytes.length) throw new Error(`${bytes.length - at} bytes after the proof`);
  return { terminal, siblings };
}

// Bit 0 is the most significant bit of the first byte.
const bit = (hash, i) => (hash[i >> 3] >> (7 - (i & 7))) & 1;
function commonPrefix(a, b) {
  for (let i = 0; i < 256; i++) if (bit(a, i) !== bit(b, i)) return i;
  return 256;
}

// PrefixProof.verify, TRUST.md's rules in their order: 1 depth ≤ 256 (checked first, so no bit
// past 255 is read); 2 another key's leaf is not the key's own and lies on its path; 3 the
// deepest sibling is not empty (a parent over one key is never made); 4 the path folds up to
// the root. keyHash is the hash of the key asked, never one taken from the proof.
export async function verifyPrefixProof(proof, keyHash, root) {
  const depth = proof.siblings.length;
  if (depth > 256) throw new Error(`a path of ${depth} levels, past 256`);
  const t = proof.terminal;
  let node, answer;
  if (t.kind === 'found') {
    node = await indexHash(0x13, keyHash, t.value);
    answer = { present: true, value: t.value };
  } else if (t.kind === 'leaf') {
    if (equalBytes(t.key, keyHash)) throw new Error("an absence shown by the key's own leaf");
    if (commonPrefix(t.key, keyHash) < depth) throw new Error(`the leaf at depth ${depth} is not on the key's path`);
    node = await indexHash(0x13, t.key, t.value);
    answer = { present: false, value: null };
  } else {
    node = new Uint8Array(32);
    answer = { present: false, value: null };
  }
  if (depth > 0 && proof.siblings[depth - 1].every((b) => b === 0)) {
    throw new Error(`an empty sibling at depth ${depth}, where the tree holds keys`);
  }
  for (let level = depth; level > 0; level--) {
    const sibling = proof.siblings[level - 1];
    node = bit(keyHash, level - 1) === 0 ? await indexHash(0x14, node, sibling) : await indexHash(0x14, sibling, node);
  }
  if (!equalBytes(node, root)) throw new Error(`the path does not lead to the root ${b64encode(root)}`);
  return answer;
}
