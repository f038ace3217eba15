// The log's proofs and leaves, and the index's prefix proofs, checked in the browser as the Swift
// verifier checks them (TransparencyLog MerkleProof, EvidenceVerifier.checkInclusion,
// LedgerDomain EventLeaf and RecordedTime, LedgerIndex PrefixProof and IndexHashing; docs/TRUST.md
// "The verifiable index"). Pure functions over Uint8Array; each refusal is an Error whose message
// says which step failed, for the caller to name its link. Contract:
//   - verifyInclusion(leaf, position, inclusion, checkpoint): the RFC 6962/9162 inclusion of leaf
//     at position (leaf index position − 1) under checkpoint {size, rootHash}, from the inclusion
//     JSON {position, treeSize, leafIndex, leafHash, hashes}; throws unless it holds.
//   - readLeaf(bytes) → event | null: exactly one event's bytes, or null (EventLeaf.event(from:)).
//   - timeText(micros) → RFC 3339 text with six fractional digits, micros a BigInt.
//   - parsePrefixProof(bytes), verifyPrefixProof(proof, keyHash, root) → {present, value}.
import { sha256, b64decode, b64encode, equalBytes } from './note.js';

export const leafHash = (leaf) => sha256(Uint8Array.of(0x00), leaf);
const nodeHash = (left, right) => sha256(Uint8Array.of(0x01), left, right);

// The index's hashes, each input opening with its own tag (0x10 … 0x14, TRUST.md's table).
export const indexHash = (tag, ...parts) => sha256(Uint8Array.of(tag), ...parts);

// EvidenceVerifier.checkInclusion: the proof is the entry's, of the checkpoint's size, carries the
// leaf's hash, and its path leads from that hash to the checkpoint's root.
export async function verifyInclusion(leaf, position, inclusion, checkpoint) {
  const p = inclusion && typeof inclusion === 'object' ? inclusion : {};
  if (!Number.isSafeInteger(position) || position < 1 || p.position !== position || p.leafIndex !== position - 1) {
    throw new Error(`the proof is for position ${p.position}, leaf ${p.leafIndex}, not the entry's`);
  }
  if (p.treeSize !== checkpoint.size) {
    throw new Error(`the proof is for tree size ${p.treeSize} but the checkpoint is of size ${checkpoint.size}`);
  }
  const hash = await leafHash(leaf);
  if (!equalBytes(b64decode(p.leafHash), hash)) throw new Error('leafHash is not the hash of the leaf');
  if (!Array.isArray(p.hashes)) throw new Error('a hash is not standard base64');
  const path = p.hashes.map((text) => {
    const h = b64decode(text);
    if (!h) throw new Error('a hash is not standard base64');
    return h;
  });
  await checkPath(BigInt(p.leafIndex), BigInt(checkpoint.size), hash, path, checkpoint.rootHash);
}

// RFC 9162 §2.1.3.2, as MerkleProof.verifyInclusion. BigInt: JS bit operators cut at 32 bits.
async function checkPath(index, size, hash, proof, root) {
  if (index < 0n || index >= size) throw new Error(`leaf index ${index} is not below tree size ${size}`);
  if (!proof.every((h) => h.length === 32)) throw new Error('every hash must be 32 bytes');
  let fn = index, sn = size - 1n, r = hash;
  for (const p of proof) {
    // sn halves each step, so a proof too long is stopped here within 64 hashes.
    if (sn === 0n) throw new Error(`inclusion proof has ${proof.length} hashes, too many for tree size ${size}`);
    if ((fn & 1n) === 1n || fn === sn) {
      r = await nodeHash(p, r);
      if ((fn & 1n) === 0n) while ((fn & 1n) === 0n && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n; sn >>= 1n;
  }
  if (sn !== 0n) throw new Error(`inclusion proof has ${proof.length} hashes, too few for tree size ${size}`);
  if (!equalBytes(r, root)) throw new Error('inclusion proof does not lead to the root hash');
}

// Texts of a leaf: UTF-8 exactly. fatal refuses what Swift would read as U+FFFD and then fail to
// write back; ignoreBOM keeps a leading U+FEFF, which Swift keeps too.
const strictUTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// u64(position) ‖ str(streamId) ‖ u64(version) ‖ uuid ‖ str(type) ‖ str(data) ‖ str(metadata) ‖
// i64(recordedAtMicros), integers big-endian, str a u32 length then UTF-8. Null unless the bytes
// are exactly that: every length inside the leaf, every text UTF-8, nothing left over. Integers
// are BigInt (Int64 bit patterns, as Swift reads them).
export function readLeaf(leaf) {
  if (!(leaf instanceof Uint8Array)) return null;
  const view = new DataView(leaf.buffer, leaf.byteOffset, leaf.byteLength);
  let at = 0;
  const take = (n) => {
    if (leaf.length - at < n) return null;
    at += n;
    return leaf.subarray(at - n, at);
  };
  const int64 = () => (take(8) ? view.getBigInt64(at - 8) : null);
  const text = () => {
    const length = take(4) ? view.getUint32(at - 4) : null;
    const bytes = length === null ? null : take(length);
    if (!bytes) return null;
    try { return strictUTF8.decode(bytes); } catch { return null; }
  };
  const position = int64(), streamId = text(), version = int64(), id = take(16);
  const type = text(), data = text(), metadata = text(), recordedAtMicros = int64();
  if ([position, streamId, version, id, type, data, metadata, recordedAtMicros].includes(null) || at !== leaf.length) return null;
  const h = Array.from(id, (b) => b.toString(16).padStart(2, '0')).join('');
  const eventId = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  return { position, streamId, version, eventId, type, data, metadata, recordedAtMicros, recordedAt: timeText(recordedAtMicros) };
}

// RFC3339.text(micros:): UTC, six fractional digits, by integer calendar arithmetic (H. Hinnant's
// civil_from_days, with Swift's truncating division, which BigInt shares).
export function timeText(micros) {
  let seconds = micros / 1000000n, fraction = micros % 1000000n;
  if (fraction < 0n) { seconds -= 1n; fraction += 1000000n; }
  let day = seconds / 86400n, second = seconds % 86400n;
  if (second < 0n) { day -= 1n; second += 86400n; }
  const z = day + 719468n;
  const era = (z >= 0n ? z : z - 146096n) / 146097n;
  const doe = z - era * 146097n;
  const yoe = (doe - doe / 1460n + doe / 36524n - doe / 146096n) / 365n;
  const doy = doe - (365n * yoe + yoe / 4n - yoe / 100n);
  const mp = (5n * doy + 2n) / 153n;
  const d = doy - (153n * mp + 2n) / 5n + 1n;
  const m = mp < 10n ? mp + 3n : mp - 9n;
  const y = yoe + era * 400n + (m <= 2n ? 1n : 0n);
  const pad = (v, w) => String(v).padStart(w, '0');
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(second / 3600n, 2)}:${pad((second / 60n) % 60n, 2)}:` +
    `${pad(second % 60n, 2)}.${pad(fraction, 6)}Z`;
}

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
