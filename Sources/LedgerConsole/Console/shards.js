// A lookup answer of a ledger on shards checked in the browser: its top level and its partition
// map, as EvidenceVerifier.openCheckpoint (EvidenceVerifier+Top.swift) and LookupVerifier.swift's
// link 8 (checkMap) check them; PostgreSQL's hashtext as PostgresHashText.swift computes it.
// Contract:
//   - openOnShards(note, top, key, witnesses) → {checkpoint, top: {recorded, checkpoint}}: the top
//     log's checkpoint signed with key (the deployment's; witnesses as note.js openCheckpoint
//     reports them, on the top checkpoint: witnesses cosign the top log, EvidenceVerifier.verify(_:
//     top:…)); its entry the leaf of a ShardCheckpointRecorded of stream shard-k of this deployment,
//     included under it; note, the answer's checkpoint, signed with the same key under shard k's
//     origin and exactly the tree the entry records. recorded: the entry's data, read.
//   - checkMap(answer, collaboration, top): link 8, the map the entry names (answer.map) included
//     under the top checkpoint at that position, a ShardMapRecorded of shard-map written exactly,
//     and it puts the collaboration on the answer's shard.
//   - hashtext(text) → the int4 PostgreSQL returns; partition(id, count) → hashtext(id) & (count − 1)
//     read unsigned, PL/Proxy's RUN ON hashtext(id) over count (a power of two) partitions.
//   - A link that does not hold throws LinkError(link, reason) (link.js), link one of top
//     checkpoint, top entry, top leaf, top inclusion, checkpoint, top, map, shard (the Swift
//     messages' prefixes).
import { NoteError, openCheckpoint, renamedKey, b64decode, b64encode, concat, equalBytes, utf8, wellFormed } from './note.js';
import { verifyInclusion } from './merkle.js';
import { readLeaf } from './leaf.js';
import { recordedMicros } from './times.js';
import { repeatedName } from './json.js';
import { refuse } from './link.js';

const same = (a, b) => a.normalize('NFD') === b.normalize('NFD');   // Swift's String ==

// hash_bytes (src/common/hashfn.c), Bob Jenkins' lookup3 over the text's UTF-8 bytes read as
// little-endian words, for a deterministic collation (every database the ledger makes). The state
// is a Uint32Array: each store is modulo 2^32, as Swift's &+ and &-, and ^ reads its operands as
// int32s, whose bits are the same.
const rot = (x, k) => (x << k) | (x >>> (32 - k));
function mix(h) {
  h[0] -= h[2]; h[0] ^= rot(h[2], 4); h[2] += h[1];
  h[1] -= h[0]; h[1] ^= rot(h[0], 6); h[0] += h[2];
  h[2] -= h[1]; h[2] ^= rot(h[1], 8); h[1] += h[0];
  h[0] -= h[2]; h[0] ^= rot(h[2], 16); h[2] += h[1];
  h[1] -= h[0]; h[1] ^= rot(h[0], 19); h[0] += h[2];
  h[2] -= h[1]; h[2] ^= rot(h[1], 4); h[1] += h[0];
}
function final(h) {
  h[2] ^= h[1]; h[2] -= rot(h[1], 14);
  h[0] ^= h[2]; h[0] -= rot(h[2], 11);
  h[1] ^= h[0]; h[1] -= rot(h[0], 25);
  h[2] ^= h[1]; h[2] -= rot(h[1], 16);
  h[0] ^= h[2]; h[0] -= rot(h[2], 4);
  h[1] ^= h[0]; h[1] -= rot(h[0], 14);
  h[2] ^= h[1]; h[2] -= rot(h[1], 24);
}
export function hashtext(text) {
  const k = utf8(text);
  const start = 0x9e3779b9 + k.length + 3923095;   // the length modulo 2^32, by the store
  const h = Uint32Array.of(start, start, start);   // a, b, c
  const word = (i) => k[i] | (k[i + 1] << 8) | (k[i + 2] << 16) | (k[i + 3] << 24);
  let i = 0;
  for (; k.length - i >= 12; i += 12) {
    h[0] += word(i); h[1] += word(i + 4); h[2] += word(i + 8);
    mix(h);
  }
  // The last 0–11 bytes: 0–3 into a, 4–7 into b, 8–10 into c above its lowest byte (reserved
  // for the length in Jenkins' original).
  for (let offset = 0; i + offset < k.length; offset++) {
    const byte = k[i + offset];
    if (offset < 4) h[0] += byte << (8 * offset);
    else if (offset < 8) h[1] += byte << (8 * (offset - 4));
    else h[2] += byte << (8 * (offset - 7));
  }
  final(h);
  return h[2] | 0;   // Int32(bitPattern:), as PostgreSQL's int4
}
// ShardMapRecorded.partition(of:count:): the hash's bit pattern (UInt32) masked, so a negative
// hash is read unsigned, never as abs() or %.
export const partition = (id, count) => (hashtext(id) & (count - 1)) >>> 0;

