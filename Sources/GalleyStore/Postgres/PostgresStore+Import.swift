import Foundation
import GalleyCore
import GalleyFormats
import GalleyKit
import PostgresNIO

extension PostgresStore {
    /// Imports an issue zip with the SQLite store's guarantees (`SQLiteStore.importZip`): the
    /// gate on the central directory and latest.json first, then one streaming pass that inflates
    /// every file into `staging/` while validate's content checks run, then every file (and the
    /// kept zip) to its content address, then one transaction that swaps the issue's rows. A zip
    /// the pass refuses leaves nothing; an import killed before the commit leaves the old issue
    /// whole, and the blobs it placed are removed by the next writer.
    ///
    /// Under the writer lock: a second import of the same issue, from any instance, waits for
    /// this one and then compares versions against what it committed (one version wins).
    public func importZip(
        _ path: String, force: Bool, gate: ImportGate.Passed?, progress: ((Int64, Int64) -> Void)?
    ) throws -> ImportResult {
        let passed = try gate ?? ImportGate.check(path)
        var result = try writing { connection in try importValidated(path, passed, force: force, progress: progress, connection) }
        result.warnings = passed.warnings + result.warnings
        return result
    }

    private func importValidated(
        _ path: String, _ passed: ImportGate.Passed, force: Bool, progress: ((Int64, Int64) -> Void)?, _ connection: PostgresConnection
    ) throws -> ImportResult {
        // 1. Versions.
        let issue = passed.issue
        let existing = try connection.rows("""
            SELECT id, apple_id, last_updated, last_updated_ms, content_digest, package_sha256, package_size, package_version,
                package_withheld
            FROM issue WHERE global_id = \(issue.globalID) OR apple_id = \(issue.appleID) ORDER BY id LIMIT 1
            """, logger).first
        func checkedWithoutExtracting() throws -> [Diagnostic] {
            try SQLiteStore.refusingErrors(passed.check.checkContent(
                sink: progress.map { SQLiteStore.ProgressSink(total: passed.declaredBytes, $0) }))
        }
        var status = ImportResult.Status.imported
        var replaced: (id: Int64, hashes: [String])?
        if let existing {
            let id = try existing.int("id")
            let stored = ImportVersions.Stored(appleID: try existing.string("apple_id"), lastUpdated: try existing.string("last_updated"),
                                               lastUpdatedMS: try existing.optionalInt("last_updated_ms"),
                                               contentDigest: try existing.optionalString("content_digest"))
            if !force {
                switch ImportVersions.order(stored, issue) {
                case .orderedSame:
                    let warnings = try checkedWithoutExtracting()
                    if let digest = stored.contentDigest, digest != passed.contentDigest {
                        throw ImportVersions.sameVersionChanged(stored, issue, path: path)
                    }
                    let counts = try connection.rows("""
                        SELECT (SELECT count(*) FROM article WHERE issue_id = \(id)) AS articles,
                               (SELECT count(*) FROM asset WHERE issue_id = \(id)) AS assets
                        """, logger).first
                    var package: ImportResult.Package?
                    if let sha = try existing.optionalString("package_sha256") {
                        package = ImportResult.Package(sha256: sha, size: try existing.optionalInt("package_size") ?? 0,
                                                       version: try existing.optionalInt("package_version") ?? 0,
                                                       withheld: try existing.optionalString("package_withheld"))
                    }
                    return ImportResult(path: path, status: .unchanged, appleID: issue.appleID, globalID: issue.globalID,
                                        lastUpdated: DumplingDate.rfc3339(issue.lastUpdated),
                                        articles: Int(try counts?.int("articles") ?? 0), assets: Int(try counts?.int("assets") ?? 0),
                                        files: passed.fileCount, package: package, warnings: warnings)
                case .orderedAscending:
                    _ = try checkedWithoutExtracting()
                    throw ImportVersions.older(stored, issue, path: path)
                case .orderedDescending:
                    break
                }
            }
            status = .replaced
            replaced = (id, try hashes(ofIssue: id, connection))
        }

        // 2. One pass into staging, the zip kept alongside; neither touches the database or
        // the blobs, so a refused zip leaves the store as it was.
        let pass = try ImportPass.run(path, passed, stagingFolder: blobs.staging, root: blobs.root, progress: progress)
        defer { pass.cleanUp() }
        let (token, staging, warnings, staged, files) = (pass.token, pass.staging, pass.warnings, pass.kept, pass.files)

        // 3. Every file at its content address; what this import created goes again if it
        // does not commit.
        var created: [String] = []
        var committed = false
        defer { if !committed { for sha in created { blobs.remove(sha) } } }
        guard let manifest = files.first(where: { $0.name == "latest.json" }) else {
            throw GalleyError("the zip's latest.json was not extracted", id: .storeFailed, path: path)
        }
        // The rows are read from latest.json after its blob is placed: a folder's blob is a
        // local file, an object's is not, so that one is read from a copy kept in staging.
        var manifestCopy: URL?
        if !blobs.isLocal {
            let copy = blobs.staging.appending(path: "\(token).latest.json")
            try FileManager.default.copyItem(at: staging.appending(path: manifest.name), to: copy)
            manifestCopy = copy
        }
        defer { if let manifestCopy { try? FileManager.default.removeItem(at: manifestCopy) } }
        for file in files where try blobs.place(staging.appending(path: file.name), sha256: file.sha256, size: file.size) {
            created.append(file.sha256)
        }
        let digest = staged.digest
        if try blobs.place(staged.staged, sha256: digest.sha256, size: digest.size) { created.append(digest.sha256) }
        let manifestFile = try manifestCopy ?? blobs.localFile(manifest.sha256, size: manifest.size)

        // 4. One transaction: the old rows out, the new ones in, the version and revision up.
        var counts = (articles: 0, assets: 0)
        var package = ImportResult.Package(sha256: digest.sha256, size: digest.size, version: 0,
                                           withheld: SQLiteStore.withheldReason(passed))
        try transaction(connection) {
            package.version = try connection.rows("""
                INSERT INTO package_version (apple_id, version) VALUES (\(issue.appleID), 1)
                ON CONFLICT (apple_id) DO UPDATE SET version = package_version.version + 1 RETURNING version
                """, logger).first?.int("version") ?? 1
            if let replaced { try connection.run("DELETE FROM issue WHERE id = \(replaced.id)", logger) }
            counts = try insert(issue, contentDigest: passed.contentDigest, package: package, manifest: manifestFile,
                                display: path, files: files, connection)
        }
        committed = true
        if let replaced { try removeUnreferenced(replaced.hashes, connection) }
        return ImportResult(path: path, status: status, appleID: issue.appleID, globalID: issue.globalID,
                            lastUpdated: DumplingDate.rfc3339(issue.lastUpdated), articles: counts.articles, assets: counts.assets,
                            files: files.count, package: package, warnings: warnings)
    }

