import Foundation
import GalleyStore
import Logging
import PostgresNIO

/// The PostgreSQL store's schema as versioned SQL: migrations only ever append, each runs in its
/// own transaction and is recorded in `galley_migration`, and all of them run under an advisory
/// lock, so instances starting together against a new database create its tables once.
///
/// The tables mirror the SQLite store's (StoreSchema) in PostgreSQL's spelling. Text that
/// listings sort by is `COLLATE "C"` (byte order, as SQLite compares), so both backends list in
/// the same order whatever the database's locale.
enum PostgresSchema {
    struct Migration: Sendable {
        var version: Int
        var name: String
        /// One statement each (the extended protocol takes one at a time).
        var statements: [String]
        /// Work SQL cannot do (Galley's own text functions), run after the statements in the
        /// same transaction.
        var rewrite: (@Sendable (PostgresConnection, PostgresCalls) throws -> Void)? = nil
    }

    /// Advisory lock keys (one 64-bit space per database): migrations, and the writer lock that
    /// imports, deletions and gc hold (the SQLite store's `.lock`).
    static let migrationLock: Int64 = 0x6761_6C6C_6579_0001
    static let writerLock: Int64 = 0x6761_6C6C_6579_0002
    /// What every change to the issues or independent articles notifies, with the new revision.
    static let revisionChannel = "galley_revision"

