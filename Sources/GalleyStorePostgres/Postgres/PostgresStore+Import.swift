import Foundation
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit
import Logging
import PostgresNIO

extension PostgresStore: ImportTarget {
    /// Imports an issue zip with the SQLite store's guarantees (`SQLiteStore.importZip`): the
    /// gate on the central directory and latest.json first, then one streaming pass that inflates
    /// every file into `staging/` while validate's content checks run, then every file (and the
    /// kept zip) to its content address, then one transaction that swaps the issue's rows. A zip
    /// the pass refuses leaves nothing; an import killed before the commit leaves the old issue
    /// whole, and the blobs it placed are removed by the next writer (or by the next open, when
    /// the connection went during the COMMIT and whether it committed is not known here).
    ///
    /// Under the writer lock: a second import of the same issue, from any instance, waits for
    /// this one and then compares versions against what it committed (one version wins).
    /// latest.json's checks run before the pass here (`checksBeside` says no), whatever the job.
    public func importZip(_ job: ImportJob) throws -> ImportResult {
        try job.run(into: self)
    }

    package func checksBeside(_ job: ImportJob) throws -> Bool { false }

    package func withImportSession<T>(_ job: ImportJob, _ body: (PostgresImport) throws -> T) throws -> T {
        try writing { connection in try body(PostgresImport(store: self, connection: connection)) }
    }

    /// The stored issue a zip with these fields would replace, with its versions.
    fileprivate func storedIssue(_ issue: IssueRecord, _ connection: PostgresConnection) throws -> (held: PostgresRandomAccessRow, versions: ImportVersions.Stored)? {
        let existing = try connection.rows("""
            SELECT id, apple_id, last_updated, last_updated_ms, content_digest, package_sha256, package_size, package_version,
                package_withheld
            FROM issue WHERE global_id = \(issue.globalID) OR apple_id = \(issue.appleID) ORDER BY id LIMIT 1
            """, logger).first
        return try existing.map {
            ($0, ImportVersions.Stored(appleID: try $0.string("apple_id"), lastUpdated: try $0.string("last_updated"),
                                       lastUpdatedMS: try $0.optionalInt("last_updated_ms"),
                                       contentDigest: try $0.optionalString("content_digest")))
        }
    }

    /// What an import that changed nothing answers: the stored issue's counts and package.
    fileprivate func unchanged(
        _ existing: PostgresRandomAccessRow?, issue: IssueRecord, path: String, files: Int, warnings: [Diagnostic], _ connection: PostgresConnection
    ) throws -> ImportResult {
        var counts: PostgresRandomAccessRow?
        var package: ImportResult.Package?
        if let existing {
            let id = try existing.int("id")
            counts = try connection.rows("""
                SELECT (SELECT count(*) FROM article WHERE issue_id = \(id)) AS articles,
                       (SELECT count(*) FROM asset WHERE issue_id = \(id)) AS assets
                """, logger).first
            if let sha = try existing.optionalString("package_sha256") {
                package = ImportResult.Package(sha256: sha, size: try existing.optionalInt("package_size") ?? 0,
                                               version: try existing.optionalInt("package_version") ?? 0,
                                               withheld: try existing.optionalString("package_withheld"))
            }
        }
        return ImportResult(path: path, status: .unchanged, appleID: issue.appleID, globalID: issue.globalID,
                            lastUpdated: DumplingDate.rfc3339(issue.lastUpdated),
                            articles: Int(try counts?.int("articles") ?? 0), assets: Int(try counts?.int("assets") ?? 0),
                            files: files, package: package, warnings: warnings)
    }

