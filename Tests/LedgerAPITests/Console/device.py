"""A simulated recipient device in plain Python (the standard library only), as
LedgerDeviceSimulator's SimulatedPerson does it in Swift: a P-256 key, the identity's leaves (the
device's X9.63 key among random padding keys), the root hash and inclusion path the ledger
recomputes (IdentityProof.rootHash: SHA-256 of the key, then of each pair, the index's bits saying
which side), and ECDSA P-256/SHA-256 signatures over the exact challenge bytes as raw r||s.

The curve arithmetic is the textbook one (affine coordinates, not constant time): fine for a
test's throwaway keys, never for real ones.
"""

import base64
import hashlib
import secrets

# NIST P-256 (SEC 2 secp256r1).
P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
A = P - 3
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
     0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)


def _add(p, q):
    if p is None:
        return q
    if q is None:
        return p
    if p[0] == q[0] and (p[1] + q[1]) % P == 0:
        return None
    if p == q:
        slope = (3 * p[0] * p[0] + A) * pow(2 * p[1], -1, P) % P
    else:
        slope = (q[1] - p[1]) * pow(q[0] - p[0], -1, P) % P
    x = (slope * slope - p[0] - q[0]) % P
    return x, (slope * (p[0] - x) - p[1]) % P


def _multiply(k, point=G):
    result = None
    while k:
        if k & 1:
            result = _add(result, point)
        point = _add(point, point)
        k >>= 1
    return result


def _x963(point):
    return b"\x04" + point[0].to_bytes(32, "big") + point[1].to_bytes(32, "big")


def _sha256(*parts):
    return hashlib.sha256(b"".join(parts)).digest()


def b64(data):
    return base64.b64encode(data).decode("ascii")


class Device:
    """One device's key among `leaf_count` leaves (a power of two), at a random position."""

    def __init__(self, leaf_count=8):
        self.secret = secrets.randbelow(N - 1) + 1
        self.public_key = _x963(_multiply(self.secret))
        self.index = secrets.randbelow(leaf_count)
        leaves = [_x963(_multiply(secrets.randbelow(N - 1) + 1)) for _ in range(leaf_count)]
        leaves[self.index] = self.public_key
        level = [_sha256(leaf) for leaf in leaves]
        self.inclusion_hashes = []
        i = self.index
        while len(level) > 1:
            self.inclusion_hashes.append(level[i ^ 1])
            level = [_sha256(level[j], level[j + 1]) for j in range(0, len(level), 2)]
            i //= 2
        self.root_hash = level[0]

    def sign(self, message):
        """ECDSA P-256/SHA-256 over the exact bytes, raw r||s (64 bytes)."""
        e = int.from_bytes(_sha256(message), "big")
        while True:
            k = secrets.randbelow(N - 1) + 1
            r = _multiply(k)[0] % N
            s = pow(k, -1, N) * (e + r * self.secret) % N
            if r and s:
                return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def proof(self, challenge):
        """The body of POST /v1/collaborations/{id}/proofs but its challengeId."""
        return {"signature": b64(self.sign(challenge)),
                "proof": {"publicKey": b64(self.public_key), "publicKeyIndex": self.index,
                          "inclusionHashes": [b64(h) for h in self.inclusion_hashes]}}
