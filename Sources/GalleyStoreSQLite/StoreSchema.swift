import GRDB
import GalleyCore
import GalleyStore
import GalleyFormats
import GalleyKit

/// The store's versioned schema. Migrations only ever append: a store made by an older Galley
/// is brought up to date when it is opened.
enum StoreSchema {
    /// Brings the store's database up to date. A new (empty) one gets the schema the
    /// migrations end with in one script (`current`), marked as migrated; a store made by an
    /// older Galley replays the migrations it lacks. Replaying all of them for every new store
    /// (v1 builds a search table that v4 drops and builds again; GRDB's `belongsTo` compiles its
    /// inflection rules) was 5-7 ms of every import into a new store, a fifth of a 4-article
    /// import. `StoreSchemaTests` holds the script equal to the migrations' result.
    /// Then the search index is rebuilt if this Galley's `SearchText` is not the one it was
    /// built under (see `SearchText.version`).
    static func migrate(_ database: DatabasePool) throws {
        try database.write { db in
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 else { return }
            try db.execute(sql: current)
            let applied = try db.makeStatement(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)")
            for identifier in currentIdentifiers { try applied.execute(arguments: [identifier]) }
        }
        try migrator().migrate(database)
        try database.write(SearchText.rebuildIfChanged)
    }

    /// Whether `migrate` has nothing to do: every migration done and the search index built
    /// under this Galley's `SearchText`.
    static func isCurrent(_ db: Database) throws -> Bool {
        try migrator().hasCompletedMigrations(db) && SearchText.indexedVersion(db) == SearchText.version
    }

    /// The migrations `current` stands for: the first twelve, v1 to v12. One added later is
    /// not in it: a new store gets the script, then that migration, as an older store gets the
    /// migrations it lacks.
    static var currentIdentifiers: [String] { Array(migrator().migrations.prefix(12)) }