    static let migrations: [Migration] = [
        Migration(version: 1, name: "issues, articles, assets, files, search, packages, sync, independent articles", statements: [
            "CREATE EXTENSION IF NOT EXISTS unaccent",
            """
            CREATE TABLE issue (
                id bigserial PRIMARY KEY,
                global_id text COLLATE "C" NOT NULL UNIQUE,
                apple_id text COLLATE "C" NOT NULL UNIQUE,
                title text NOT NULL,
                description text NOT NULL,
                last_updated text COLLATE "C" NOT NULL,
                last_updated_ms bigint,
                display_date text NOT NULL,
                publish_date text NOT NULL,
                publish_day text COLLATE "C",
                metadata text NOT NULL,
                content_digest text,
                package_sha256 text,
                package_size bigint,
                package_version bigint,
                package_withheld text,
                article_count bigint NOT NULL DEFAULT 0)
            """,
            #"CREATE INDEX issue_listing ON issue ((coalesce(publish_day, '')) DESC, apple_id)"#,
            """
            CREATE TABLE article (
                id bigserial PRIMARY KEY,
                issue_id bigint NOT NULL REFERENCES issue(id) ON DELETE CASCADE,
                global_id text COLLATE "C" NOT NULL,
                placement bigint NOT NULL,
                title text NOT NULL, body text NOT NULL, description text NOT NULL, url text NOT NULL,
                section text NOT NULL, author_name text NOT NULL, source text NOT NULL, dek text NOT NULL,
                author_url text NOT NULL, author_bio text NOT NULL, keywords text NOT NULL, commentary text NOT NULL,
                type text NOT NULL, date_last_updated text NOT NULL,
                date_ms bigint,
                sku text,
                published boolean NOT NULL,
                featured boolean NOT NULL,
                custom_meta text NOT NULL,
                search_body text NOT NULL,
                search tsvector NOT NULL,
                UNIQUE (issue_id, global_id))
            """,
            "CREATE INDEX article_listing ON article (issue_id, placement)",
            "CREATE INDEX article_by_date ON article ((coalesce(date_ms, -9223372036854775807)) DESC)",
            "CREATE INDEX article_global_id ON article (global_id)",
            "CREATE INDEX article_search ON article USING gin (search)",
            """
            CREATE TABLE asset (
                id bigserial PRIMARY KEY,
                issue_id bigint NOT NULL REFERENCES issue(id) ON DELETE CASCADE,
                article_id bigint REFERENCES article(id) ON DELETE CASCADE,
                global_id text COLLATE "C" NOT NULL,
                kind text COLLATE "C" NOT NULL,
                placement bigint NOT NULL,
                caption text NOT NULL, source text NOT NULL, file_name text NOT NULL, crop350 text NOT NULL,
                metadata text,
                UNIQUE (issue_id, global_id))
            """,
            "CREATE INDEX asset_article ON asset (article_id)",
            """
            CREATE TABLE file (
                id bigserial PRIMARY KEY,
                issue_id bigint NOT NULL REFERENCES issue(id) ON DELETE CASCADE,
                name text COLLATE "C" NOT NULL,
                size bigint NOT NULL,
                sha256 text NOT NULL,
                UNIQUE (issue_id, name))
            """,
            "CREATE INDEX file_sha256 ON file (sha256)",
            "CREATE TABLE package_version (apple_id text PRIMARY KEY, version bigint NOT NULL)",
            "CREATE TABLE store_revision (id int PRIMARY KEY CHECK (id = 1), value bigint NOT NULL)",
            "INSERT INTO store_revision (id, value) VALUES (1, 1)",
            // Every statement that changes issues or independent articles moves the revision (in
            // its own transaction, so readers never see one without the other) and tells the
            // other instances, at commit, through NOTIFY.
            """
            CREATE FUNCTION galley_revision_bump() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE next bigint;
            BEGIN
                UPDATE store_revision SET value = value + 1 WHERE id = 1 RETURNING value INTO next;
                PERFORM pg_notify('galley_revision', next::text);
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER issue_changed AFTER INSERT OR UPDATE OR DELETE ON issue FOR EACH STATEMENT EXECUTE FUNCTION galley_revision_bump()",
            """
            CREATE TABLE sync_feed (url text PRIMARY KEY, etag text, revision bigint NOT NULL, synced_at text NOT NULL, expires text)
            """,
            """
            CREATE TABLE sync_refused (sha256 text PRIMARY KEY, apple_id text NOT NULL, message text NOT NULL, refused_at text NOT NULL)
            """,
            """
            CREATE TABLE independent_article (
                global_id text COLLATE "C" PRIMARY KEY,
                title text NOT NULL, dek text NOT NULL, section text NOT NULL, type text NOT NULL, author text NOT NULL,
                date text, date_ms bigint, keywords text NOT NULL, body text NOT NULL, url text NOT NULL,
                featured boolean NOT NULL, source text NOT NULL, merged_at text NOT NULL)
            """,
            "CREATE INDEX independent_by_date ON independent_article ((coalesce(date_ms, -9223372036854775807)) DESC, global_id)",
            """
            CREATE TRIGGER independent_changed AFTER INSERT OR UPDATE OR DELETE ON independent_article
            FOR EACH STATEMENT EXECUTE FUNCTION galley_revision_bump()
            """,
        ]),
        // Indexes in the orders the listings sort by (the SQLite store's v13), so that no
        // listing sorts: the issues and packages, which also seeks an issue's older and newer
        // ones by day, an issue's assets with the cover first, and the keyword filter
        // (`issue_listing` stays for the article listing's issue order). `StorePlanTests` explains every query on a grown
        // store.
        Migration(version: 2, name: "listing orders", statements: [
            "CREATE INDEX issue_order ON issue (publish_day DESC NULLS LAST, last_updated_ms DESC NULLS LAST, apple_id)",
            "CREATE INDEX asset_order ON asset (issue_id, article_id, kind, placement)",
            // The keyword filter's (`PostgresStore.articleQuery`): it seeks a rare keyword, and
            // its statistics tell the planner how many articles a common one leaves (an
            // `ILIKE` it could only guess at made it read every article for a page of 20).
            "CREATE INDEX article_keywords ON article USING gin (string_to_array(lower(keywords), ','))",
            // Whether a removed issue's kept zip is another's too (`removeNotedBlobs`): a seek,
            // not a read of every issue.
            "CREATE INDEX issue_package ON issue (package_sha256)",
            // Each issue's featured articles: a page of them seeks each issue's few instead of
            // reading every article when few or none are featured.
            "CREATE INDEX article_featured ON article (issue_id, placement) WHERE featured",
        ]),
        // The key each followed feed was verified with (`FollowedFeed.keyID`).
        Migration(version: 3, name: "followed feeds' keys", statements: [
            "ALTER TABLE sync_feed ADD COLUMN key_id text",
        ]),
        // `SearchText` version 2 (no space where a tag meets punctuation): every article's
        // search text made again, for its snippets. The words are the same, so `search` (the
        // tsvector) stands.
        Migration(version: 4, name: "search text v2", statements: [], rewrite: rewriteSearchBodies),
    ]

    /// Makes every article's `search_body` again from its body, a thousand rows at a time in
    /// id order.
    static func rewriteSearchBodies(_ connection: PostgresConnection, _ logger: PostgresCalls) throws {
        var after: Int64 = 0
        while true {
            let rows = try connection.rows("SELECT id::bigint AS id, body FROM article WHERE id > \(after) ORDER BY id LIMIT 1000", logger)
            guard !rows.isEmpty else { return }
            var ids: [Int64] = []
            var texts: [String] = []
            for row in rows {
                ids.append(try row.int("id"))
                texts.append(SearchText.body(try row.string("body")))
            }
            try connection.run("""
                UPDATE article a SET search_body = t.text FROM unnest(\(ids)::bigint[], \(texts)::text[]) AS t(id, text)
                WHERE a.id = t.id
                """, logger)
            after = ids.last ?? after
        }
    }

    /// Whether every migration has run (a read, nothing written).
    static func isCurrent(_ connection: PostgresConnection, _ logger: PostgresCalls) throws -> Bool {
        let exists = try connection.rows("SELECT to_regclass('galley_migration') IS NOT NULL AS present", logger)
        guard try exists.first?.bool("present") == true else { return false }
        let applied = try connection.rows("SELECT coalesce(max(version), 0)::bigint AS version FROM galley_migration", logger)
        return try applied.first?.int("version") ?? 0 >= Int64(migrations.last?.version ?? 0)
    }

    /// Applies the migrations this database lacks, under the migration lock.
    static func migrate(_ connection: PostgresConnection, _ logger: PostgresCalls) throws {
        try connection.advisoryLock(migrationLock, logger)
        defer { try? connection.run("SELECT pg_advisory_unlock(\(migrationLock))", logger) }
        try connection.run("""
            CREATE TABLE IF NOT EXISTS galley_migration (
                version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """, logger)
        let applied = Set(try connection.rows("SELECT version::bigint AS version FROM galley_migration", logger).map { try $0.int("version") })
        for migration in migrations where !applied.contains(Int64(migration.version)) {
            try connection.run("BEGIN", logger)
            do {
                for statement in migration.statements { try connection.run(PostgresQuery(unsafeSQL: statement), logger) }
                try migration.rewrite?(connection, logger)
                try connection.run("INSERT INTO galley_migration (version, name) VALUES (\(migration.version), \(migration.name))", logger)
                try connection.run("COMMIT", logger)
            } catch {
                if !(error is PostgresTimeout), !connection.isClosed { try? connection.run("ROLLBACK", logger) }
                throw error
            }
        }
    }
}
