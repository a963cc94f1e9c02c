import Foundation
import GalleyCore
import GalleyKit

/// `galley store copy`: one store's content into another, of either backend (a SQLite folder to
/// a shared PostgreSQL store when a publisher outgrows one machine, or back).
///
/// Each issue travels as the zip it was imported from (its kept package), through the target's
/// own full import: the same checks and the same atomic switch, so the target holds nothing
/// the gate would refuse. The feed versions follow (never lower than the source's, so apps
/// following the feed see no version go back), then the independent articles and what `sync`
/// recorded. Issues go oldest first. The target is checked (`store check`) at the end.
public enum StoreCopy {
    public struct Report: Sendable, Encodable {
        public var from: String
        public var to: String
        public var issues: [Copied] = []
        public var independentArticles = 0
        public var followedFeeds = 0
        public var refusedPackages = 0
        /// `store check` of the target after the copy.
        public var check: StoreCheck
        /// What the copy could not finish that does not undo it (the target's statistics not
        /// brought up to date), in words; empty when all went well.
        public var notes: [String] = []

        public struct Copied: Sendable, Encodable {
            public var appleID: String
            public var status: ImportResult.Status
            public var version: Int64

            package enum CodingKeys: String, CodingKey {
                case status, version
                case appleID = "apple_id"
            }

            package init(appleID: String, status: ImportResult.Status, version: Int64) {
                self.appleID = appleID
                self.status = status
                self.version = version
            }
        }

        package enum CodingKeys: String, CodingKey {
            case from, to, issues, check, notes
            case independentArticles = "independent_articles"
            case followedFeeds = "followed_feeds"
            case refusedPackages = "refused_packages"
        }

        package init(from: String, to: String, issues: [Copied] = [], check: StoreCheck, notes: [String] = []) {
            self.from = from
            self.to = to
            self.issues = issues
            self.check = check
            self.notes = notes
        }
    }

    /// Copies `source` into the store `target` opens (or creates). Issues without a kept zip
    /// (imported before Galley kept them) stop the copy before the target is opened, naming
    /// them. A copy stopped half-way leaves whole issues in the target; run again, it goes on
    /// (the issues already there are unchanged).
    public static func copy(
        from source: any IssueStore, to openTarget: () throws -> any IssueStore, names: (from: String, to: String),
        progress: ((Int, Int, String) -> Void)? = nil
    ) throws -> Report {
        let packages = try source.packages()
        let kept = Set(packages.map(\.appleID))
        let without = try source.issues().map(\.appleID).filter { !kept.contains($0) }
        guard without.isEmpty else {
            throw GalleyError("\(without.count) issues have no kept zip to copy: \(without.prefix(5).joined(separator: ", "))",
                              id: .storeFailed, path: names.from,
                              hint: "Import their zips again with --force (Galley keeps each zip it imports since schema v6), then copy.")
        }
        let target = try openTarget()
        var report = Report(from: names.from, to: names.to, check: StoreCheck(integrity: "", issues: 0, files: 0, problems: []))
        for (index, package) in packages.reversed().enumerated() {
            progress?(index, packages.count, package.appleID)
            let result = try target.importZip(ImportJob.open(try source.localFile(package.file).path).checkingFirst())
            try target.raisePackageVersion(package.appleID, to: package.version)
            report.issues.append(Report.Copied(appleID: package.appleID, status: result.status,
                                               version: max(result.package?.version ?? 0, package.version)))
        }
        let articles = try source.independentArticles()
        if !articles.isEmpty { _ = try target.mergeIndependentArticles(articles, source: "store copy from \(names.from)") }
        report.independentArticles = articles.count
        for feed in try source.followedFeeds() {
            try target.recordFollowedFeed(feed)
            report.followedFeeds += 1
        }
        for refused in try source.refusedPackages() {
            try target.recordRefusedPackage(refused)
            report.refusedPackages += 1
        }
        // What the copy wrote stands whatever happens here, and autovacuum does the same within
        // minutes: a failure is not the copy's, only said. A lost connection shows in the check below.
        do {
            try target.settleAfterLoad()
        } catch {
            report.notes.append("the copy is done, but the target's statistics were not brought up to date (\(error)); "
                + "the database's own maintenance does it within minutes")
        }
        report.check = try target.check()
        return report
    }
}