    /// What every import does once the job's pass has staged the files: every file at its
    /// content address, then one transaction that swaps the issue's rows, then the old issue's
    /// blobs that nothing names any more removed.
    fileprivate func commit(_ job: StagedImport, replacing existing: PostgresRandomAccessRow?, _ connection: PostgresConnection) throws -> ImportResult {
        let (issue, status, path) = (job.issue, job.status, job.path)
        var replaced: Int64?
        // The old issue's blobs are noted on the server for after the switch; whatever ends
        // this import, the note goes with it.
        defer { if replaced != nil { try? connection.run("DROP TABLE IF EXISTS noted_blobs", logger) } }
        if let existing, status == .replaced {
            let id = try existing.int("id")
            try noteBlobs(ofIssue: id, connection)
            replaced = id
        }
        let pass = job.pass
        let (token, staging, warnings, staged, files) = (pass.token, pass.staging, pass.warnings, pass.kept, pass.files)

        // 3. Every file at its content address; what this import created goes again if it
        // does not commit.
        var created: [String] = []
        var committed = false
        var unsure = false
        defer {
            if unsure { blobs.noteUnsettled() } else if !committed { for sha in created { blobs.remove(sha) } }
        }
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
                                           withheld: job.withheld)
        try transaction(connection, ifCommitUnsure: { unsure = true }) {
            package.version = try connection.rows("""
                INSERT INTO package_version (apple_id, version) VALUES (\(issue.appleID), 1)
                ON CONFLICT (apple_id) DO UPDATE SET version = package_version.version + 1 RETURNING version
                """, logger).first?.int("version") ?? 1
            if let replaced { try connection.run("DELETE FROM issue WHERE id = \(replaced)", logger) }
            counts = try insert(issue, contentDigest: job.contentDigest, package: package, manifest: manifestFile,
                                display: path, files: files, connection)
        }
        committed = true
        if replaced != nil { try removeNotedBlobs(connection) }
        return ImportResult(path: path, status: status, appleID: issue.appleID, globalID: issue.globalID,
                            lastUpdated: DumplingDate.rfc3339(issue.lastUpdated), articles: counts.articles, assets: counts.assets,
                            files: files.count, package: package, warnings: warnings)
    }

    /// Notes the blobs an issue's rows name (its files and its kept zip) in a temporary table
    /// of this connection's, for `removeNotedBlobs` once the rows are gone: the server keeps
    /// the list, not this process (the 60,002 names of a 30,000-article issue read into it took
    /// `galley delete` to 62.5 MB and a replacement to 80 MB).
    func noteBlobs(ofIssue id: Int64, _ connection: PostgresConnection) throws {
        try connection.run("DROP TABLE IF EXISTS noted_blobs", logger)
        try connection.run("CREATE TEMP TABLE noted_blobs (sha256 text PRIMARY KEY)", logger)
        try connection.run("""
            INSERT INTO noted_blobs SELECT sha256 FROM file WHERE issue_id = \(id)
            UNION SELECT package_sha256 FROM issue WHERE id = \(id) AND package_sha256 IS NOT NULL
            """, logger)
    }

    /// Removes the noted blobs (`noteBlobs`) that no row names any more, read through a cursor,
    /// and forgets the note.
    func removeNotedBlobs(_ connection: PostgresConnection) throws {
        defer { try? connection.run("DROP TABLE IF EXISTS noted_blobs", logger) }
        try transaction(connection) {
            try eachRow("""
                SELECT n.sha256 FROM noted_blobs n
                WHERE NOT EXISTS (SELECT 1 FROM file f WHERE f.sha256 = n.sha256)
                  AND NOT EXISTS (SELECT 1 FROM issue i WHERE i.package_sha256 = n.sha256)
                """, connection) { blobs.remove(try $0.string("sha256")) }
        }
    }

    /// Writes the issue's rows: the issue, its images, each article as the manifest streams it
    /// (with its search vector and assets), and its files. A repeated article or asset id keeps
    /// the first, as the SQLite store and Dumpling do.
    private func insert(
        _ issue: IssueRecord, contentDigest: String, package: ImportResult.Package, manifest: URL, display: String,
        files: ImportPass.Files, _ connection: PostgresConnection
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
        // Rows go in batches (a statement per batch of articles and one for their assets, over
        // unnest'ed arrays), not one statement per row: each statement is a round trip.
        var batch = ArticleBatch()
        func flush() throws {
            guard !batch.articles.isEmpty else { return }
            let ids = try batch.insertArticles(issueID: issueID, connection, logger)
            counts.articles += ids.count
            var assets = AssetBatch()
            for (placement, article) in batch.articles {
                guard let articleID = ids[placement] else { continue }  // a repeated id: Dumpling keeps the first
                for list in [article.images, article.sounds, article.videos] { assets.add(list, article: articleID, writer: writer) }
            }
            counts.assets += try assets.insert(issueID: issueID, connection, logger)
            batch = ArticleBatch()
        }
        var images = AssetBatch()
        images.add(issue.images, article: nil, writer: writer)
        counts.assets += try images.insert(issueID: issueID, connection, logger)
        var placement: Int64 = 0
        try ManifestStream.articles(manifest, display: display, issueGlobalID: issue.globalID) { article in
            placement += 1
            batch.add(article, placement: placement, writer: writer)
            if batch.isFull { try flush() }
        }
        try flush()
        try connection.run("UPDATE issue SET article_count = \(Int64(counts.articles)) WHERE id = \(issueID)", logger)
        // The files in one statement (an issue of small pictures has tens of thousands).
        try connection.run("""
            INSERT INTO file (issue_id, name, size, sha256)
            SELECT \(issueID), name, size, sha256 FROM unnest(\(files.map(\.name))::text[], \(files.map(\.size))::bigint[],
                \(files.map(\.sha256))::text[]) AS f(name, size, sha256)
            """, logger)
        return counts
    }
}

