// The log's inclusion proofs checked in the browser as the Swift verifier checks them
// (TransparencyLog MerkleProof, EvidenceVerifier.checkInclusion; RFC 6962/9162). Pure functions
// over Uint8Array; each refusal is an Error whose message says which step failed, for the caller
// to name its link. Contract:
//   - leafHash(leaf) → SHA-256(0x00 ‖ leaf), the tree's hash of a leaf's bytes.
//   - verifyInclusion(leaf, position, inclusion, checkpoint): the RFC 6962/9162 inclusion of leaf
//     at position (leaf index position − 1) under checkpoint {size, rootHash}, from the inclusion
//     JSON {position, treeSize, leafIndex, leafHash, hashes}; throws unless it holds.
import { sha256, b64decode, equalBytes } from './note.js';

export const leafHash = (leaf) => sha256(Uint8Array.of(0x00), leaf);
const nodeHash = (left, right) => sha256(Uint8Array.of(0x01), left, right);

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