// EvidenceVerifier.leafBytes: the entry's canonical bytes (leaf.js readLeaf's layout), rebuilt
// from the entry as the answer gives it. A field that is not of its type is no entry at all (the
// Swift decoder would not read the answer).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function entryLeaf(e) {
  const texts = [e.streamId, e.type, e.data, e.metadata];
  if (!Number.isSafeInteger(e.position) || !Number.isSafeInteger(e.version) || !texts.every(wellFormed)) {
    refuse('top entry', 'it is not an event of the top log');
  }
  if (typeof e.eventId !== 'string' || !UUID.test(e.eventId)) refuse('top entry', `eventId ${e.eventId} is not a UUID`);
  const micros = recordedMicros(e.recordedAt);
  if (micros === null) refuse('top entry', `recordedAt ${e.recordedAt} is not an RFC 3339 time with six fractional digits`);
  const int64 = (v) => { const b = new Uint8Array(8); new DataView(b.buffer).setBigInt64(0, BigInt(v)); return b; };
  const text = (t) => { const b = utf8(t), n = new Uint8Array(4); new DataView(n.buffer).setUint32(0, b.length); return concat(n, b); };
  const id = Uint8Array.from(e.eventId.replace(/-/g, '').match(/../g), (x) => parseInt(x, 16));
  return concat(int64(e.position), text(e.streamId), int64(e.version), id, text(e.type), text(e.data), text(e.metadata), int64(micros));
}

// ShardCheckpointRecorded.entry(type:streamId:data:deployment:): an event ShardCheckpointRecorded
// of stream shard-k whose data (read as Codable reads it: unknown members ignored, map absent or
// null for none) names shard k ≥ 0 and its origin, the deployment key's name + /shard/k.
function readRecorded(e, key) {
  let r = null;
  try { r = JSON.parse(e.data); } catch { /* refused below */ }
  if (r !== null && repeatedName(e.data) !== undefined) refuse('top entry', 'its data names a member twice in one object');
  const int = Number.isSafeInteger, text = (v) => typeof v === 'string' && wellFormed(v);
  if (e.type !== 'ShardCheckpointRecorded' || !r || typeof r !== 'object' || Array.isArray(r) || !int(r.shard) ||
      !text(r.origin) || !int(r.size) || !text(r.rootHash) || !text(r.checkpoint) || !(r.map == null || int(r.map))) {
    refuse('top entry', `it is a ${e.type} of ${e.streamId}, not a shard's recorded checkpoint`);
  }
  if (!(r.shard >= 0) || !same(e.streamId, `shard-${r.shard}`) || !same(r.origin, `${key.name}/shard/${r.shard}`)) {
    refuse('top entry', `it records shard ${r.shard} of ${r.origin} in ${e.streamId}, not a shard of this deployment`);
  }
  return { shard: r.shard, origin: r.origin, size: r.size, rootHash: r.rootHash, checkpoint: r.checkpoint, map: r.map ?? null };
}

