/// Levenshtein distance, for "did you mean" hints on short keys.
package func editDistance(_ a: String, _ b: String) -> Int {
    editDistance(Array(a), Array(b))
}

/// Levenshtein distance of two character arrays.
package func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = previous
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

/// The candidate nearest to `target` (the first of the nearest, in the candidates' order)
/// when it is at most `limit` edits away; `nil` otherwise, or when finding it would compare
/// more than `budget` pairs of characters: a hint must not cost more than the finding it
/// helps (a body naming thousands of missing files beside thousands of others compared every
/// name with every other, for minutes). `folding`: compare lowercased.
///
/// A candidate whose length differs from the target's by more than `limit` cannot be within
/// it, so it is not compared (nor counted).
package func nearest<S: Sequence<String>>(
    to target: String, among candidates: S, within limit: Int, budget: Int = 250_000, folding: Bool = false
) -> String? {
    let wanted = Array(folding ? target.lowercased() : target)
    var spent = 0
    var best: (name: String, distance: Int)?
    for candidate in candidates {
        let chars = Array(folding ? candidate.lowercased() : candidate)
        guard abs(chars.count - wanted.count) <= limit else { continue }
        spent += max(chars.count, 1) * max(wanted.count, 1)
        if spent > budget { return nil }
        let distance = editDistance(chars, wanted)
        if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
    }
    return best?.name
}