    /// What `migrator()` makes of an empty database up to v12, each statement as SQLite then
    /// holds it in `sqlite_master` (columns added by ALTER TABLE inside their tables'
    /// statements); SQLite makes the tables behind `articleSearch` itself.
    static let current = #"""
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        CREATE TABLE "issue" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "globalID" TEXT NOT NULL UNIQUE, "appleID" TEXT NOT NULL UNIQUE, "title" TEXT NOT NULL, "description" TEXT NOT NULL, "lastUpdated" TEXT NOT NULL, "lastUpdatedMS" INTEGER, "displayDate" TEXT NOT NULL, "publishDate" TEXT NOT NULL, "publishDay" TEXT, "metadata" TEXT NOT NULL, "folder" TEXT NOT NULL, "contentDigest" TEXT, "packageSHA256" TEXT, "packageSize" INTEGER, "packageVersion" INTEGER, "packageWithheld" TEXT);
        CREATE TABLE "article" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "issueId" INTEGER NOT NULL REFERENCES "issue"("id") ON DELETE CASCADE, "globalID" TEXT NOT NULL, "placement" INTEGER NOT NULL, "title" TEXT NOT NULL, "body" TEXT NOT NULL, "description" TEXT NOT NULL, "url" TEXT NOT NULL, "section" TEXT NOT NULL, "authorName" TEXT NOT NULL, "source" TEXT NOT NULL, "dek" TEXT NOT NULL, "authorURL" TEXT NOT NULL, "authorBio" TEXT NOT NULL, "keywords" TEXT NOT NULL, "commentary" TEXT NOT NULL, "type" TEXT NOT NULL, "dateLastUpdated" TEXT NOT NULL, "dateMS" INTEGER, "sku" TEXT, "published" BOOLEAN NOT NULL, "featured" BOOLEAN NOT NULL, "customMeta" TEXT NOT NULL, UNIQUE ("issueId", "globalID"));
        CREATE INDEX "article_on_issueId" ON "article"("issueId");
        CREATE TABLE "asset" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "issueId" INTEGER NOT NULL REFERENCES "issue"("id") ON DELETE CASCADE, "articleId" INTEGER REFERENCES "article"("id") ON DELETE CASCADE, "globalID" TEXT NOT NULL, "kind" TEXT NOT NULL, "placement" INTEGER NOT NULL, "caption" TEXT NOT NULL, "source" TEXT NOT NULL, "fileName" TEXT NOT NULL, "crop350" TEXT NOT NULL, "metadata" TEXT, UNIQUE ("issueId", "globalID"));
        CREATE INDEX "asset_on_issueId" ON "asset"("issueId");
        CREATE INDEX "asset_on_articleId" ON "asset"("articleId");
        CREATE TABLE "file" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "issueId" INTEGER NOT NULL REFERENCES "issue"("id") ON DELETE CASCADE, "name" TEXT NOT NULL, "size" INTEGER NOT NULL, "sha256" TEXT NOT NULL, UNIQUE ("issueId", "name"));
        CREATE INDEX "file_on_issueId" ON "file"("issueId");
        \#(searchIndexSQL)
        \#(searchTermsSQL);
        PRAGMA user_version = \#(SearchText.version);
        \#(revisionSQL)
        CREATE TABLE "packageVersion" ("appleID" TEXT PRIMARY KEY NOT NULL, "version" INTEGER NOT NULL);
        \#(listingOrderSQL)
        CREATE TABLE "syncFeed" ("url" TEXT PRIMARY KEY NOT NULL, "etag" TEXT, "revision" INTEGER NOT NULL, "syncedAt" TEXT NOT NULL, "expires" TEXT);
        CREATE TABLE "syncRefused" ("sha256" TEXT PRIMARY KEY NOT NULL, "appleID" TEXT NOT NULL, "message" TEXT NOT NULL, "refusedAt" TEXT NOT NULL);
        \#(independentArticlesSQL)
        """#

    // The statements a migration runs as SQL text are kept once, for the migration and for
    // `current`: SQLite keeps each CREATE statement's text as it was given.

    /// v12: the search index without a copy of its text. `articleSearchSource` makes each
    /// article's text as the index holds it from the article's row (`SearchText`'s functions,
    /// registered on every connection); the index reads it back only to take an article's words
    /// out, to rebuild, and for snippets.
    /// Its tokenizer is `SearchText.tokenizer`, the one queries are split with, spelled as GRDB
    /// spells it (each component an SQL string, the whole quoted again).
    static let searchIndexSQL = """
        CREATE VIEW articleSearchSource AS SELECT id, galleySearchField(title) AS title, galleySearchField(dek) AS dek, \
        galleySearchField(keywords) AS keywords, galleySearchBody(body) AS body FROM article;
        CREATE VIRTUAL TABLE articleSearch USING fts5(title, dek, keywords, body, content='articleSearchSource', content_rowid='id', \
        tokenize=\(sqlString(SearchText.tokenizer.components.map(sqlString).joined(separator: " "))));
        """

    /// `text` as an SQL string literal (GRDB quotes literals only through a connection).
    private static func sqlString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// The index's terms (v2, and again in v4 and v12).
    static let searchTermsSQL = "CREATE VIRTUAL TABLE articleSearchTerms USING fts5vocab(articleSearch, 'instance')"

    /// v5: the store's revision, its triggers, and the article id index.
    static let revisionSQL = """
        CREATE TABLE storeRevision (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
        INSERT INTO storeRevision (id, value) VALUES (1, 1);
        CREATE TRIGGER issueInserted AFTER INSERT ON issue BEGIN UPDATE storeRevision SET value = value + 1; END;
        CREATE TRIGGER issueUpdated AFTER UPDATE ON issue BEGIN UPDATE storeRevision SET value = value + 1; END;
        CREATE TRIGGER issueDeleted AFTER DELETE ON issue BEGIN UPDATE storeRevision SET value = value + 1; END;
        CREATE INDEX articleGlobalID ON article(globalID);
        """

    /// v7: the listings' orders.
    static let listingOrderSQL = """
        CREATE INDEX issueListing ON issue(coalesce(publishDay, '') DESC, appleID);
        CREATE INDEX articleListing ON article(issueId, placement);
        CREATE INDEX articleByDate ON article(coalesce(dateMS, -9223372036854775807) DESC);
        """

    /// v13: the issue listing's order, an issue's assets' order, the issues by kept zip
    /// (whether a removed issue's zip is another's: `removeUnusedPackages`), and each issue's
    /// featured articles (a page of them seeks each issue's few instead of reading all).
    static let listingOrderV13SQL = """
        CREATE INDEX issueOrder ON issue(publishDay DESC, lastUpdatedMS DESC, appleID);
        CREATE INDEX assetOrder ON asset(issueId, articleId, kind, placement);
        CREATE INDEX issuePackage ON issue(packageSHA256);
        CREATE INDEX articleFeatured ON article(issueId, featured, placement);
        """

    /// v11: independent articles, and the revision's triggers on them.
    static let independentArticlesSQL = """
        CREATE TABLE independentArticle (
            globalID TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL, dek TEXT NOT NULL, section TEXT NOT NULL, type TEXT NOT NULL,
            author TEXT NOT NULL, date TEXT, dateMS INTEGER, keywords TEXT NOT NULL,
            body TEXT NOT NULL, url TEXT NOT NULL, featured INTEGER NOT NULL,
            source TEXT NOT NULL, mergedAt TEXT NOT NULL);
        CREATE INDEX independentByDate ON independentArticle(coalesce(dateMS, -9223372036854775807) DESC, globalID);
        CREATE TRIGGER independentInserted AFTER INSERT ON independentArticle BEGIN UPDATE storeRevision SET value = value + 1; END;
        CREATE TRIGGER independentUpdated AFTER UPDATE ON independentArticle BEGIN UPDATE storeRevision SET value = value + 1; END;
        CREATE TRIGGER independentDeleted AFTER DELETE ON independentArticle BEGIN UPDATE storeRevision SET value = value + 1; END;
        """

    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: issues, articles, assets, search") { db in
            try db.create(table: "issue") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("globalID", .text).notNull().unique()
                t.column("appleID", .text).notNull().unique()
                t.column("title", .text).notNull()
                t.column("description", .text).notNull()
                t.column("lastUpdated", .text).notNull()
                t.column("lastUpdatedMS", .integer)
                t.column("displayDate", .text).notNull()
                t.column("publishDate", .text).notNull()
                /// yyyy-MM-dd of publishDate, for ordering (null when Dumpling would use "today").
                t.column("publishDay", .text)
                t.column("metadata", .text).notNull()
                /// The issue's files: `issues/<folder>` in the store.
                t.column("folder", .text).notNull()
            }
            try db.create(table: "article") { t in
                t.autoIncrementedPrimaryKey("id")
                t.belongsTo("issue", onDelete: .cascade).notNull()
                t.column("globalID", .text).notNull()
                t.column("placement", .integer).notNull()
                for column in ["title", "body", "description", "url", "section", "authorName", "source", "dek",
                               "authorURL", "authorBio", "keywords", "commentary", "type", "dateLastUpdated"] {
                    t.column(column, .text).notNull()
                }
                t.column("dateMS", .integer)
                t.column("sku", .text)
                t.column("published", .boolean).notNull()
                t.column("featured", .boolean).notNull()
                t.column("customMeta", .text).notNull()
                t.uniqueKey(["issueId", "globalID"])
            }
            try db.create(table: "asset") { t in
                t.autoIncrementedPrimaryKey("id")
                t.belongsTo("issue", onDelete: .cascade).notNull()
                t.belongsTo("article", onDelete: .cascade)
                t.column("globalID", .text).notNull()
                t.column("kind", .text).notNull()
                t.column("placement", .integer).notNull()
                t.column("caption", .text).notNull()
                t.column("source", .text).notNull()
                t.column("fileName", .text).notNull()
                t.column("crop350", .text).notNull()
                t.column("metadata", .text)
                t.uniqueKey(["issueId", "globalID"])
            }
            try db.create(table: "file") { t in
                t.autoIncrementedPrimaryKey("id")
                t.belongsTo("issue", onDelete: .cascade).notNull()
                t.column("name", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("sha256", .text).notNull()
                t.uniqueKey(["issueId", "name"])
            }
            try SearchText.createIndex(db, tokenizer: .unicode61())
        }
        // The index's terms, so a search word can be spelled out as the terms it prefixes
        // (StoreSearch): a view over articleSearch, nothing stored. The `instance` kind yields a
        // term's first row without counting its documents, as the `row` kind would.
        migrator.registerMigration("v2: search terms") { db in
            try db.execute(sql: searchTermsSQL)
        }
        // What the zip held (names, CRC-32s, sizes), so that a zip with the same last_updated
        // but other content is told apart from a true re-import. Null for issues imported before.
        migrator.registerMigration("v3: content digest") { db in
            try db.alter(table: "issue") { t in t.add(column: "contentDigest", .text) }
        }
        // Search as readers search (SearchText): apostrophes inside words kept, every Latin
        // diacritic folded, entities decoded, whitespace folded. The index is rebuilt from the
        // articles' rows, in the same transaction.
        migrator.registerMigration("v4: search text") { db in
            try db.execute(sql: "DROP TABLE articleSearchTerms")
            try db.drop(table: "articleSearch")
            try SearchText.createIndex(db, tokenizer: SearchText.tokenizer)
            try db.execute(sql: searchTermsSQL)
            let rows = try Row.fetchCursor(db, sql: "SELECT id, title, dek, keywords, body FROM article ORDER BY id")
            while let row = try rows.next() {
                try SearchText.index(db, rowID: row["id"], title: row["title"], dek: row["dek"], keywords: row["keywords"], body: row["body"])
            }
        }
        // A revision that every change to the issues bumps (triggers, so no writer can forget
        // it): `serve` derives its ETags from it, so a conditional GET costs one row read. And
        // an index for looking an article up by its global id alone (`article show`).
        migrator.registerMigration("v5: revision, article ids") { db in
            try db.execute(sql: revisionSQL)
        }
        // The zip each issue was imported from, kept content-addressed in `packages/` for
        // `serve`'s package feed, with the feed's version: one more with every import that
        // changes the issue. `packageVersion` outlives a deletion, so an issue deleted and
        // imported again never goes back to a version an app has already seen.
        migrator.registerMigration("v6: packages") { db in
            try db.alter(table: "issue") { t in
                t.add(column: "packageSHA256", .text)
                t.add(column: "packageSize", .integer)
                t.add(column: "packageVersion", .integer)
                t.add(column: "packageWithheld", .text)
            }
            try db.create(table: "packageVersion") { t in
                t.primaryKey("appleID", .text)
                t.column("version", .integer).notNull()
            }
        }
        // The listings' orders as indexes, so a page reads its rows in order and stops at the
        // limit instead of sorting every article first: issues newest first (articles then in
        // placement within each), and articles by date.
        migrator.registerMigration("v7: listing order") { db in
            try db.execute(sql: listingOrderSQL)
        }
        // `galley sync`: what each followed feed last said (its ETag for the next conditional
        // request, its revision against rollbacks), written only after a sync that completed.
        migrator.registerMigration("v8: followed feeds") { db in
            try db.create(table: "syncFeed") { t in
                t.primaryKey("url", .text)
                t.column("etag", .text)
                t.column("revision", .integer).notNull()
                t.column("syncedAt", .text).notNull()
            }
        }
        // `galley sync`: packages the import gate refused, by SHA-256, so that a feed still
        // listing one does not make every sync download it again.
        migrator.registerMigration("v9: refused packages") { db in
            try db.create(table: "syncRefused") { t in
                t.primaryKey("sha256", .text)
                t.column("appleID", .text).notNull()
                t.column("message", .text).notNull()
                t.column("refusedAt", .text).notNull()
            }
        }
        // Signed feeds: when the last verified signature expires, so that a 304 after it can
        // still warn that the feed is frozen.
        migrator.registerMigration("v10: feed signature expiry") { db in
            try db.alter(table: "syncFeed") { t in t.add(column: "expires", .text) }
        }
        // Independent articles (no issue): merged by global id from article feeds, key-mapped
        // foreign feeds and `import --articles`; old ones kept. The revision follows them too,
        // so serve's kept answers and tags change with them.
        migrator.registerMigration("v11: independent articles") { db in
            try db.execute(sql: independentArticlesSQL)
        }
        // The search index keeps no copy of the text it indexes (`searchIndexSQL`): the copy was
        // as large as the articles' rows themselves (94 MB of a 239 MB store at 30,000
        // articles), and written by every import. Built again from the articles.
        migrator.registerMigration("v12: search index without a copy") { db in
            try db.execute(sql: "DROP TABLE articleSearchTerms")
            try db.drop(table: "articleSearch")
            try db.execute(sql: searchIndexSQL)
            try SearchText.rebuild(db)
            try db.execute(sql: searchTermsSQL)
        }
        // Indexes in the orders the listings sort by, so that no listing sorts: the issues
        // and packages (`issueOrder`, which also seeks an issue's older and newer ones by day),
        // and an issue's assets with the cover first (`assetOrder`). `StorePlanTests` explains
        // every query on a grown store.
        migrator.registerMigration("v13: listing orders") { db in
            try db.execute(sql: listingOrderV13SQL)
        }
        // Each issue's article count kept on its row, as PostgreSQL's `article_count` is: the
        // issue listing counted every issue's articles per request (at 10,000 issues of 300
        // articles, 3 million index entries stepped for one `/issues`).
        migrator.registerMigration("v14: article counts") { db in
            try db.execute(sql: "ALTER TABLE issue ADD COLUMN articleCount INTEGER NOT NULL DEFAULT 0")
            try db.execute(sql: "UPDATE issue SET articleCount = (SELECT COUNT(*) FROM article a WHERE a.issueId = issue.id)")
        }
        // The key each followed feed was verified with (`FollowedFeed.keyID`).
        migrator.registerMigration("v15: followed feeds' keys") { db in
            try db.alter(table: "syncFeed") { t in t.add(column: "keyID", .text) }
        }
        return migrator
    }
}
