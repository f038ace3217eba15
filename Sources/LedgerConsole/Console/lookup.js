// A collaboration's lookup answer (GET /v1/audit/lookup?collaboration=ID[&at=T]) checked in the
// browser, trusting nothing but the log's verifier key: a second implementation of
// LookupVerifier.swift's links 1–8, in its order and with its refusals (docs/TRUST.md, "The
// verifiable index": "Lookups", "A key's listing", "Revision records", "Members at a time").
// Contract:
//   verifyLookup(answer, {key, witnesses, collaboration, atMicros, through, timesRiseFrom}) →
//   {treeSize, origin, positions, revisionSize, recordPosition, recordedThrough, events,
//    otherSignatures, cosigners, shard, topTreeSize, topOrigin}
//   - key: the verifier key's text or parseVerifierKey's answer; witnesses: optional witness keys
//     (texts or parsed), reported in cosigners when their cosignature verifies. A key text that is
//     no key throws NoteError (the input, not the answer, is wrong).
//   - On shards (top), key is the deployment's: shards.js checks links 1 and 8; shard is the
//     answer's, topTreeSize and topOrigin the top checkpoint's (treeSize and origin the shard's),
//     otherSignatures and cosigners the top's (witnesses cosign the top log). Else the three null.
//   - atMicros (BigInt or integer Number, microseconds since 1970): link 7; recordedThrough is then
//     the last position recorded at or before it, else null. through: the revision must cover it.
//   - events: each listed leaf read back (leaf.js readLeaf), position its place in the log, and
//     leafPosition the number inside the leaf (BigInt; unchecked for listed events, as in Swift:
//     the position is the leaf's place in the log, TRUST.md "Keys").
//   - Any link that does not hold throws LinkError(link, reason) (link.js): .link one of
//     checkpoint, top checkpoint, top entry, top leaf, top inclusion, top, key, page, map, shard,
//     record, revision, proof, event N, listing, positions, at, first after, times; .message
//     "link: reason" as the Swift verifier words it.
import { NoteError, parseVerifierKey, parseWitnessKey, openCheckpoint, b64decode, b64encode, equalBytes, utf8, wellFormed } from './note.js';
import { verifyInclusion, leafHash } from './merkle.js';
import { readLeaf } from './leaf.js';
import { indexHash, parsePrefixProof, verifyPrefixProof } from './prefix.js';
import { timeText } from './times.js';
import { openOnShards, checkMap } from './shards.js';
import { refuse } from './link.js';

const PREFIX = 'collaboration-';

// An entry's leaf bytes (strict base64), then its inclusion at its own position under the
// checkpoint, each refusal named what.
async function includedLeaf(entry, checkpoint, what) {
  const e = entry && typeof entry === 'object' ? entry : {};
  const leaf = b64decode(e.leaf);
  if (!leaf) refuse(what, 'the leaf is not standard base64');
  const position = e.inclusion && typeof e.inclusion === 'object' ? e.inclusion.position : undefined;
  try {
    await verifyInclusion(leaf, position, e.inclusion, checkpoint);
  } catch (err) {
    refuse(what, err.message);
  }
  return { position, leaf };
}

// IndexRevision(streamId:type:data:): an IndexRevisionRecorded of ledger-index whose data is
// exactly {"logSize":N,"root":"R"}, N an Int64 ≥ 0 in plain decimal, R 32 bytes of base64.
function readRevision(event) {
  if (event.streamId !== 'ledger-index' || event.type !== 'IndexRevisionRecorded') {
    throw new Error(`a ${event.type} of ${event.streamId}, not an IndexRevisionRecorded of ledger-index`);
  }
  const data = event.data;
  const bad = new Error(`the data is not a revision's: ${data.slice(0, 120)}`);
  const comma = data.indexOf(',');
  const head = '{"logSize":', middle = ',"root":"';
  if (!data.startsWith(head) || comma < 0 || data.length !== comma + middle.length + 44 + 2 || !data.startsWith(middle, comma)) throw bad;
  const sizeText = data.slice(head.length, comma);   // ASCII so far: indexes are bytes
  if (!/^[+-]?[0-9]+$/.test(sizeText)) throw bad;
  const size = BigInt(sizeText);
  const root = b64decode(data.slice(comma + middle.length, -2));
  if (size < -(2n ** 63n) || size >= 2n ** 63n || !root || root.length !== 32) throw bad;
  if (size < 0n) throw new Error(`a log size of ${size}`);
  if (data !== `{"logSize":${size},"root":"${b64encode(root)}"}`) throw new Error(`the data is not written as a revision's: ${data.slice(0, 120)}`);
  return { logSize: size, root };
}

