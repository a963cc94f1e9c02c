import GalleyTestSupport
import Testing
@testable import GalleyCore

/// `nearest`, the "did you mean" of every hint: the answer of the plain search (the first of
/// the nearest, if within the limit) wherever that search stays within the budget, and none
/// past the budget, however many candidates.
@Suite struct EditDistanceTests {
    /// The search `nearest` replaced: every candidate compared, twice per comparison.
    static func plainNearest(_ target: String, _ candidates: [String], within limit: Int, folding: Bool) -> String? {
        let fold = { (text: String) in folding ? text.lowercased() : text }
        guard let best = candidates.min(by: { editDistance(fold($0), fold(target)) < editDistance(fold($1), fold(target)) }),
              editDistance(fold(best), fold(target)) <= limit else { return nil }
        return best
    }

    @Test func theNearestIsThePlainSearchsAnswerOnRandomNames() {
        let pieces = ["a", "b", "A", "é", "E\u{301}", "photo", ".png", "-", "1", "👩‍👧"]
        var generator = SeededGenerator(state: 54)
        var found = 0
        for _ in 0..<2_000 {
            let word = { (0..<generator.below(5)).map { _ in pieces[generator.below(pieces.count)] }.joined() }
            let target = word()
            let candidates = (0..<generator.below(12)).map { _ in word() }
            let limit = generator.below(4)
            let folding = generator.below(2) == 1
            let expected = Self.plainNearest(target, candidates, within: limit, folding: folding)
            #expect(nearest(to: target, among: candidates, within: limit, folding: folding) == expected,
                    "\(target.debugDescription) in \(candidates.debugDescription), within \(limit)")
            if expected != nil { found += 1 }
        }
        #expect(found > 200)  // the draw finds names, not only misses
    }

    @Test func ofEquallyNearNamesTheFirstIsGiven() {
        #expect(nearest(to: "cat", among: ["bat", "cot", "cat2"], within: 1) == "bat")
        #expect(nearest(to: "Photo.PNG", among: ["photo.png"], within: 0, folding: true) == "photo.png")
        #expect(nearest(to: "Photo.PNG", among: ["photo.png"], within: 0) == nil)
        #expect(nearest(to: "x", among: [], within: 3) == nil)
    }

    @Test func pastTheBudgetThereIsNoAnswerAndNamesOfOtherLengthsCostNothing() {
        let many = (0..<2_000).map { "picture-number-\($0).png" }
        // Each compared name costs its length times the target's: 2,000 of about 22 characters
        // are more than 250,000 pairs.
        #expect(nearest(to: "picture-number-1999.pnf", among: many, within: 5) == nil)
        #expect(nearest(to: "picture-number-1999.pnf", among: many, within: 5, budget: .max) == "picture-number-1999.png")
        // Names too long or too short to be within the limit are not compared.
        let long = String(repeating: "x", count: 100_000)
        #expect(nearest(to: "bat", among: [long, "cat", long, "b"], within: 1, budget: 10) == "cat")
    }
}