/// Articles waiting to be written together: at most 200, or about 4 MB of text, so memory stays
/// bounded at any issue size.
private struct ArticleBatch {
    var articles: [(placement: Int64, record: ArticleRecord)] = []
    private var columns = (globalID: [String](), placement: [Int64](), text: [[String]](repeating: [], count: 14),
                           dateMS: [Int64](), hasDate: [Bool](), sku: [String](), hasSKU: [Bool](), published: [Bool](),
                           featured: [Bool](), customMeta: [String](), searchBody: [String]())
    private var bytes = 0

    var isFull: Bool { articles.count >= 200 || bytes >= 4 << 20 }

    mutating func add(_ article: ArticleRecord, placement: Int64, writer: JSONWriter) {
        articles.append((placement, article))
        columns.globalID.append(article.globalID)
        columns.placement.append(placement)
        let texts = [article.title, article.body, article.description, article.url, article.section, article.authorName,
                     article.source, article.dek, article.authorURL, article.authorBio, article.keywords, article.commentary,
                     article.type, article.dateLastUpdated]
        for (index, text) in texts.enumerated() { columns.text[index].append(text) }
        let dateMS = ISODateTime(parsing: article.dateLastUpdated)?.millisecondsSinceEpoch
        columns.dateMS.append(dateMS ?? 0)
        columns.hasDate.append(dateMS != nil)
        columns.sku.append(article.sku ?? "")
        columns.hasSKU.append(article.sku != nil)
        columns.published.append(article.published)
        columns.featured.append(article.featured)
        let searchBody = SearchText.body(article.body)
        columns.customMeta.append(writer.encode(article.customMeta))
        columns.searchBody.append(searchBody)
        bytes += article.body.utf8.count + searchBody.utf8.count + 512
    }

    /// Inserts the batch in order (a repeated global id keeps the first) with each article's
    /// search vector (weights as the SQLite index's: title A, dek and keywords B, body D).
    /// Returns the row ids of the articles written, by placement.
    func insertArticles(issueID: Int64, _ connection: PostgresConnection, _ logger: PostgresCalls) throws -> [Int64: Int64] {
        var binds = PostgresBindings()
        binds.append(issueID)                   // $1
        binds.append(columns.globalID)          // $2
        binds.append(columns.placement)         // $3
        for text in columns.text { binds.append(text) }  // $4 title ... $17 date_last_updated
        binds.append(columns.dateMS)            // $18
        binds.append(columns.hasDate)           // $19
        binds.append(columns.sku)               // $20
        binds.append(columns.hasSKU)            // $21
        binds.append(columns.published)         // $22
        binds.append(columns.featured)          // $23
        binds.append(columns.customMeta)        // $24
        binds.append(columns.searchBody)        // $25
        let rows = try connection.rows(PostgresQuery(unsafeSQL: """
            INSERT INTO article (issue_id, global_id, placement, title, body, description, url, section, author_name, source, dek,
                author_url, author_bio, keywords, commentary, type, date_last_updated, date_ms, sku, published, featured,
                custom_meta, search_body, search)
            SELECT $1, t.global_id, t.placement, t.title, t.body, t.description, t.url, t.section, t.author_name, t.source, t.dek,
                t.author_url, t.author_bio, t.keywords, t.commentary, t.type, t.date_last_updated,
                CASE WHEN t.has_date THEN t.date_ms END, CASE WHEN t.has_sku THEN t.sku END, t.published, t.featured,
                t.custom_meta, t.search_body,
                setweight(to_tsvector('simple', unaccent(t.title)), 'A') || setweight(to_tsvector('simple', unaccent(t.dek)), 'B')
                || setweight(to_tsvector('simple', unaccent(t.keywords)), 'B') || setweight(to_tsvector('simple', unaccent(t.search_body)), 'D')
            FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[],
                $18::bigint[], $19::boolean[], $20::text[], $21::boolean[], $22::boolean[], $23::boolean[], $24::text[], $25::text[])
                WITH ORDINALITY AS t(global_id, placement, title, body, description, url, section, author_name, source, dek,
                    author_url, author_bio, keywords, commentary, type, date_last_updated, date_ms, has_date, sku, has_sku,
                    published, featured, custom_meta, search_body, ord)
            ORDER BY t.ord
            ON CONFLICT (issue_id, global_id) DO NOTHING
            RETURNING id, placement
            """, binds: binds), logger)
        var ids: [Int64: Int64] = [:]
        for row in rows { ids[try row.int("placement")] = try row.int("id") }
        return ids
    }
}

