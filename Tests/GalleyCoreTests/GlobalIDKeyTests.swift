import Testing
@testable import GalleyCore

/// `GlobalID.Key` stands for an id in the tables of every id of an issue: two keys are equal
/// exactly when their ids are, whether the id is Galley's own (24 lowercase hex digits, kept as
/// 12 bytes) or anything else (kept as text).
@Suite struct GlobalIDKeyTests {
    @Test func keysAreEqualExactlyWhenTheirIdsAre() {
        let derived = GlobalID.article(appleID: "com.example.issue", slug: "lead")
        let ids = [
            derived, GlobalID.article(appleID: "com.example.issue", slug: "second"),
            derived.uppercased(),  // the same digits in capitals: another id
            String(derived.dropLast()), derived + "0",  // 23 and 25 digits
            "0000000000000000ffffffff", "ffffffffffffffff00000000",  // the halves told apart
            "zzzzzzzzzzzzzzzzzzzzzzzz", "photo-1", "",
        ]
        for a in ids {
            #expect(GlobalID.Key(a).text == a, "the key gives its id back")
            for b in ids {
                #expect((GlobalID.Key(a) == GlobalID.Key(b)) == (a == b), "\(a) and \(b)")
            }
        }
        if case .hex = GlobalID.Key(derived) {} else { Issue.record("a derived id is kept as 12 bytes") }
        if case .text = GlobalID.Key(derived.uppercased()) {} else { Issue.record("capitals are text") }
        #expect(MemoryLayout<GlobalID.Key>.size <= 17)
    }
}
