/// Turns on keys (collaboration ids): `take` waits until no holder or earlier waiter has any
/// of the keys, then holds them all until `give`. All at once and first come first served, so
/// two groups never wait on each other, and none waits behind later ones for ever.
actor Turns {
    private var held: Set<String> = []
    private var waiting: [(keys: Set<String>, resume: CheckedContinuation<Void, Never>)] = []

    /// Takers waiting for their turn.
    var waiters: Int { waiting.count }

    func take(_ keys: Set<String>) async {
        if held.isDisjoint(with: keys), !waiting.contains(where: { !$0.keys.isDisjoint(with: keys) }) {
            held.formUnion(keys)
            return
        }
        await withCheckedContinuation { waiting.append((keys, $0)) }
    }

    func give(_ keys: Set<String>) {
        held.subtract(keys)
        var blocked: Set<String> = []
        var still: [(keys: Set<String>, resume: CheckedContinuation<Void, Never>)] = []
        for waiter in waiting {
            if held.isDisjoint(with: waiter.keys), blocked.isDisjoint(with: waiter.keys) {
                held.formUnion(waiter.keys)
                waiter.resume.resume()
            } else {
                blocked.formUnion(waiter.keys)
                still.append(waiter)
            }
        }
        waiting = still
    }
}
