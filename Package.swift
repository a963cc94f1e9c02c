// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "galley",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "galley", targets: ["galley"]),
        .library(
            name: "GalleyKit",
            targets: [
                "GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore", "GalleyStoreSQLite", "GalleyStorePostgres",
                "GalleyStoreBackends", "GalleySigning", "GalleyServe", "GalleySync", "GalleyS3", "GalleyPublish",
            ]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // One system-library target per C library. Only the matching wrapper file in
        // GalleyKit imports each of them (see docs/architecture.md).
        .systemLibrary(
            name: "CArchive", pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]),
        .systemLibrary(
            name: "CCmark", pkgConfig: "libcmark-gfm",
            providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]),
        .systemLibrary(
            name: "CLibXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]),
        // libvips is loaded with dlopen when the first thumbnail is made, not linked (see
        // Sources/CVips/shim.h): no pkg-config, so its ~85 libraries stay out of every process.
        .systemLibrary(name: "CVips"),
        // zlib, for inflating and checking zip entries at the offsets Galley's own central
        // directory read found (Sources/GalleyFormats/Zip/ZipEntryReader.swift).
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // libdeflate, for the CRC-32 of every byte that reader reads: zlib's is 4x slower.
        .systemLibrary(
            name: "CDeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]),
        // Calls of the C library that Swift's Glibc module does not expose (copy_file_range).
        .systemLibrary(name: "CLinux"),
        // SHA-256 with the x86 SHA extensions, two streams at once (Sources/CSHA256/sha256.c says
        // why it is written here). Optimised in debug builds too: unoptimised it hashes at a sixth
        // of the speed, and the tests import zips with it.
        .target(name: "CSHA256", cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))]),
        // Library targets stacked one way (docs/architecture.md): each imports only those
        // below it, so the compiler refuses an upward arrow. Cross-target internals are
        // `package`, not `public`.
        .target(
            name: "GalleyCore",
            dependencies: ["CLinux", "CSHA256", .product(name: "Crypto", package: "swift-crypto")]),
        .target(
            name: "GalleyFormats",
            dependencies: [
                "GalleyCore", "CArchive", "CCmark", "CLibXML2", "CVips", "CZlib", "CDeflate",
                .product(name: "Yams", package: "Yams"),
            ]),
        .target(
            name: "GalleyKit",
            dependencies: [
                "GalleyCore", "GalleyFormats",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Mustache", package: "swift-mustache"),
            ]),
        // The store's seam: the IssueStore protocol, its records, StoreLocation, the import gate
        // and pass every backend shares, store copy. No database client: the backends below
        // implement the protocol in targets of their own, and serve and sync see only this one.
        .target(
            name: "GalleyStore",
            dependencies: ["GalleyCore", "GalleyFormats", "GalleyKit"]),
        // The folder store: SQLite through GRDB.
        .target(
            name: "GalleyStoreSQLite",
            dependencies: [
                "GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the rows an import binds by position (StoreRows.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        // The shared store: PostgreSQL (postgres-nio), its blobs in a folder or on S3-compatible
        // object storage (GalleyS3).
        .target(
            name: "GalleyStorePostgres",
            dependencies: [
                "GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore", "GalleyS3",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // An S3 client: SigV4 over swift-crypto's HMAC, requests through AsyncHTTPClient; for
        // the shared store's blobs and `galley publish` to a bucket.
        .target(
            name: "GalleyS3",
            dependencies: [
                "GalleyCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        // The one place a location is opened with the backend it names (StoreBackends).
        .target(
            name: "GalleyStoreBackends",
            dependencies: ["GalleyCore", "GalleyStore", "GalleyStoreSQLite", "GalleyStorePostgres"]),
        .target(
            name: "GalleyServe",
            dependencies: [
                "GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore", "GalleySigning",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // The early answers (Sources/GalleyServe/Revalidation.swift) read HTTP/1's request heads.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // docs/openapi.yaml (a link to it), compiled in so that /openapi.yaml needs no file.
            resources: [.embedInCode("Resources/openapi.yaml")]),
        // `galley publish`: the store as static files, in a folder or a bucket (GalleyS3), with
        // serve's answers as their content.
        .target(
            name: "GalleyPublish",
            dependencies: ["GalleyCore", "GalleyFormats", "GalleyStore", "GalleySigning", "GalleyServe", "GalleyS3"]),
        .executableTarget(
            name: "galley",
            dependencies: [
                "GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore", "GalleyStoreBackends", "GalleyServe", "GalleySync",
                "GalleySigning", "GalleyPublish",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // `galley sync`: a feed followed into the store over HTTP (AsyncHTTPClient).
        .target(
            name: "GalleySync",
            dependencies: [
                "GalleyCore", "GalleyFormats", "GalleyStore", "GalleySigning",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]),
        // Scratch folders for every test target: one per test process, removed when it ends.
        .target(name: "GalleyTestSupport", path: "Tests/GalleyTestSupport"),
        // Signed feeds: Ed25519 through swift-crypto, for serve (signs) and sync (verifies).
        .target(
            name: "GalleySigning",
            dependencies: ["GalleyCore", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "GalleyCoreTests",
            dependencies: ["GalleyCore", "GalleyTestSupport"]),
        .testTarget(
            name: "GalleyFormatsTests",
            dependencies: ["GalleyCore", "GalleyFormats", "GalleyTestSupport"]),
        .testTarget(
            name: "GalleyKitTests",
            dependencies: ["GalleyCore", "GalleyFormats", "GalleyKit", "GalleyTestSupport"]),
        .testTarget(
            name: "GalleyStoreTests",
            dependencies: [
                "GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore", "GalleyStoreSQLite", "GalleyStorePostgres",
                "GalleyStoreBackends", "GalleyS3", "GalleyTestSupport",
            ]),
        .testTarget(
            name: "GalleyStoreSQLiteTests",
            dependencies: ["GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore", "GalleyStoreSQLite", "GalleyTestSupport"]),
        .testTarget(
            name: "GalleyStorePostgresTests",
            dependencies: ["GalleyCore", "GalleyStore", "GalleyStorePostgres", "GalleyS3", "GalleyTestSupport"]),
        .testTarget(
            name: "GalleyS3Tests",
            dependencies: ["GalleyCore", "GalleyS3", "GalleyTestSupport"]),
        .testTarget(
            name: "GalleyPublishTests",
            dependencies: ["GalleyCore", "GalleyStore", "GalleyStoreSQLite", "GalleyS3", "GalleyPublish", "GalleyTestSupport"]),
        .testTarget(
            name: "GalleySigningTests",
            dependencies: ["GalleyCore", "GalleySigning"]),
        .testTarget(
            name: "GalleySyncTests",
            dependencies: ["GalleyCore", "GalleyFormats", "GalleyStore", "GalleySync", "GalleyTestSupport"]),
        .testTarget(
            name: "GalleyServeTests",
            dependencies: [
                "GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore", "GalleyStoreSQLite", "GalleyServe", "GalleyTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ]),
        .testTarget(
            name: "GalleyEndToEndTests",
            dependencies: ["GalleyCore", "GalleyFormats", "GalleyKit", "GalleyStore", "GalleyStoreSQLite", "GalleyTestSupport", "galley"]),
    ]
)