// EvidenceVerifier.verifyTop, then openCheckpoint's rest, in their order.
export async function openOnShards(note, top, key, witnesses = []) {
  const t = top && typeof top === 'object' ? top : {};
  let topCheckpoint;
  try {
    topCheckpoint = await openCheckpoint(t.checkpoint, key, witnesses);
  } catch (err) {
    if (!(err instanceof NoteError)) throw err;
    refuse('top checkpoint', err.message);
  }
  const entry = t.entry && typeof t.entry === 'object' ? t.entry : {};
  const leaf = entryLeaf(entry);
  if (!equalBytes(b64decode(t.leaf), leaf)) refuse('top leaf', "it is not the top entry's canonical bytes (it was altered)");
  const recorded = readRecorded(entry, key);
  if (recorded.shard !== t.shard) refuse('top entry', `it records shard ${recorded.shard}, not shard ${t.shard} the evidence names`);
  try {
    await verifyInclusion(leaf, entry.position, t.inclusion, topCheckpoint);
  } catch (err) {
    refuse('top inclusion', err.message);
  }
  // Shard k's key: the deployment's under the shard's origin, so no list of shards or of their
  // keys needs trusting. The shard's checkpoint is opened without witnesses: they cosign the top.
  let checkpoint;
  try {
    checkpoint = await openCheckpoint(note, await renamedKey(key, recorded.origin));
  } catch (err) {
    if (!(err instanceof NoteError)) throw err;
    refuse('checkpoint', err.message);
  }
  if (checkpoint.size !== recorded.size || b64encode(checkpoint.rootHash) !== recorded.rootHash) {
    refuse('top', `the top log's entry records another tree of shard ${recorded.shard} than the answer's checkpoint`);
  }
  return { checkpoint, top: { recorded, checkpoint: topCheckpoint } };
}

// ShardMapRecorded.entry(type:streamId:data:): data exactly its canonical JSON,
// {"partitions":[…]} without spaces, each an Int (an Int64) as JSONEncoder writes it (no -0, no
// leading zero); then a power-of-two count of shard indexes (≥ 0). The partitions as BigInts.
function readMap(event) {
  const match = /^\{"partitions":\[((?:0|-?[1-9][0-9]*)(?:,(?:0|-?[1-9][0-9]*))*)?\]\}$/.exec(event.data);
  const partitions = match ? (match[1] === undefined ? [] : match[1].split(',').map(BigInt)) : null;
  if (event.type !== 'ShardMapRecorded' || !same(event.streamId, 'shard-map') || !partitions ||
      partitions.some((p) => p < -(2n ** 63n) || p >= 2n ** 63n)) {
    refuse('map', `it is a ${event.type} of ${event.streamId}, not the deployment's partition map`);
  }
  const count = partitions.length;
  if (count === 0 || (count & (count - 1)) !== 0 || partitions.some((p) => p < 0n)) {
    refuse('map', `its ${count} partitions are not a power of two, each naming a shard index`);
  }
  return partitions;
}

// Link 8, LookupVerifier.checkMap for a collaboration: the top checkpoint opened already.
export async function checkMap(answer, collaboration, { recorded, checkpoint }) {
  const position = recorded.map;
  if (position === null) {
    refuse('map', `the top log's entry for shard ${recorded.shard} names no partition map (it was recorded before maps were): ` +
      "ask again once the top log records the shard's checkpoint anew");
  }
  const entry = answer.map && typeof answer.map === 'object' ? answer.map : refuse('map', 'the answer carries no partition map');
  const at = entry.inclusion && typeof entry.inclusion === 'object' ? entry.inclusion.position : undefined;
  if (at !== position) refuse('map', `the answer's is at position ${at}, not ${position} the top entry names`);
  const leaf = b64decode(entry.leaf);
  if (!leaf) refuse('map', 'the leaf is not standard base64');
  try {
    await verifyInclusion(leaf, position, entry.inclusion, checkpoint);
  } catch (err) {
    refuse('map', err.message);
  }
  const event = readLeaf(leaf);
  if (!event || event.position !== BigInt(position)) refuse('map', `the leaf at ${position} is not the event at that position`);
  const partitions = readMap(event);
  const p = partition(collaboration, partitions.length);
  if (partitions[p] !== BigInt(recorded.shard)) {
    refuse('shard', `the deployment's map (top log position ${position}) puts ${collaboration} in partition ${p} on shard ` +
      `${partitions[p]}, not shard ${recorded.shard} the answer is of`);
  }
}