// KeyListing.verify for a collaboration key: the proof under the revision's root; positions rising
// strictly from 1, none past N; each leaf an event of the stream collaboration-<id> (ids compared as
// bytes: both texts well formed, so as UTF-16 too); the value chain over the listing the proven
// value, or nothing listed for an absent key. Answers the positions.
async function checkListing(revision, proofBytes, listed, id) {
  const proof = parsePrefixProof(proofBytes);
  let answer;
  try {
    answer = await verifyPrefixProof(proof, await indexHash(0x10, utf8(id)), revision.root);
  } catch (err) {
    throw new Error(`the proof of collaboration ${id} does not hold under the revision's root: ${err.message}`);
  }
  let previous = 0, value = new Uint8Array(32);
  for (const item of listed) {
    if (!(item.position > previous)) {
      throw new Error(`position ${item.position} is listed after ${previous}: positions rise strictly from 1`);
    }
    if (item.position > revision.logSize) {
      throw new Error(`position ${item.position} lies past the revision, which covers 1 … ${revision.logSize}`);
    }
    const stream = item.event ? item.event.streamId : null;
    if (stream === null || !stream.startsWith(PREFIX) || stream.slice(PREFIX.length) !== id) {
      throw new Error(`the leaf listed at position ${item.position} does not name collaboration ${id}`);
    }
    const step = new Uint8Array(8);
    new DataView(step.buffer).setBigUint64(0, BigInt(item.position));
    value = await indexHash(0x12, value, step, await leafHash(item.leaf));
    previous = item.position;
  }
  if (!answer.present && listed.length) {
    throw new Error(`collaboration ${id} is proven absent, yet ${listed.length} events are listed for it`);
  }
  if (answer.present && !equalBytes(value, answer.value)) {
    throw new Error(`the listed events do not chain to collaboration ${id}'s value under the revision: an event is missing, added or changed`);
  }
  return listed.map((item) => item.position);
}

// Link 7: the last position recorded at or before at, proven by the first leaf recorded after
// it; every listed leaf must agree that times rise.
async function bound(answer, at, checkpoint, revision, listed, timesRiseFrom) {
  const time = timeText(at);
  if (answer.firstAfter == null) {
    refuse('at', `the log of ${checkpoint.size} events holds none recorded after ${time}, so later events could still be ` +
      'recorded at or before it: ask again once the log has moved past it');
  }
  const { position: boundary, leaf } = await includedLeaf(answer.firstAfter, checkpoint, 'first after');
  const event = readLeaf(leaf);
  if (!event || event.position !== BigInt(boundary)) refuse('first after', `the leaf at ${boundary} is not the event at that position`);
  if (!(event.recordedAtMicros > at)) {
    refuse('first after', `the leaf at ${boundary} was recorded at ${timeText(event.recordedAtMicros)}, not after ${time}`);
  }
  if (boundary < timesRiseFrom) {
    refuse('times', `the first leaf recorded after ${time} is at ${boundary}, before position ${timesRiseFrom} from which ` +
      "the log's times rise: earlier events may be out of their times' order");
  }
  if (boundary - 1 > revision.logSize) {
    refuse('revision', `it covers positions 1 … ${revision.logSize}, not the ${boundary - 1} recorded at or before ${time}: ` +
      'an event between would be missing');
  }
  for (const item of listed) {
    if (!item.event) refuse('times', `the leaf at ${item.position} is not an event's`);
    const recorded = item.event.recordedAtMicros;
    if ((item.position < boundary) !== (recorded <= at)) {
      refuse('times', `the event at ${item.position} was recorded at ${timeText(recorded)}, but the first recorded after ` +
        `${time} is at ${boundary}: times do not rise`);
    }
  }
  return boundary - 1;
}

const asMicros = (v) => (v == null ? null : typeof v === 'bigint' ? v : Number.isSafeInteger(v) ? BigInt(v) : NaN);

