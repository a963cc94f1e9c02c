import GRDB
import GRDBSQLite
import GalleyCore
import GalleyStore
import GalleyFormats

// The store's tables as GRDB records, in GRDB's style: one `Codable` struct per table whose
// properties are the columns (StoreSchema creates them), with `Columns` for typed queries. They
// are how rows are written (`insert`, through statements GRDB prepares once per connection) and
// how whole rows are read; the query records (`StoredIssue`, `StoredArticle`, ...) are the
// public shapes and decode from aliased SELECTs instead. Raw SQL stays for FTS5 and the
// aggregate queries.

/// A row of `issue`.
struct IssueRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "issue"
    var id: Int64?
    var globalID: String
    var appleID: String
    var title: String
    var description: String
    var lastUpdated: String
    var lastUpdatedMS: Int64?
    var displayDate: String
    var publishDate: String
    /// `yyyy-MM-dd` of `publishDate`, for ordering; nil when Dumpling would use "today".
    var publishDay: String?
    /// The issue's `metadata` object as JSON text.
    var metadata: String
    /// The issue's files: `issues/<folder>` in the store.
    var folder: String
    /// `ImportGate.Passed.contentDigest` of the zip imported (nil for stores older than v3).
    var contentDigest: String?
    /// The kept zip: its SHA-256 (its name in `packages/`), size and feed version (nil for
    /// issues imported before v6).
    var packageSHA256: String?
    var packageSize: Int64?
    var packageVersion: Int64?
    /// Why `serve`'s feed leaves the package out (an older Linechef format), or nil.
    var packageWithheld: String?

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let globalID = Column(CodingKeys.globalID)
        static let appleID = Column(CodingKeys.appleID)
        static let folder = Column(CodingKeys.folder)
        static let publishDay = Column(CodingKeys.publishDay)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    /// The kept zip as an import reports it, when there is one.
    var package: ImportResult.Package? {
        guard let packageSHA256, let packageSize, let packageVersion else { return nil }
        return ImportResult.Package(sha256: packageSHA256, size: packageSize, version: packageVersion, withheld: packageWithheld)
    }

    /// The row of `issue`, stored in `folder`.
    init(_ issue: IssueRecord, folder: String, contentDigest: String?, writer: JSONWriter) {
        self.contentDigest = contentDigest
        globalID = issue.globalID
        appleID = issue.appleID
        title = issue.title
        description = issue.description
        lastUpdated = issue.lastUpdated
        lastUpdatedMS = SQLiteStore.milliseconds(issue.lastUpdated)
        displayDate = issue.displayDate
        publishDate = issue.publishDate
        publishDay = ISODateTime(dumplingPublishDate: issue.publishDate)?.isoDay
        metadata = writer.encode(issue.metadata)
        self.folder = folder
    }

    /// The row with this global id or apple_id.
    static func named(_ id: String) -> QueryInterfaceRequest<IssueRow> {
        filter(Columns.globalID == id || Columns.appleID == id)
    }
}

/// A row of `article`.
struct ArticleRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "article"
    var id: Int64?
    var issueId: Int64
    var globalID: String
    /// 1-based position in the issue.
    var placement: Int
    var title: String
    var body: String
    var description: String
    var url: String
    var section: String
    var authorName: String
    var source: String
    var dek: String
    var authorURL: String
    var authorBio: String
    var keywords: String
    var commentary: String
    var type: String
    var dateLastUpdated: String
    var dateMS: Int64?
    var sku: String?
    var published: Bool
    var featured: Bool
    /// The article's `custom_meta` as JSON text.
    var customMeta: String

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let issueId = Column(CodingKeys.issueId)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    init(_ article: ArticleRecord, issue: Int64, placement: Int, writer: JSONWriter) {
        issueId = issue
        globalID = article.globalID
        self.placement = placement
        title = article.title
        body = article.body
        description = article.description
        url = article.url
        section = article.section
        authorName = article.authorName
        source = article.source
        dek = article.dek
        authorURL = article.authorURL
        authorBio = article.authorBio
        keywords = article.keywords
        commentary = article.commentary
        type = article.type
        dateLastUpdated = article.dateLastUpdated
        dateMS = SQLiteStore.milliseconds(article.dateLastUpdated)
        sku = article.sku
        published = article.published
        featured = article.featured
        customMeta = writer.encode(article.customMeta)
    }
}

/// A row of `asset`: an image, sound or video of an issue or of one of its articles.
struct AssetRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "asset"
    var id: Int64?
    var issueId: Int64
    /// nil for the issue's own images.
    var articleId: Int64?
    var globalID: String
    var kind: String
    /// 1-based position in its list.
    var placement: Int
    var caption: String
    var source: String
    var fileName: String
    var crop350: String
    var metadata: String?

    enum Columns {
        static let issueId = Column(CodingKeys.issueId)
        static let articleId = Column(CodingKeys.articleId)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    init(_ asset: AssetRecord, issue: Int64, article: Int64?, placement: Int, writer: JSONWriter) {
        issueId = issue
        articleId = article
        globalID = asset.id
        kind = asset.kind.rawValue
        self.placement = placement
        caption = asset.caption
        source = asset.source
        fileName = asset.fileName
        crop350 = asset.crop350
        metadata = asset.metadata.map { writer.encode($0) }
    }
}

