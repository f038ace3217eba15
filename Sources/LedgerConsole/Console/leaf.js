// A log leaf's bytes read back in the browser as the Swift verifier reads them (LedgerDomain
// EventLeaf.event(from:)). Pure; a null is the caller's to refuse, under its own link. Contract:
//   - readLeaf(bytes) → event | null: exactly one event's bytes, else null (not a Uint8Array, a
//     length past the end, a text not UTF-8, a byte left over). event: {position, streamId,
//     version, eventId, type, data, metadata, recordedAtMicros, recordedAt}; position, version and
//     recordedAtMicros BigInt (Int64 bit patterns), eventId the UUID's lowercase text, recordedAt
//     times.js timeText of recordedAtMicros.
import { timeText } from './times.js';

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
