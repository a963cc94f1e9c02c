import AsyncHTTPClient
import Foundation
import GalleyCore
import GalleyFormats
import GalleySigning
import GalleyStore
import NIOCore
import NIOHTTP1
import NIOFoundationCompat

/// How `galley sync` talks to a feed's server.
public struct SyncOptions: Sendable {
    /// The feed: `galley serve`'s `/feed`, or a Drupal-packager-style `{version, file_path}`.
    public var url: String
    /// Attempts after the first, for the feed and for each package.
    public var retries = 4
    /// Seconds to connect, and of silence while a response is awaited or streams.
    public var connectTimeout: Int64 = 10
    public var idleTimeout: Int64 = 30
    /// Backoff (full jitter): a wait drawn from 0 to min(cap, base x 2^attempt) seconds.
    public var backoffBase = 0.5
    public var backoffCap = 30.0
    /// Reads the feed as a foreign feed of articles through this map (docs/key-maps.md).
    public var keyMap: KeyMap?
    /// The most pages of a paged foreign feed read in one sync: its first answer and the
    /// pages its `Link: <...>; rel="next"` headers lead to (WordPress's REST API pages so).
    public var maxPages = 50
    /// Accept only feeds signed with this key (`Galley-Signature`); nil: any feed.
    public var trustKey: FeedTrustKey?
    /// Removes issues the feed no longer lists (takedowns); without it they are only reported.
    public var prune = false
    /// Rebuilds a new version of a held issue from the held zip and ranged requests for what
    /// changed (docs/sync.md, "Delta updates"); off: every new version is downloaded whole.
    public var delta = true
    /// Forgets the revision and ETag this store recorded for the feed, so a feed that went back
    /// (a server restored from a backup, or one wrong answer that went far ahead) is followed
    /// again from whatever revision it now has (`--reset-revision`).
    public var resetRevision = false

    public init(url: String) { self.url = url }
}

/// One thing that happened, as Dumpling's notifications name them (`--events json`). Every
/// key is in every event, null when it does not apply (docs/json.md's rule for records).
public struct SyncEvent: Sendable, Encodable {
    public enum Kind: String, Sendable, Encodable {
        /// The feed answered 304: nothing to do.
        case feedUnchanged
        /// The feed changed: `revision` is its new one.
        case feedChanged
        /// The feed's signature expired `seconds` ago: the server may be frozen on old content
        /// (or an old answer is being replayed). The sync goes on; this is a warning.
        case feedExpired
        /// An unsigned feed's `revision` went below the one this store followed: it is
        /// followed from there (an unsigned revision proves nothing, and one wrong answer far
        /// ahead must not stop every later sync). A warning; a signed feed is refused instead.
        case feedWentBack
        /// A package's download starts (`bytes`: from where, when resumed).
        case downloadStarted
        /// A failed attempt that will be retried after `seconds`.
        case retrying
        /// A delta update could not be made (`error` says why: no ranges, a directory that
        /// does not match, a rebuilt file that is not the feed's); the whole file follows.
        case deltaFallback
        /// A package was downloaded, checked and imported (`status`: imported or replaced;
        /// `bytes`: fetched for it, `reused`: copied from the held version by a delta).
        case issueDownloadComplete
        /// A feed of articles was merged into the store's independent articles (`status`: how
        /// many were added, updated, unchanged).
        case articlesDownloadComplete
        /// A paged feed of articles has more pages than `--max-pages`: the first were read
        /// (`status` says how many, and of how many when the feed said, `X-WP-TotalPages`;
        /// `error` says it in words). A warning; the pages read are merged.
        case feedPagesLeft
        /// An item of an article feed was not merged (`error` names the item, the pointer and
        /// the field); the others were.
        case articleSkipped
        /// A package failed (`error`); the store keeps the old content of that issue.
        case downloadFailed
        /// An issue the store holds that the feed no longer lists (kept unless `--prune`).
        case issueNotInFeed
        /// An issue the feed no longer lists was removed from the store (`--prune`).
        case issueRemoved
        /// The sync ended.
        case downloadComplete
        /// The sync stopped before it could follow the feed (`error`: unreachable, not a feed,
        /// a rollback); the store is as it was. The last event of such a run.
        case syncFailed
    }

    public var event: Kind
    @JSONNullable public var appleID: String?
    @JSONNullable public var revision: Int64?
    @JSONNullable public var bytes: Int64?
    @JSONNullable public var reused: Int64?
    @JSONNullable public var seconds: Double?
    @JSONNullable public var status: String?
    @JSONNullable public var error: GalleyError?

    public init(_ event: Kind, appleID: String? = nil) {
        self.event = event
        self.appleID = appleID
    }

    enum CodingKeys: String, CodingKey {
        case event, revision, bytes, reused, seconds, status, error
        case appleID = "apple_id"
    }
}

/// What a sync did (`galley sync --json`, docs/json/sync.schema.json).
public struct SyncSummary: Sendable, Encodable {
    public struct Failure: Sendable, Encodable {
        public var appleID: String
        public var error: GalleyError

        enum CodingKeys: String, CodingKey { case appleID = "apple_id", error }
    }

    public var url: String
    /// The feed said nothing changed (304).
    public var unchanged: Bool
    @JSONNullable public var revision: Int64?
    public var imported: [ImportResult] = []
    /// What each imported package's download cost: bytes fetched, bytes reused by a delta.
    public var downloads: [DownloadCost] = []
    /// Packages already in the store (same SHA-256): not downloaded.
    public var current: [String] = []
    public var failures: [Failure] = []
    /// Issues in the store the feed does not list.
    public var notInFeed: [String] = []
    /// Those of them removed (`--prune`).
    public var removed: [String] = []
    /// For a feed of articles: what the merge did; null for a package feed.
    @JSONNullable public var articles: ArticlesSummary?
    /// With `--trust-key`: the key that signed the feed, and until when the signature holds.
    @JSONNullable public var keyID: String?
    @JSONNullable public var expires: String?