/// Assets waiting to be written together, in list order (a repeated global id keeps the first).
private struct AssetBatch {
    private var article: [Int64] = [], hasArticle: [Bool] = [], globalID: [String] = [], kind: [String] = []
    private var placement: [Int64] = [], caption: [String] = [], source: [String] = [], fileName: [String] = []
    private var crop350: [String] = [], metadata: [String] = [], hasMetadata: [Bool] = []

    mutating func add(_ list: [AssetRecord], article articleID: Int64?, writer: JSONWriter) {
        for (index, asset) in list.enumerated() {
            article.append(articleID ?? 0)
            hasArticle.append(articleID != nil)
            globalID.append(asset.id)
            kind.append(asset.kind.rawValue)
            placement.append(Int64(index + 1))
            caption.append(asset.caption)
            source.append(asset.source)
            fileName.append(asset.fileName)
            crop350.append(asset.crop350)
            metadata.append(asset.metadata.map { writer.encode($0) } ?? "")
            hasMetadata.append(asset.metadata != nil)
        }
    }

    /// Inserts them; returns how many were written.
    func insert(issueID: Int64, _ connection: PostgresConnection, _ logger: PostgresCalls) throws -> Int {
        guard !globalID.isEmpty else { return 0 }
        return try connection.rows("""
            INSERT INTO asset (issue_id, article_id, global_id, kind, placement, caption, source, file_name, crop350, metadata)
            SELECT \(issueID), CASE WHEN t.has_article THEN t.article END, t.global_id, t.kind, t.placement, t.caption, t.source,
                t.file_name, t.crop350, CASE WHEN t.has_metadata THEN t.metadata END
            FROM unnest(\(article)::bigint[], \(hasArticle)::boolean[], \(globalID)::text[], \(kind)::text[], \(placement)::bigint[],
                \(caption)::text[], \(source)::text[], \(fileName)::text[], \(crop350)::text[], \(metadata)::text[],
                \(hasMetadata)::boolean[])
                WITH ORDINALITY AS t(article, has_article, global_id, kind, placement, caption, source, file_name, crop350, metadata,
                    has_metadata, ord)
            ORDER BY t.ord
            ON CONFLICT (issue_id, global_id) DO NOTHING
            RETURNING id
            """, logger).count
    }
}

/// An import into the shared store on the writer's connection, under its lock
/// (`ImportJob.run(into:)`). Its rows are written at the commit.
package struct PostgresImport: ImportSession {
    fileprivate let store: PostgresStore
    fileprivate let connection: PostgresConnection

    package var stagingFolder: URL { store.blobs.staging }
    package var root: URL { store.blobs.root }

    package func held(_ issue: IssueRecord) throws -> (held: PostgresRandomAccessRow, versions: ImportVersions.Stored)? {
        try store.storedIssue(issue, connection)
    }

    package func unchanged(_ held: PostgresRandomAccessRow?, issue: IssueRecord, path: String, files: Int, warnings: [Diagnostic]) throws -> ImportResult {
        try store.unchanged(held, issue: issue, path: path, files: files, warnings: warnings, connection)
    }

    package func commit(_ staged: StagedImport, replacing held: PostgresRandomAccessRow?) throws -> ImportResult {
        try store.commit(staged, replacing: held, connection)
    }
}