    /// The blobs an issue's rows name: its files and its kept zip.
    func hashes(ofIssue id: Int64, _ connection: PostgresConnection) throws -> [String] {
        try connection.rows("""
            SELECT sha256 FROM file WHERE issue_id = \(id)
            UNION SELECT package_sha256 FROM issue WHERE id = \(id) AND package_sha256 IS NOT NULL
            """, logger).map { try $0.string("sha256") }
    }

    /// Removes the blobs among `hashes` that no row names any more.
    func removeUnreferenced(_ hashes: [String], _ connection: PostgresConnection) throws {
        let unique = Array(Set(hashes))
        guard !unique.isEmpty else { return }
        let used = Set(try connection.rows("""
            SELECT sha256 FROM file WHERE sha256 = ANY(\(unique))
            UNION SELECT package_sha256 FROM issue WHERE package_sha256 = ANY(\(unique))
            """, logger).map { try $0.string("sha256") })
        for sha in unique where !used.contains(sha) { blobs.remove(sha) }
    }

    /// Writes the issue's rows: the issue, its images, each article as the manifest streams it
    /// (with its search vector and assets), and its files. A repeated article or asset id keeps
    /// the first, as the SQLite store and Dumpling do.
    private func insert(
        _ issue: IssueRecord, contentDigest: String, package: ImportResult.Package, manifest: URL, display: String,
        files: [SQLiteStore.ExtractedFile], _ connection: PostgresConnection
    ) throws -> (articles: Int, assets: Int) {
        let writer = JSONWriter(pretty: false)
        let lastUpdatedMS = ISODateTime(parsing: issue.lastUpdated)?.millisecondsSinceEpoch
        let publishDay = ISODateTime(dumplingPublishDate: issue.publishDate)?.isoDay
        guard let issueID = try connection.rows("""
            INSERT INTO issue (global_id, apple_id, title, description, last_updated, last_updated_ms, display_date, publish_date,
                publish_day, metadata, content_digest, package_sha256, package_size, package_version, package_withheld)
            VALUES (\(issue.globalID), \(issue.appleID), \(issue.title), \(issue.description), \(issue.lastUpdated), \(lastUpdatedMS),
                \(issue.displayDate), \(issue.publishDate), \(publishDay), \(writer.encode(issue.metadata)), \(contentDigest),
                \(package.sha256), \(package.size), \(package.version), \(package.withheld))
            RETURNING id
            """, logger).first?.int("id") else {
            throw GalleyError("the store did not number the issue's row", id: .storeFailed, path: address.display)
        }
        var counts = (articles: 0, assets: 0)
        func insertAssets(_ list: [AssetRecord], article: Int64?) throws {
            for (index, asset) in list.enumerated() {
                let metadata = asset.metadata.map { writer.encode($0) }
                let inserted = try connection.rows("""
                    INSERT INTO asset (issue_id, article_id, global_id, kind, placement, caption, source, file_name, crop350, metadata)
                    VALUES (\(issueID), \(article), \(asset.id), \(asset.kind.rawValue), \(Int64(index + 1)), \(asset.caption),
                        \(asset.source), \(asset.fileName), \(asset.crop350), \(metadata))
                    ON CONFLICT (issue_id, global_id) DO NOTHING RETURNING id
                    """, logger)
                counts.assets += inserted.count
            }
        }
        try insertAssets(issue.images, article: nil)
        var placement: Int64 = 0
        try ManifestStream.articles(manifest, display: display, issueGlobalID: issue.globalID) { article in
            placement += 1
            var binds = PostgresBindings()
            binds.append(issueID)                                             // $1
            binds.append(article.globalID)                                    // $2
            binds.append(placement)                                           // $3
            for text in [article.title, article.body, article.description, article.url, article.section, article.authorName,
                         article.source, article.dek, article.authorURL, article.authorBio, article.keywords, article.commentary,
                         article.type, article.dateLastUpdated] {
                binds.append(text)                                            // $4 ... $17
            }
            binds.append(ISODateTime(parsing: article.dateLastUpdated)?.millisecondsSinceEpoch)  // $18
            binds.append(article.sku)                                         // $19
            binds.append(article.published)                                   // $20
            binds.append(article.featured)                                    // $21
            binds.append(writer.encode(article.customMeta))                   // $22
            binds.append(SearchText.body(article.body))                       // $23
            // Weights as the SQLite index's BM25 ones: title A, dek and keywords B, body D.
            let rows = try connection.rows(PostgresQuery(unsafeSQL: """
                INSERT INTO article (issue_id, global_id, placement, title, body, description, url, section, author_name, source, dek,
                    author_url, author_bio, keywords, commentary, type, date_last_updated, date_ms, sku, published, featured,
                    custom_meta, search_body, search)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
                    setweight(to_tsvector('simple', unaccent($4)), 'A') || setweight(to_tsvector('simple', unaccent($11)), 'B')
                    || setweight(to_tsvector('simple', unaccent($14)), 'B') || setweight(to_tsvector('simple', unaccent($23)), 'D'))
                ON CONFLICT (issue_id, global_id) DO NOTHING RETURNING id
                """, binds: binds), logger)
            guard let articleID = try rows.first?.int("id") else { return }
            counts.articles += 1
            for list in [article.images, article.sounds, article.videos] { try insertAssets(list, article: articleID) }
        }
        // The files in one statement (an issue of small pictures has tens of thousands).
        try connection.run("""
            INSERT INTO file (issue_id, name, size, sha256)
            SELECT \(issueID), name, size, sha256 FROM unnest(\(files.map(\.name))::text[], \(files.map(\.size))::bigint[],
                \(files.map(\.sha256))::text[]) AS f(name, size, sha256)
            """, logger)
        return counts
    }
}