    enum CodingKeys: String, CodingKey {
        case url, unchanged, revision, imported, downloads, current, failures, removed, expires, articles
        case keyID = "key_id"
        case notInFeed = "not_in_feed"
    }
}

/// A feed as `galley serve` gives it, or a Drupal packager's single package.
struct Feed {
    struct Package {
        var appleID: String?
        var version: Int64
        var url: URL
        var size: Int64?
        var sha256: String?

        /// What the package is called in messages and file names: its apple_id, else its file's name.
        var name: String { appleID ?? url.lastPathComponent }
    }

    var revision: Int64
    var packages: [Package]
    /// A single `{version, file_path}`: its version is the feed's revision.
    var single: Bool

    /// Reads the feed's JSON; `base` resolves relative `file_path`s. Errors name the JSON
    /// path of what is wrong.
    init(_ object: JSONValue, base: URL) throws {
        func invalid(_ why: String) -> GalleyError {
            GalleyError("\(base.absoluteString) is not a package feed: \(why)", id: .feedInvalid,
                        hint: "Give galley serve's /feed, or an endpoint answering {\"version\", \"file_path\"}.")
        }
        func number(_ value: JSONValue?) -> Int64? {
            if case .number(let text) = value { return Int64(text) }
            return nil
        }
        func package(_ item: JSONValue, at path: String) throws -> Package {
            guard let version = number(item["version"]), version >= 0 else {
                throw invalid("\(path)version is not a whole number")
            }
            guard let text = item["file_path"]?.stringValue, let url = URL(string: text, relativeTo: base)?.absoluteURL,
                  ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw invalid("\(path)file_path is not an http(s) address")
            }
            let sha = item["sha256"]?.stringValue
            if let sha, sha.count != 64 || !sha.allSatisfy(\.isHexDigit) { throw invalid("\(path)sha256 is not 64 hex digits") }
            let appleID = item["apple_id"]?.stringValue
            if let appleID, appleID.isEmpty || appleID.utf8.count > 255 { throw invalid("\(path)apple_id is empty or too long") }
            return Package(appleID: appleID, version: version, url: url, size: number(item["size"]), sha256: sha?.lowercased())
        }
        if let listed = object["packages"] {
            guard case .array(let items) = listed else { throw invalid("/packages is not an array") }
            guard let revision = number(object["revision"]) else { throw invalid("/revision is not a whole number") }
            self.revision = revision
            packages = try items.enumerated().map { index, item in
                guard case .object = item else { throw invalid("/packages/\(index) is not an object") }
                let found = try package(item, at: "/packages/\(index)/")
                guard found.appleID != nil, found.sha256 != nil, found.size != nil else {
                    throw invalid("/packages/\(index) needs apple_id, size and sha256")
                }
                return found
            }
            single = false
        } else {
            let only = try package(object, at: "/")
            revision = only.version
            packages = [only]
            single = true
        }
    }
}

/// `galley sync`: follows a feed into the store. One conditional request for the feed (a 304
/// ends the run), then each package whose SHA-256 the store does not have is downloaded into
/// the store's `downloads/` (resumed with `Range` and `If-Range` after a cut), checked against
/// the feed's size and SHA-256, and imported through the same gate and atomic import as
/// `galley import`. Any failure leaves that issue's old content; the feed's ETag and revision
/// are recorded only after a sync in which every package arrived, so the next run picks up
/// what failed. Nothing leaves the store: an issue the feed stopped listing is reported.
public struct FeedSyncer: Sendable {
    private let target: SyncTarget
    public let options: SyncOptions

    /// A syncer for the store at `location`, opened now when it exists. One that does not exist
    /// yet is made only once a round has fetched and checked the feed (reachable, a feed, its
    /// signature good): a first sync that fails before that leaves no store behind, as a failed
    /// `galley import` does. Once made, later rounds (`--every`) use it.
    public init(location: StoreLocation, stores: any StoreOpening, options: SyncOptions) throws {
        if stores.exists(location) {
            target = SyncTarget(try stores.open(location, access: .create))
        } else {
            target = SyncTarget(making: { try stores.open(location, access: .create) })
        }
        self.options = options
    }

    /// A failure worth another attempt (a cut connection, a 5xx, a 429), after `retryAfter`
    /// seconds when the server said so.
    struct Transient: Error {
        var error: GalleyError
        var retryAfter: Double?
    }