export async function verifyLookup(answer, { key, witnesses = [], collaboration, atMicros = null, through = null, timesRiseFrom = 1 } = {}) {
  // The caller's inputs first: a wrong one is no fault of the answer.
  const verifier = typeof key === 'string' ? await parseVerifierKey(key) : key;
  const witnessKeys = await Promise.all((witnesses || []).map((w) => (typeof w === 'string' ? parseWitnessKey(w) : w)));
  if (!verifier || !verifier.publicKey) throw new TypeError('verifyLookup needs the log\'s verifier key');
  if (typeof collaboration !== 'string' || !wellFormed(collaboration)) throw new TypeError('verifyLookup needs the collaboration id asked');
  const at = asMicros(atMicros);
  if (Number.isNaN(at)) throw new TypeError('atMicros is a BigInt or an integer of microseconds since 1970');
  if (through != null && !Number.isSafeInteger(through)) throw new TypeError('through is a position, an integer');
  // Unchecked, a null or NaN would skip the times link's bound silently.
  if (!Number.isSafeInteger(timesRiseFrom) || timesRiseFrom < 1) throw new TypeError('timesRiseFrom is a position, 1 or more');
  if (!answer || typeof answer !== 'object') refuse('checkpoint', 'the answer is not a lookup answer');
  // 1. The checkpoint, signed with the key; on shards, through the top log (shards.js).
  let checkpoint, top = null;
  if (answer.top != null) {
    ({ checkpoint, top } = await openOnShards(answer.checkpoint, answer.top, verifier, witnessKeys));
  } else {
    try {
      checkpoint = await openCheckpoint(answer.checkpoint, verifier, witnessKeys);
    } catch (err) {
      if (!(err instanceof NoteError)) throw err;
      refuse('checkpoint', err.message);
    }
  }
  // 2. The key is the one asked: exactly one named, and that collaboration, byte for byte.
  const named = answer.collaboration != null, identity = answer.identity != null;
  if (named === identity) refuse('key', 'an answer names one collaboration or one identity');
  if (identity) {
    const root = b64decode(answer.identity);
    if (!root || root.length !== 32) refuse('key', `identity ${answer.identity} is not the standard base64 of a 32-byte root hash`);
    refuse('key', `the answer is for identity ${answer.identity}, not collaboration ${collaboration}`);
  }
  if (!wellFormed(answer.collaboration) || answer.collaboration !== collaboration) {
    refuse('key', `the answer is for collaboration ${answer.collaboration}, not collaboration ${collaboration}`);
  }
  if (answer.next != null) {
    refuse('page', `the answer is one page of the key's list, whose next begins after ${answer.next}: ` +
      'merge every page (LedgerClient.lookup does) and check them as one');
  }
  // 8. On shards, before the record: the map puts the collaboration on the answer's shard, so
  // another shard's answer (an honest absence there) is refused.
  if (top) await checkMap(answer, collaboration, top);
  // 3. The record: included, an IndexRevisionRecorded written exactly, past its own N.
  const { position: recordPosition, leaf: recordLeaf } = await includedLeaf(answer.record, checkpoint, 'record');
  const recorded = readLeaf(recordLeaf);
  if (!recorded) refuse('record', 'the leaf is not an event\'s');
  if (recorded.position !== BigInt(recordPosition)) refuse('record', `the leaf holds position ${recorded.position}, not ${recordPosition}`);
  let revision;
  try {
    revision = readRevision(recorded);
  } catch (err) {
    refuse('record', err.message);
  }
  if (!(revision.logSize < BigInt(recordPosition))) {
    refuse('record', `a revision of ${revision.logSize} recorded at position ${recordPosition}, not after it`);
  }
  revision.logSize = Number(revision.logSize);   // below a safe position: exact
  const said = answer.revision && typeof answer.revision === 'object' ? answer.revision : {};
  if (said.logSize !== revision.logSize || said.root !== b64encode(revision.root)) {
    refuse('revision', `the answer says ${said.logSize} events, the record it proves says ${revision.logSize}`);
  }
  // 4. The proof's bytes, and each listed leaf included at its position.
  const proofBytes = b64decode(answer.proof);
  if (!proofBytes) refuse('proof', 'not standard base64');
  const entries = Array.isArray(answer.events) ? answer.events : refuse('listing', 'the answer lists no events');
  const listed = [];
  for (const [offset, entry] of entries.entries()) {
    const { position, leaf } = await includedLeaf(entry, checkpoint, `event ${offset + 1}`);
    listed.push({ position, leaf, event: readLeaf(leaf) });
  }
  // 5. The listing under the revision; 6. positions as it shows them.
  let positions;
  try {
    positions = await checkListing(revision, proofBytes, listed, collaboration);
  } catch (err) {
    refuse('listing', err.message);
  }
  const claimed = Array.isArray(answer.positions) ? answer.positions : [];
  if (!Array.isArray(answer.positions) || claimed.length !== positions.length || claimed.some((p, i) => p !== positions[i])) {
    refuse('positions', `the answer says ${Array.isArray(answer.positions) ? claimed.length : 'none'}, the proof shows ${positions.length}`);
  }
  if (through != null && revision.logSize < through) {
    refuse('revision', `it covers positions 1 … ${revision.logSize}, not ${through}: an event after it would be missing`);
  }
  // 7. At a time: bounded by the first leaf recorded after it.
  const recordedThrough = at === null ? null : await bound(answer, at, checkpoint, revision, listed, timesRiseFrom);
  // Witnesses cosign the top log on shards: its checkpoint's lines are the ones reported.
  const cosigned = top ? top.checkpoint : checkpoint;
  return {
    treeSize: checkpoint.size, origin: checkpoint.origin, positions, revisionSize: revision.logSize, recordPosition, recordedThrough,
    // Read back: verified above to name the collaboration, so each is an event.
    events: listed.map(({ position, event }) => ({ ...event, leafPosition: event.position, position })),
    otherSignatures: cosigned.otherSignatures, cosigners: cosigned.cosigners,
    shard: top ? top.recorded.shard : null, topTreeSize: top ? top.checkpoint.size : null, topOrigin: top ? top.checkpoint.origin : null,
  };
}