/// A row of `file`: one file of an issue's folder, with the size and checksum it was stored with.
struct FileRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "file"
    var id: Int64?
    var issueId: Int64
    var name: String
    var size: Int64
    var sha256: String

    enum Columns {
        static let issueId = Column(CodingKeys.issueId)
        static let name = Column(CodingKeys.name)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// Rows an import writes by the tens of thousands, bound by position into one statement
/// prepared once per connection. GRDB's `insert` encodes each record through `Codable` into a
/// dictionary keyed by column name, which was a third of an import's database time at 30,000
/// articles; these skip that. The columns and values stay the `Codable` ones: a test holds
/// `insertValues` equal to GRDB's `databaseDictionary` of the same row, for every table here.
///
/// The values are `DatabaseValue`s made by each column's own type and bound as they are
/// (`Statement.executeBinding`): no boxing into `(any DatabaseValueConvertible)?`, no
/// `StatementArguments` (0.6 CPU-s of the 180,000 rows of a 30,000-article import).
protocol PositionalInsert: TableRecord {
    /// Every column but `id`, in the order of `insertValues`.
    static var insertColumns: [String] { get }
    var insertValues: [DatabaseValue] { get }
}

extension PositionalInsert {
    /// `INSERT [OR IGNORE] INTO table (columns) VALUES (?, ...)`.
    static func insertSQL(orIgnore: Bool) -> String {
        let placeholders = Array(repeating: "?", count: insertColumns.count).joined(separator: ", ")
        let columns = insertColumns.map { "\"\($0)\"" }.joined(separator: ", ")
        return "INSERT \(orIgnore ? "OR IGNORE " : "")INTO \"\(databaseTableName)\" (\(columns)) VALUES (\(placeholders))"
    }

    /// Inserts the row through `statement` (one of `insertSQL`'s, from `db.cachedStatement`).
    func insert(with statement: Statement) throws {
        try statement.executeBinding(insertValues)
    }
}

extension Statement {
    /// Binds `values` to the statement's `?` in order and runs it, through SQLite's C API on
    /// the statement GRDB prepared (`sqliteStatement`, which GRDB offers for this). GRDB's
    /// `execute(arguments:)` builds a `StatementArguments`, checks it against the statement and
    /// binds each value inside a closure of its own: with the values boxed on the way, half of
    /// the thread that writes an import's 180,000 rows at 30,000 articles. Each value binds as
    /// GRDB binds it (`DatabaseValue.bind`, text copied by SQLite). The store registers no
    /// GRDB transaction observers, which a statement run here would bypass.
    func executeBinding(_ values: [DatabaseValue]) throws {
        let raw = sqliteStatement
        // The result of the previous run was thrown then; reset only rewinds.
        sqlite3_reset(raw)
        guard values.count == Int(sqlite3_bind_parameter_count(raw)) else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(values.count) values for \(sqlite3_bind_parameter_count(raw)) parameters", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let code = value.bind(to: raw, at: CInt(offset + 1))
            guard code == SQLITE_OK else { throw failure(code) }
        }
        while true {
            switch sqlite3_step(raw) {
            case SQLITE_DONE: return
            case SQLITE_ROW: continue
            case let code: throw failure(code)
            }
        }
    }

    private func failure(_ code: CInt) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement))), sql: sql)
    }
}

extension ArticleRow: PositionalInsert {
    static let insertColumns = [
        "issueId", "globalID", "placement", "title", "body", "description", "url", "section", "authorName", "source", "dek",
        "authorURL", "authorBio", "keywords", "commentary", "type", "dateLastUpdated", "dateMS", "sku", "published", "featured",
        "customMeta",
    ]
    var insertValues: [DatabaseValue] {
        [issueId.databaseValue, globalID.databaseValue, placement.databaseValue, title.databaseValue, body.databaseValue,
         description.databaseValue, url.databaseValue, section.databaseValue, authorName.databaseValue, source.databaseValue,
         dek.databaseValue, authorURL.databaseValue, authorBio.databaseValue, keywords.databaseValue, commentary.databaseValue,
         type.databaseValue, dateLastUpdated.databaseValue, dateMS?.databaseValue ?? .null, sku?.databaseValue ?? .null,
         published.databaseValue, featured.databaseValue, customMeta.databaseValue]
    }
}

extension AssetRow: PositionalInsert {
    static let insertColumns = ["issueId", "articleId", "globalID", "kind", "placement", "caption", "source", "fileName", "crop350", "metadata"]
    var insertValues: [DatabaseValue] {
        [issueId.databaseValue, articleId?.databaseValue ?? .null, globalID.databaseValue, kind.databaseValue,
         placement.databaseValue, caption.databaseValue, source.databaseValue, fileName.databaseValue, crop350.databaseValue,
         metadata?.databaseValue ?? .null]
    }
}

extension FileRow: PositionalInsert {
    static let insertColumns = ["issueId", "name", "size", "sha256"]
    var insertValues: [DatabaseValue] { [issueId.databaseValue, name.databaseValue, size.databaseValue, sha256.databaseValue] }
}