    /// `text` as a feed's address: http or https, with a host.
    public static func feedURL(_ text: String) throws -> URL {
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
            throw GalleyError("`\(text)` is not an http(s) address", id: .usage,
                              hint: "For example galley sync http://127.0.0.1:8080/feed.")
        }
        return url
    }

    /// How far a download is: the package's name, the bytes it has, and its size when the feed
    /// gives it. Called after each chunk written (a progress bar on a terminal).
    public typealias Progress = @Sendable (_ name: String, _ done: Int64, _ total: Int64?) -> Void

    public func run(progress: Progress? = nil, _ emit: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        let feedURL = try Self.feedURL(options.url)
        // The store's downloads lock is taken now when the store exists, else as soon as the
        // round has made it (`ready`).
        let round = Round()
        defer { round.lock?.unlock() }
        if let store = target.existing { try round.take(store, lockDownloads(store)) }
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: .seconds(options.connectTimeout), read: .seconds(options.idleTimeout)))
        configuration.decompression = .disabled
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let summary = try await sync(client, feedURL, round, progress, emit)
            try? await client.shutdown()
            return summary
        } catch {
            try? await client.shutdown()
            var failed = SyncEvent(.syncFailed)
            failed.error = Self.galleyError(error, options.url)
            emit(failed)
            throw error
        }
    }

    /// What one round holds: the store's downloads lock, once taken.
    private final class Round: @unchecked Sendable {
        // One round's task alone reads and writes it.
        var lock: StoreLock?

        func take(_ store: any IssueStore, _ lock: StoreLock) {
            self.lock = lock
            FeedSyncer.removeFinishedDownloads(in: FeedSyncer.downloadsFolder(store).path)
        }
    }

    /// The store, made now if it did not exist (the feed was fetched and checked), with the
    /// round's downloads lock.
    private func ready(_ round: Round) throws -> any IssueStore {
        let store = try target.store()
        if round.lock == nil { try round.take(store, lockDownloads(store)) }
        return store
    }

    private func sync(_ client: HTTPClient, _ feedURL: URL, _ round: Round, _ progress: Progress?,
                      _ emit: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        let followed = options.resetRevision ? nil : try target.existing?.followedFeed(options.url)
        // --prune asks for the whole feed: a 304 would say nothing of what to remove, and the
        // issues left in the store by an earlier sync without --prune are removed now.
        // A change of trust (a key where none was, or another key) reads the feed whole: a 304
        // would vouch for nothing the new key verified.
        let trustChanged = followed != nil && options.trustKey != nil && followed?.keyID != options.trustKey?.keyID
        let ifNoneMatch = options.prune || trustChanged ? nil : followed?.etag
        let answer = try await retrying(emit, appleID: nil) { try await fetchFeed(client, feedURL, etag: ifNoneMatch) }
        guard let answer else {
            emit(SyncEvent(.feedUnchanged))
            var summary = SyncSummary(url: options.url, unchanged: true, revision: followed?.revision)
            if options.trustKey != nil {
                // The answer last verified with this very key still stands.
                summary.keyID = followed?.keyID
                if let stamp = followed?.expires, let expires = try? Date(stamp, strategy: .iso8601) {
                    summary.expires = stamp
                    warnIfExpired(expires, emit)
                }
            }
            var done = SyncEvent(.downloadComplete)
            done.revision = followed?.revision
            emit(done)
            return summary
        }
        var verified: FeedTrustKey.Verified?
        if let trustKey = options.trustKey {
            // A static feed (`galley publish`) has its signature in a file beside it.
            var signature = answer.signature
            if signature == nil {
                signature = try await retrying(emit, appleID: nil) { try await fetchDetachedSignature(client, feedURL) }
            }
            verified = try trustKey.verify(header: signature, body: answer.body.readableBytesView, address: options.url)
        }
        // A feed of articles (with a key map, or Galley's own `{"articles": [...]}`), or of packages.
        // With a key map, an RSS or Atom feed is read as XMLFeed's JSON document.
        let parsed = options.keyMap != nil && XMLFeed.looksLikeXML(answer.body.readableBytesView)
            ? try XMLFeed.document(Array(answer.body.readableBytesView), address: feedURL.absoluteString)
            : JSONValue(parsing: String(buffer: answer.body))
        if let parsed, let map = options.keyMap ?? (parsed["articles"] != nil && parsed["packages"] == nil ? KeyMap.native : nil) {
            // A signed feed is one document, all of it under its signature: its links are not followed.
            let pages = options.keyMap == nil || verified != nil ? [parsed] : try await allPages(parsed, answer, client, feedURL, emit)
            return try syncArticles(pages, map: map, etag: answer.etag, followed: followed, verified: verified, round, emit)
        }
        guard let parsed, case .object = parsed else {
            throw GalleyError("\(feedURL.absoluteString) is not a package feed: its answer is not a JSON object", id: .feedInvalid,
                              hint: "Give galley serve's /feed, or an endpoint answering {\"version\", \"file_path\"}; a foreign feed of articles needs --key-map.")
        }
        let feed = try Feed(parsed, base: feedURL)
        var summary = try accept(revision: feed.revision, followed: followed, verified: verified, emit)
        let store = try ready(round)
        let downloads = Self.downloadsFolder(store)
        Self.removeAbandonedDownloads(in: downloads.path, keeping: Set(feed.packages.map { Self.downloadName($0) + ".partial" }))
        for package in feed.packages {
            let name = package.name
            if feed.single, let followed, package.version <= followed.revision { continue }
            if let appleID = package.appleID, let sha = package.sha256, (try? store.package(appleID))?.sha256 == sha {
                summary.current.append(appleID)
                continue
            }
            if let sha = package.sha256, let refused = try store.refusedPackage(sha) {
                let failure = GalleyError(
                    "the package of `\(name)` (SHA-256 \(sha)) was refused on \(refused.refusedAt): \(refused.message); it is not downloaded again",
                    id: .problems, hint: "The publisher must fix the issue; a corrected package has another SHA-256 and is downloaded.")
                summary.failures.append(.init(appleID: name, error: failure))
                var failed = SyncEvent(.downloadFailed, appleID: name)
                failed.error = failure
                emit(failed)
                continue
            }
            var downloaded: FileDigest?
            do {
                let file = downloads.appending(path: Self.downloadName(package)).path
                let partial = file + ".partial"
                let had = FileStatus(partial)?.size ?? 0
                var started = SyncEvent(.downloadStarted, appleID: package.appleID)
                started.bytes = had
                emit(started)
                var cost = DownloadCost(appleID: name, bytesFetched: 0, bytesReused: 0, delta: false)
                var fetched: FileDigest?
                // A delta from the version the store holds, unless a whole download was begun
                // (resuming it costs less than starting a delta), or the feed gives no size and
                // SHA-256 to prove the result with (a Drupal packager's).
                if options.delta, had == 0, package.size != nil, package.sha256 != nil, let appleID = package.appleID,
                   let current = try? store.package(appleID),
                   let held = try? store.localFile(current.file) {
                    let work = file + Self.deltaSuffix
                    do {
                        let result = try await deltaDownload(client, package, held: held.path, to: work) { progress?(name, $0, $1) }
                        guard rename(work, partial) == 0 else { throw DeltaUnavailable(reason: "cannot move the rebuilt file into place") }
                        unlink(Self.validatorPath(partial))
                        fetched = result.digest
                        cost = DownloadCost(appleID: name, bytesFetched: result.fetched, bytesReused: result.reused, delta: true)
                    } catch let unavailable as DeltaUnavailable {
                        var fallback = SyncEvent(.deltaFallback, appleID: name)
                        fallback.error = GalleyError("no delta from the held version: \(unavailable.reason)", id: .feedUnreachable,
                                                     hint: "The whole file is downloaded instead.")
                        emit(fallback)
                        cost.bytesFetched = unavailable.fetched
                    }
                }
                if fetched == nil {
                    fetched = try await retrying(emit, appleID: package.appleID) {
                        try await download(client, package, to: partial) { progress?(name, $0, package.size) }
                    }
                    cost.bytesFetched += (fetched?.size ?? 0) - had
                }
                guard let fetched else { continue }
                downloaded = try verify(partial, fetched, package)
                unlink(Self.validatorPath(partial))
                // rename(2) replaces a file a sync killed before its import left behind.
                guard rename(partial, file) == 0 else {
                    throw GalleyError("cannot move the download into place: \(String(cString: strerror(errno)))", id: .storeFailed, path: file,
                                      hint: "Check the permissions of the store's downloads/ folder.")
                }
                defer { try? FileManager.default.removeItem(atPath: file) }
                // The download is the store's own file, hashed as it arrived: the import keeps
                // it by a second name rather than a copy.
                // The feed is the publisher's word on which version each issue is at: one
                // older than the store's (a restored release) or the same last_updated with
                // other bytes is followed, as the server's own version went up for it. A
                // replayed old feed never gets this far when it is signed (its revision).
                var job = try ImportJob.open(file).forcing()
                if let downloaded { job = job.adopting(downloaded) }
                let result = try store.importZip(job)
                summary.imported.append(result)
                summary.downloads.append(cost)
                var complete = SyncEvent(.issueDownloadComplete, appleID: result.appleID)
                complete.status = result.status.rawValue
                complete.bytes = cost.bytesFetched
                complete.reused = cost.bytesReused
                emit(complete)
            } catch {
                let failure = Self.galleyError(error, name)
                if error is DiagnosticsError, let sha = downloaded?.sha256 {
                    try? store.recordRefusedPackage(RefusedPackage(sha256: sha, appleID: name, message: failure.message,
                                                                   refusedAt: Date().ISO8601Format()))
                }
                summary.failures.append(.init(appleID: name, error: failure))
                var failed = SyncEvent(.downloadFailed, appleID: name)
                failed.error = failure
                emit(failed)
            }
        }
        if !feed.single {
            let listed = Set(feed.packages.compactMap(\.appleID))
            for issue in try store.issues() where !listed.contains(issue.appleID) {
                summary.notInFeed.append(issue.appleID)
                emit(SyncEvent(.issueNotInFeed, appleID: issue.appleID))
                guard options.prune else { continue }
                do {
                    _ = try store.delete(issue.appleID)
                    summary.removed.append(issue.appleID)
                    emit(SyncEvent(.issueRemoved, appleID: issue.appleID))
                } catch {
                    let failure = Self.galleyError(error, issue.appleID)
                    summary.failures.append(.init(appleID: issue.appleID, error: failure))
                    var failed = SyncEvent(.downloadFailed, appleID: issue.appleID)
                    failed.error = failure
                    emit(failed)
                }
            }
        }
        if summary.failures.isEmpty {
            try store.recordFollowedFeed(FollowedFeed(url: options.url, etag: answer.etag, revision: feed.revision,
                                                      syncedAt: Date().ISO8601Format(), expires: summary.expires, keyID: verified?.keyID))
        }
        var done = SyncEvent(.downloadComplete)
        done.revision = feed.revision
        emit(done)
        return summary
    }

    /// A changed feed, of packages or articles, is followed. When its revision went below the
    /// one this store followed it is refused if signed and followed with `feedWentBack` if not;
    /// then it is announced (`feedChanged`, and a warning when its signature expired). The
    /// summary starts with what it said of itself.
    private func accept(revision: Int64?, followed: FollowedFeed?, verified: FeedTrustKey.Verified?,
                        _ emit: @Sendable (SyncEvent) -> Void) throws -> SyncSummary {
        if let revision, let followed, revision < followed.revision {
            guard verified != nil else {
                var event = SyncEvent(.feedWentBack)
                event.revision = revision
                event.error = GalleyError("the feed's revision \(revision) is lower than \(followed.revision), which this store followed; "
                                          + "it is unsigned, so it is followed from \(revision)", id: .feedRollback, path: options.url,
                                          hint: "A signed feed (--trust-key) is refused instead: its revision is proven, an unsigned one is not.")
                emit(event)
                return accepted(revision: revision, verified: verified, emit)
            }
            throw GalleyError("the feed's revision \(revision) is lower than \(followed.revision), which this store already followed",
                              id: .feedRollback, path: options.url,
                              hint: "The server went back to older content (a restored backup, or a replayed answer); nothing was changed. "
                                  + "If that is what its publisher did, `galley sync --reset-revision` follows it from its revision now.")
        }
        return accepted(revision: revision, verified: verified, emit)
    }

    /// The summary of a feed answer taken, after `feedChanged` (and an expiry warning).
    private func accepted(revision: Int64?, verified: FeedTrustKey.Verified?, _ emit: @Sendable (SyncEvent) -> Void) -> SyncSummary {
        var summary = SyncSummary(url: options.url, unchanged: false, revision: revision)
        summary.keyID = verified?.keyID
        summary.expires = verified.map { $0.expires.ISO8601Format() }
        var changed = SyncEvent(.feedChanged)
        changed.revision = revision
        emit(changed)
        if let verified { warnIfExpired(verified.expires, emit) }
        return summary
    }

    /// A feed of articles: mapped (a bad item is skipped and reported, the others merged), then
    /// merged into the store's independent articles by global id. Galley's own article feed
    /// carries a revision, checked against rollback as a package feed's is.
    private func syncArticles(_ pages: [JSONValue], map: KeyMap, etag: String?, followed: FollowedFeed?,
                              verified: FeedTrustKey.Verified?, _ round: Round,
                              _ emit: @escaping @Sendable (SyncEvent) -> Void) throws -> SyncSummary {
        var revision: Int64?
        if case .number(let text)? = pages.first?["revision"] { revision = Int64(text) }
        var summary = try accept(revision: revision, followed: followed, verified: verified, emit)
        var mapped = KeyMap.Result()
        // An article that moved to the next page while the pages were read is kept once, as
        // the first page that had it gave it.
        var kept = Set<String>()
        for (index, page) in pages.enumerated() {
            let source = index == 0 ? options.url : "\(options.url) (page \(index + 1))"
            let one = try map.map(page, source: source)
            mapped.articles += one.articles.filter { kept.insert($0.globalID).inserted }
            mapped.skipped += one.skipped
            mapped.sanitized += one.sanitized
        }
        for skipped in mapped.skipped {
            var event = SyncEvent(.articleSkipped)
            event.error = ArticlesSummary.error(skipped, source: options.url)
            emit(event)
        }
        let store = try ready(round)
        let merge = try store.mergeIndependentArticles(mapped.articles, source: options.url)
        summary.articles = ArticlesSummary(merge: merge, mapped: mapped)
        var complete = SyncEvent(.articlesDownloadComplete)
        complete.status = "\(merge.added.count) added, \(merge.updated.count) updated, \(merge.unchanged) unchanged"
        emit(complete)
        try store.recordFollowedFeed(FollowedFeed(url: options.url, etag: etag, revision: revision ?? followed?.revision ?? 0,
                                                  syncedAt: Date().ISO8601Format(), expires: summary.expires, keyID: verified?.keyID))
        var done = SyncEvent(.downloadComplete)
        done.revision = revision
        emit(done)
        return summary
    }

    /// The feed's first page and every page its `Link: <...>; rel="next"` headers lead to, up
    /// to `maxPages`, on the feed's own origin (a link elsewhere is not followed: the feed
    /// does not choose which hosts a reader talks to), never the same page twice.
    private func allPages(_ first: JSONValue, _ answer: FeedAnswer, _ client: HTTPClient, _ feedURL: URL,
                          _ emit: @escaping @Sendable (SyncEvent) -> Void) async throws -> [JSONValue] {
        var pages = [first]
        var seen: Set<String> = [feedURL.absoluteString]
        var next = answer.next
        while let url = next {
            guard Self.sameOrigin(url, feedURL), seen.insert(url.absoluteString).inserted else { break }
            guard pages.count < options.maxPages else {
                var left = SyncEvent(.feedPagesLeft)
                left.status = "read \(pages.count) page\(pages.count == 1 ? "" : "s")" + (answer.totalPages.map { " of \($0)" } ?? "")
                left.error = GalleyError("the feed has more pages than --max-pages: \(left.status ?? "") were read and merged",
                                         id: .feedInvalid, path: options.url,
                                         hint: "Raise --max-pages (up to 1000) to read further back; the newest pages come first.")
                emit(left)
                break
            }
            guard let page = try await retrying(emit, appleID: nil, { try await fetchFeed(client, url, etag: nil) }) else { break }
            let xml = XMLFeed.looksLikeXML(page.body.readableBytesView)
            guard let parsed = xml ? try XMLFeed.document(Array(page.body.readableBytesView), address: url.absoluteString)
                : JSONValue(parsing: String(buffer: page.body)) else {
                throw GalleyError("page \(pages.count + 1) of the feed (\(url.absoluteString)) is not valid JSON", id: .feedInvalid,
                                  hint: "The feed's Link: rel=\"next\" header leads there; the store is as it was.")
            }
            pages.append(parsed)
            next = page.next
        }
        return pages
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && a.port == b.port
    }

    /// The target of `Link`'s `rel="next"` (RFC 8288), resolved against `base`; nil when there is none.
    static func nextLink(_ header: String?, base: URL) -> URL? {
        guard let header else { return nil }
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { return nil }
            let target = rest[rest.index(after: open)..<close]
            // The link's parameters run to the next link (a `<` after a comma) or the end.
            let after = rest[rest.index(after: close)...]
            let end = after.range(of: ",\\s*<", options: .regularExpression)?.lowerBound ?? after.endIndex
            let parameters = after[..<end].split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            for parameter in parameters where parameter.hasPrefix("rel=") {
                let values = parameter.dropFirst(4).trimmingCharacters(in: CharacterSet(charactersIn: "\"")).split(separator: " ")
                if values.contains("next") { return URL(string: String(target), relativeTo: base)?.absoluteURL }
            }
            rest = after[end...]
        }
        return nil
    }

    /// A signature past its expiry: the feed may be frozen (TUF's freeze attack), so say so.
    private func warnIfExpired(_ expires: Date, _ emit: @Sendable (SyncEvent) -> Void) {
        let past = Date().timeIntervalSince(expires)
        guard past > 0 else { return }
        var event = SyncEvent(.feedExpired)
        event.seconds = past.rounded()
        event.error = GalleyError("the feed's signature expired at \(expires.ISO8601Format()), \(Int(past)) s ago", id: .feedSignature,
                                  path: options.url,
                                  hint: "A live server renews its signature; an expired one means the server is stuck or an old answer is replayed.")
        emit(event)
    }

    /// Where downloads go, in the store: `<name>.zip.partial` while they arrive.
    private static func downloadsFolder(_ store: any IssueStore) -> URL { store.root.appending(path: "downloads") }

    /// One sync at a time per store: a second one (a cron job overlapping a slow run) would
    /// write the same `.partial` files. It stops at once; the running one does the work.
    private func lockDownloads(_ store: any IssueStore) throws -> StoreLock {
        let downloads = Self.downloadsFolder(store)
        do {
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        } catch {
            throw GalleyError("cannot make the store's downloads/ folder: \(error.localizedDescription)", id: .storeFailed,
                              path: downloads.path, hint: "Check the store's permissions and free space.")
        }
        let lock = try StoreLock(downloads.appending(path: ".lock"))
        guard lock.tryLock() else {
            throw GalleyError("another galley sync is writing into this store", id: .syncRunning, path: store.root.path,
                              hint: "Nothing was done; the running sync follows the feed. On a timer, this is harmless.")
        }
        return lock
    }

    /// The file a package downloads to in `downloads/` (`.partial` added while it arrives):
    /// named by content when the feed gives its SHA-256, so a resumed download is the same file.
    static func downloadName(_ package: Feed.Package) -> String {
        "\(package.sha256 ?? "v\(package.version)-\(SourceTree.zipSafeName(package.name, maxBytes: 100))").zip"
    }

    /// How long a `.partial` download no package of the feed names is kept: another feed this
    /// store follows may be resuming it.
    static let abandonedDownloadAge: Int64 = 24 * 3_600

    /// Removes the `.partial` downloads no package of the feed being followed names (`keeping`)
    /// that nothing wrote for `abandonedDownloadAge`: a package the feed dropped, or replaced
    /// with a new version (another SHA-256), while its download was cut. Nothing would resume
    /// them, and nothing else removes them. Under the lock, as `removeFinishedDownloads`.
    static func removeAbandonedDownloads(in folder: String, keeping: Set<String>, now: Date = Date()) {
        let cutoff = Int64(now.timeIntervalSince1970) - abandonedDownloadAge
        let names = rawDirectoryNames(folder) ?? []
        for raw in names where raw.count > 8 && raw.suffix(8).elementsEqual(".partial".utf8) {
            let name = String(decoding: raw, as: UTF8.self)
            guard !keeping.contains(name) else { continue }
            let path = folder + "/" + name
            if let status = FileStatus(path, follow: false), status.kind == .file, status.modified / 1_000_000_000 < cutoff {
                unlink(path)
                unlink(validatorPath(path))
            }
        }
        // A delta's rebuilt file a killed sync left: the delta starts again.
        for raw in names where raw.count > deltaSuffix.utf8.count && raw.suffix(deltaSuffix.utf8.count).elementsEqual(deltaSuffix.utf8) {
            let path = folder + "/" + String(decoding: raw, as: UTF8.self)
            if FileStatus(path, follow: false)?.kind == .file { unlink(path) }
        }
        // A validator whose download is gone (removed above, or by a crash between the two).
        let suffix = validatorSuffix.utf8
        for raw in names where raw.count > suffix.count && raw.suffix(suffix.count).elementsEqual(suffix) {
            let path = folder + "/" + String(decoding: raw, as: UTF8.self)
            if FileStatus(String(path.dropLast(suffix.count)), follow: false) == nil { unlink(path) }
        }
    }

    /// Removes the whole downloads (`<name>.zip`) a sync killed between the download and the
    /// end of its import left behind; `.partial` files stay, to be resumed. Under the lock, no
    /// other sync is importing one, and no sync reads an earlier run's `.zip`: each downloads
    /// into its `.partial` and renames it over the old one. Without this, a sync killed just
    /// after its import committed left the zip for ever, its package being current from then on.
    static func removeFinishedDownloads(in folder: String) {
        for name in rawDirectoryNames(folder) ?? [] where name.count > 4 && name.suffix(4).elementsEqual(".zip".utf8) {
            let path = folder + "/" + String(decoding: name, as: UTF8.self)
            if FileStatus(path)?.kind == .file { unlink(path) }
        }
    }

    struct FeedAnswer {
        var body: ByteBuffer
        var etag: String?
        var signature: String?
        /// The next page of a paged feed (`Link: rel="next"`), and how many pages it says it has.
        var next: URL?
        var totalPages: Int?
    }

    /// The feed's bytes, ETag and signature header, or nil for a 304.
    private func fetchFeed(_ client: HTTPClient, _ url: URL, etag: String?) async throws -> FeedAnswer? {
        var request = HTTPClientRequest(url: url.absoluteString)
        // A key map reads RSS and Atom as well (XMLFeed).
        request.headers.add(name: "Accept", value: options.keyMap == nil ? "application/json"
            : "application/json, application/rss+xml;q=0.9, application/atom+xml;q=0.9, application/xml;q=0.8")
        if let etag { request.headers.add(name: "If-None-Match", value: etag) }
        let response = try await send(client, request, url.absoluteString)
        if response.status == .notModified { return nil }
        try Self.expect(response, [.ok], url.absoluteString)
        do {
            let body = try await response.body.collect(upTo: Self.feedLimit)
            return FeedAnswer(body: body, etag: response.headers.first(name: "ETag"),
                              signature: response.headers.first(name: FeedSignature.headerName),
                              next: Self.nextLink(response.headers["Link"].joined(separator: ", "), base: url),
                              totalPages: response.headers.first(name: "X-WP-TotalPages").flatMap { Int($0) })
        } catch is NIOTooManyBytesError {
            throw GalleyError("the feed at \(url.absoluteString) is over \(Self.feedLimit / 1_048_576) MB", id: .feedInvalid,
                              hint: "Check the address: a feed lists packages, it does not hold them.")
        } catch {
            throw Transient(error: Self.unreachable(url.absoluteString, "the answer was cut: \(error)"), retryAfter: nil)
        }
    }

    static let feedLimit = 16 * 1_048_576

    /// Where a static feed's signature is: its path with `.sig` added, the query kept
    /// (the signature of `.../feed.json?v=2` is at `.../feed.json.sig?v=2`).
    static func detachedSignatureAddress(_ feedURL: URL) -> String {
        guard var parts = URLComponents(url: feedURL, resolvingAgainstBaseURL: true) else { return feedURL.absoluteString + ".sig" }
        parts.percentEncodedPath += ".sig"
        parts.fragment = nil
        return parts.string ?? feedURL.absoluteString + ".sig"
    }

    /// The signature `galley publish` writes beside a static feed (`feed.json.sig`: the
    /// `Galley-Signature` header's value on one line), or nil when the host has none (404).
    private func fetchDetachedSignature(_ client: HTTPClient, _ feedURL: URL) async throws -> String? {
        let address = Self.detachedSignatureAddress(feedURL)
        let response = try await send(client, HTTPClientRequest(url: address), address)
        if response.status == .notFound || response.status == .forbidden { return nil }
        try Self.expect(response, [.ok], address)
        do {
            let body = try await response.body.collect(upTo: 4096)
            return String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw Transient(error: Self.unreachable(address, "the answer was cut or over 4 KB: \(error)"), retryAfter: nil)
        }
    }

    /// Who asks, in every request: hosts' logs and rate limits can tell a reader's sync from a
    /// crawler.
    static let userAgent = "galley-sync/\(Galley.version)"

    /// Beside each `.partial` download: the validator its host gave when it started (a strong
    /// `ETag`, else `Last-Modified`), which `If-Range` sends back on resuming.
    static let validatorSuffix = "-validator"

    static func validatorPath(_ partial: String) -> String { partial + validatorSuffix }

    /// What resuming `partial` asks `If-Range` with: the host's own validator, kept when the
    /// download began (nginx's `"6b0f229f-b649cf5"`, a bucket's MD5, a date), else the feed's
    /// SHA-256 as `galley serve` tags its packages; nil: no way to be sure, start over.
    static func resumeValidator(_ partial: String, sha256: String?) -> String? {
        if let kept = try? String(contentsOfFile: validatorPath(partial), encoding: .utf8),
           !kept.isEmpty, kept.utf8.count <= 200, !kept.contains(where: \.isNewline) {
            return kept
        }
        return sha256.map { "\"\($0)\"" }
    }

    /// The validator a download's answer carries that `If-Range` may use (RFC 9110: a strong
    /// entity tag, or a date), or nil.
    static func hostValidator(_ headers: HTTPHeaders) -> String? {
        if let tag = headers.first(name: "ETag"), tag.hasPrefix("\""), tag.utf8.count <= 200 { return tag }
        if let date = headers.first(name: "Last-Modified"), !date.isEmpty, date.utf8.count <= 100 { return date }
        return nil
    }

    /// Downloads a package into `partial`, resuming from what it holds when the server still
    /// has the same file (`If-Range` with the validator the host gave when the download began,
    /// `resumeValidator`: so a cut download resumes from nginx, a bucket or a CDN, not only from
    /// `galley serve`). A server that answers the whole file instead starts it over; the feed's
    /// size and SHA-256 are checked at the end either way. Returns the file's size and SHA-256,
    /// hashed as the bytes arrive (a resumed download hashes what it had first), so the file is
    /// not read again to be checked.
    private func download(_ client: HTTPClient, _ package: Feed.Package, to partial: String,
                          progress: (Int64) -> Void) async throws -> FileDigest {
        var have = FileStatus(partial)?.size ?? 0
        if let size = package.size, have > size {
            try? FileManager.default.removeItem(atPath: partial)
            have = 0
        }
        if let size = package.size, have == size, size > 0 { return try Self.digest(partial) }
        var request = HTTPClientRequest(url: package.url.absoluteString)
        if have > 0, let validator = Self.resumeValidator(partial, sha256: package.sha256) {
            request.headers.add(name: "Range", value: "bytes=\(have)-")
            request.headers.add(name: "If-Range", value: validator)
        }
        let address = package.url.absoluteString
        let response = try await send(client, request, address)
        if response.status == .rangeNotSatisfiable {
            try? FileManager.default.removeItem(atPath: partial)
            throw Transient(error: Self.unreachable(address, "the server has no bytes past \(have)"), retryAfter: 0)
        }
        try Self.expect(response, [.ok, .partialContent], address)
        let resumed = response.status == .partialContent && have > 0
            && response.headers.first(name: "Content-Range")?.hasPrefix("bytes \(have)-") == true
        let fd = Glibc.open(partial, O_WRONLY | O_CREAT | O_CLOEXEC | (resumed ? O_APPEND : O_TRUNC), 0o644)
        guard fd >= 0 else {
            throw GalleyError("cannot write \(partial): \(String(cString: strerror(errno)))", id: .storeFailed, path: partial,
                              hint: "Check the store's free space and permissions.")
        }
        defer { close(fd) }
        if !resumed {
            // This answer starts the file: its validator is the one a resume must name.
            let validatorFile = Self.validatorPath(partial)
            if let validator = Self.hostValidator(response.headers) {
                try? Data(validator.utf8).write(to: URL(fileURLWithPath: validatorFile))
            } else {
                unlink(validatorFile)
            }
        }
        var written = resumed ? have : 0
        let hasher = SHA256Hasher()
        if resumed {
            do {
                let prefix = try FileDigest.feed(partial, into: hasher)
                guard prefix == have else { throw GalleyError("it changed while it was read (\(prefix) bytes, not \(have))") }
            } catch {
                try? FileManager.default.removeItem(atPath: partial)
                throw Transient(error: GalleyError("cannot read the partial download \(partial): \(error)", id: .storeFailed, path: partial,
                                                   hint: "It was removed; the next attempt starts the file over."), retryAfter: 0)
            }
        }
        do {
            for try await chunk in response.body {
                try Self.write(fd, chunk, partial)
                chunk.withUnsafeReadableBytes { hasher.update($0) }
                written += Int64(chunk.readableBytes)
                progress(written)
                if let size = package.size, written > size {
                    try? FileManager.default.removeItem(atPath: partial)
                    throw GalleyError("the download of \(address) is larger than the feed's \(size) bytes", id: .downloadMismatch,
                                      hint: "The feed and the file disagree: ask the server's operator; the store keeps the old issue.")
                }
            }
        } catch let error as GalleyError {
            throw error
        } catch {
            throw Transient(error: Self.unreachable(address, "the download was cut at byte \(written): \(error)"), retryAfter: nil)
        }
        if let size = package.size, written < size {
            throw Transient(error: Self.unreachable(address, "the download ended at byte \(written) of \(size)"), retryAfter: nil)
        }
        return FileDigest(sha256: hasher.finalizeHex(), size: written)
    }

    private static func digest(_ path: String) throws -> FileDigest {
        do { return try FileDigest.of(path) } catch {
            throw GalleyError("cannot read the download \(path): \(error)", id: .storeFailed, path: path,
                              hint: "Check the store's downloads/ folder.")
        }
    }

    private static func write(_ fd: Int32, _ chunk: ByteBuffer, _ path: String) throws {
        let failure = chunk.withUnsafeReadableBytes { writeAll(fd, $0) }
        if failure != 0 {
            throw GalleyError("cannot write \(path): \(String(cString: strerror(failure)))", id: .storeFailed, path: path,
                              hint: "Check the store's free space; the next sync resumes where this one stopped.")
        }
    }

    /// The downloaded file is the feed's: its size and SHA-256 (when the feed gives them).
    private func verify(_ partial: String, _ digest: FileDigest, _ package: Feed.Package) throws -> FileDigest {
        let sizeDiffers = package.size.map { $0 != digest.size } ?? false
        let hashDiffers = package.sha256.map { $0 != digest.sha256 } ?? false
        guard sizeDiffers || hashDiffers else { return digest }
        try? FileManager.default.removeItem(atPath: partial)
        throw GalleyError("the download of \(package.url.absoluteString) is not the feed's file: \(digest.size) bytes, SHA-256 \(digest.sha256); "
                          + "the feed says \(package.size.map(String.init) ?? "any size"), \(package.sha256 ?? "any SHA-256")",
                          id: .downloadMismatch, hint: "Nothing was imported; the next sync downloads it again.")
    }

    /// Sends a request; a failure to connect or a status worth retrying is `Transient`.
    func send(_ client: HTTPClient, _ request: HTTPClientRequest, _ address: String) async throws -> HTTPClientResponse {
        var request = request
        request.headers.replaceOrAdd(name: "User-Agent", value: Self.userAgent)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: .now() + .seconds(options.connectTimeout + options.idleTimeout))
        } catch {
            throw Transient(error: Self.unreachable(address, "\(error)"), retryAfter: nil)
        }
        let code = response.status.code
        if code == 429 || code == 408 || code >= 500 {
            throw Transient(error: Self.unreachable(address, "it answered \(code) \(response.status.reasonPhrase)"),
                            retryAfter: response.headers.first(name: "Retry-After").flatMap(Self.retryAfter))
        }
        return response
    }

    private static func expect(_ response: HTTPClientResponse, _ statuses: [HTTPResponseStatus], _ address: String) throws {
        guard statuses.contains(response.status) else {
            throw unreachable(address, "it answered \(response.status.code) \(response.status.reasonPhrase)")
        }
    }

    /// Runs `attempt` until it succeeds, fails for good, or the retries are spent, waiting
    /// between attempts as the server asked (`Retry-After`) or with full-jitter backoff.
    private func retrying<T>(_ emit: @Sendable (SyncEvent) -> Void, appleID: String?, _ attempt: () async throws -> T) async throws -> T {
        var failures = 0
        while true {
            do {
                return try await attempt()
            } catch let transient as Transient {
                guard failures < options.retries else { throw transient.error }
                let wait = min(transient.retryAfter ?? Double.random(in: 0...min(options.backoffCap, options.backoffBase * pow(2, Double(failures)))),
                               options.backoffCap * 4)
                var event = SyncEvent(.retrying, appleID: appleID)
                event.seconds = (wait * 1000).rounded() / 1000
                event.error = transient.error
                emit(event)
                try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
                failures += 1
            }
        }
    }

    /// `Retry-After` in seconds or as an HTTP date.
    static func retryAfter(_ value: String) -> Double? {
        if let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).map { max(0, $0.timeIntervalSinceNow) }
    }

    static func unreachable(_ address: String, _ why: String) -> GalleyError {
        GalleyError("cannot fetch \(address): \(why)", id: .feedUnreachable,
                    hint: "Check the address and the network; the store keeps its content, and the next sync picks up from here.")
    }

    static func galleyError(_ error: any Error, _ name: String) -> GalleyError {
        if let error = error as? GalleyError { return error }
        if let transient = error as? Transient { return transient.error }
        if let refused = error as? DiagnosticsError {
            let first = refused.diagnostics.first.map { ": \($0.message)" } ?? ""
            return GalleyError("the package of `\(name)` was refused by the import gate\(first)", id: .problems,
                               hint: "`galley validate` on the zip says why; the store keeps the old issue.")
        }
        return GalleyError("\(name): \(error)", id: .failed)
    }
}

/// The store a sync writes into: open, or made at the first round that gets that far
/// (`FeedSyncer.init(location:options:)`).
final class SyncTarget: @unchecked Sendable {
    private enum State {
        case open(any IssueStore)
        case toMake(@Sendable () throws -> any IssueStore)
    }

    // Read and written under `lock` only.
    private let lock = NSLock()
    private var state: State

    init(_ store: any IssueStore) { state = .open(store) }

    init(making make: @escaping @Sendable () throws -> any IssueStore) { state = .toMake(make) }

    /// The store, when it is open.
    var existing: (any IssueStore)? {
        lock.withLock {
            if case .open(let store) = state { return store }
            return nil
        }
    }

    /// The store, made now if it is not yet (a failure leaves it to be made next time).
    func store() throws -> any IssueStore {
        try lock.withLock {
            switch state {
            case .open(let store): return store
            case .toMake(let make):
                let store = try make()
                state = .open(store)
                return store
            }
        }
    }
}
