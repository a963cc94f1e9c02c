import Foundation
import Testing
@testable import GalleyCore
@testable import GalleyKit

/// latest.json's body checks run on a thread of their own (`BodyCheckThread`); the findings
/// must still come article by article, each article's body findings after its other ones,
/// as one thread made them, whatever the timing.
@Suite struct FindingsOrderTests {
    static func manifest(articles count: Int) -> String {
        guard case .array(let articles)? = CheckExample.template["articles"], let first = articles.first else { return "" }
        let made: [JSONValue] = (0..<count).map { n in
            first.setting("global_id", .string(String(format: "5f00000000000000000%05d", 100 + n)))
                .setting("date_last_updated", .string(String(format: "2020-03-01T00:%02d:00.000+0000", 59 - n % 60)))
                .setting("body", .string("<p>Article \(n).</p>\n<script>track(\(n))</script>\n"))
                .setting("images", .object([("ordered", .array([]))]))
                .setting("sound_files", .object([("ordered", .array([]))]))
                .setting("extra_\(n)", .number("1"))
        }
        return JSONWriter().encode(CheckExample.template.setting("articles", .array(made)))
    }

    @Test func bodyFindingsFollowTheirArticlesFindings() {
        let found = Validator().validateManifestText(Self.manifest(articles: 40))
        let perArticle = found.filter { $0.id == Check.manifestUnknownKey.id || $0.id == Check.bodyScript.id }
        #expect(perArticle.count == 80, "\(found.map { "\($0.id.rawValue) \($0.message)" })")
        for (n, pair) in stride(from: 0, to: perArticle.count - 1, by: 2).map({ (perArticle[$0], perArticle[$0 + 1]) }).enumerated() {
            #expect(pair.0.id == Check.manifestUnknownKey.id && pair.0.message.contains("extra_\(n)"), "\(pair.0.message)")
            #expect(pair.1.id == Check.bodyScript.id && pair.1.location?.jsonPath == "articles[\(n)].body", "\(pair.1.message)")
        }
    }

    @Test func theSameManifestGivesTheSameFindingsEveryTime() {
        let text = Self.manifest(articles: 200)
        let first = Validator().validateManifestText(text)
        for _ in 0..<5 {
            #expect(Validator().validateManifestText(text) == first)
        }
    }
}
