// swift-tools-version: 6.1
// Logbook: five small services over ZeroMQ, each with its own SQLite file, and the
// `logbook` gateway CLI. Layout: Shared/ (libraries every service uses), Services/ (one
// folder per service: a library with the logic and a thin executable), Tests/.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    // A release build reaches a generic type's metadata through its accessor, with the
    // conformances it needs passed in, instead of by mangled name, where the runtime checks
    // those conformances by scanning every conformance record of the executable (8,556 in
    // `logbook`, about 50 µs a scan), once per type and process. Of the 62 scans a one-shot
    // `expense list` made, 12 came this way from our modules (`KeyedDecodingContainer` of
    // each decoded type's `CodingKeys`, the timer commands' `TimerCommand<Action>`);
    // docs/performance.md, "Conformance scans, a later round".
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"], .when(configuration: .release)),
]

/// How release executables are linked: with lld and packed relative relocations (DT_RELR,
/// glibc 2.36+) instead of gold's 24-byte RELA entry per pointer, and without exporting
/// every symbol. A static executable has about 90,000 pointers to fix at start (the RELA
/// table alone was 2 MiB of every process's memory) and exported 15,600 symbols, whose
/// table and hash the dynamic loader walks for each symbol a shared library looks up; lld
/// also keeps read-only data out of the code segment the kernel maps ahead. Idle RSS of
/// auth 31.4 -> 25.6 MiB (docs/performance.md, "Memory, CLI start and CPU per write"). The functions that run at
/// start-up, in a typical session and idle come first and together (deploy/link-order.txt,
/// written by deploy/link-order.sh): the kernel maps 16 pages around each code page touched,
/// so the same functions scattered through the code kept 4 MiB more of every service
/// resident. Debug builds (the tests) keep the default linker.
let executableLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-Xclang-linker", "-fuse-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
            "-Xlinker", "--no-export-dynamic",
            "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/deploy/link-order.txt",
            // a listed function an executable does not have is skipped, not an error
            "-Xlinker", "--no-warn-symbol-ordering",
        ],
        .when(configuration: .release))
]

/// A service: `Services/<folder>/<library>` holds its logic, `Services/<folder>/<executable>`
/// its main, `Tests/<tests>` its tests. Every service library imports the runtime, the wire
/// types, storage, GRDB, logging and service lifecycle; `dependencies` adds its own.
struct ServiceTargets {
    static let common: [Target.Dependency] = [
        "Runtime", "Contracts", "Wire", "Storage", .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    ]

    var folder: String
    var library: String
    var executable: String
    var dependencies: [Target.Dependency] = []
    var testDependencies: [Target.Dependency] = []

    var tests: String { (library.hasSuffix("Service") ? String(library.dropLast(7)) : library) + "Tests" }

    var targets: [Target] {
        [
            .target(
                name: library, dependencies: Self.common + dependencies, path: "Services/\(folder)/\(library)",
                swiftSettings: swiftSettings),
            .executableTarget(
                name: executable, dependencies: [.target(name: library)], path: "Services/\(folder)/\(executable)",
                swiftSettings: swiftSettings, linkerSettings: executableLinkerSettings),
            .testTarget(
                name: tests, dependencies: [.target(name: library)] + testDependencies, path: "Tests/\(tests)",
                swiftSettings: swiftSettings),
        ]
    }
}

let services: [ServiceTargets] = [
    ServiceTargets(folder: "Auth", library: "AuthService", executable: "auth", dependencies: ["CSodium"]),
    ServiceTargets(
        folder: "Records", library: "RecordsService", executable: "records", dependencies: ["Imaging"],
        testDependencies: ["Imaging", "ImagingFixtures"]),
    ServiceTargets(
        folder: "WeatherFetcher", library: "WeatherFetcherService", executable: "weather-fetcher",
        dependencies: ["Outbound"], testDependencies: ["TestSupport", "Outbound"]),
    ServiceTargets(
        folder: "Store", library: "StoreService", executable: "store", dependencies: ["Outbound"],
        testDependencies: ["TestSupport"]),
    ServiceTargets(
        folder: "Analytics", library: "AnalyticsService", executable: "analytics",
        // the replay binds and steps its hot statements through SQLite's C API (Statements.swift)
        dependencies: [.product(name: "GRDBSQLite", package: "GRDB.swift")], testDependencies: ["TestSupport"]),
]

let package = Package(
    name: "Logbook",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "logbook", targets: ["logbook"]),
        .executable(name: "logbook-bench", targets: ["logbook-bench"]),
        .executable(name: "logbook-http", targets: ["logbook-http"]),
    ] + services.map { .executable(name: $0.executable, targets: [$0.executable]) },
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The HTTP edge (Services/HTTPGateway). No swift-configuration: settings come from
        // StackConfiguration like every other part's.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // TLS in the edge (HummingbirdTLS): swift-nio-ssl, which builds BoringSSL from source.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Outbound HTTP to the weather, tide and quote APIs.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // MARK: C libraries from Debian
        .systemLibrary(
            name: "CZMQ", path: "Shared/CZMQ", pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(
            name: "CSodium", path: "Shared/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        // SQLite's process-wide settings (sqlite3_config is variadic); the library GRDB links.
        .systemLibrary(
            name: "CSQLite", path: "Shared/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CVips", path: "Shared/CVips", pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]),
        // Non-variadic C wrappers: Swift cannot call libvips's NULL-terminated option lists.
        // libvips is opened with dlopen on the first photo, not linked (vips_shim.c says why);
        // CVips (its headers) is for the test fixtures that draw images.
        .target(name: "CVipsShim", path: "Shared/CVipsShim", linkerSettings: [.linkedLibrary("dl")]),

        // MARK: Shared libraries
        .target(name: "ZMQ", dependencies: ["CZMQ"], path: "Shared/ZMQ", swiftSettings: swiftSettings),
        .target(name: "Wire", dependencies: ["CSodium"], path: "Shared/Wire", swiftSettings: swiftSettings),
        // Every method's request and result, every event payload: one definition for the
        // services, the CLI, analytics and any other client.
        .target(name: "Contracts", dependencies: ["Wire"], path: "Shared/Contracts", swiftSettings: swiftSettings),
        .target(
            name: "Storage",
            dependencies: ["Wire", "CSQLite", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Shared/Storage", swiftSettings: swiftSettings),
        .target(
            name: "Runtime",
            dependencies: [
                "ZMQ", "Wire", "Contracts", "Storage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Runtime", swiftSettings: swiftSettings),
        // Outbound HTTP (AsyncHTTPClient on SwiftNIO), only in the parts that call public
        // APIs: weather-fetcher and store (never the CLI).
        .target(
            name: "Outbound",
            dependencies: [
                "Runtime", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Shared/Outbound", swiftSettings: swiftSettings),
        .target(name: "Imaging", dependencies: ["CVipsShim"], path: "Shared/Imaging", swiftSettings: swiftSettings),

        // MARK: The gateway CLI
        // The local stack's supervisor and its files (pids, logs, lock), started and stopped
        // by `logbook stack`; no argument parsing or printing.
        .target(
            name: "StackSupervisor", dependencies: ["Runtime", "Storage", "Wire"], path: "Services/Gateway/StackSupervisor",
            swiftSettings: swiftSettings),
        .target(
            name: "Gateway",
            dependencies: [
                "Runtime", "Contracts", "Storage", "Wire", "StackSupervisor",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // the queue is counted through SQLite's C API before a command (LocalStore.swift)
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Services/Gateway/Gateway", swiftSettings: swiftSettings),
        .executableTarget(
            name: "logbook", dependencies: ["Gateway"], path: "Services/Gateway/logbook",
            swiftSettings: swiftSettings,
            // the CLI's own answer to OpenPGM's protocol lookup (ProtocolLookup.swift)
            linkerSettings: executableLinkerSettings + [
                .unsafeFlags(["-Xlinker", "--export-dynamic-symbol=getprotobyname_r"])
            ]),

        // MARK: The HTTP edge: HTTP/JSON in front of the services (a client of them, like the CLI)
        .target(
            name: "HTTPGateway",
            dependencies: [
                "Runtime", "Contracts", "Wire", "Gateway", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Services/HTTPGateway/HTTPGateway", swiftSettings: swiftSettings),
        .executableTarget(
            name: "logbook-http", dependencies: ["HTTPGateway"], path: "Services/HTTPGateway/logbook-http",
            swiftSettings: swiftSettings, linkerSettings: executableLinkerSettings),
        .testTarget(
            name: "HTTPGatewayTests", dependencies: ["HTTPGateway", "Wire", "Runtime"], path: "Tests/HTTPGatewayTests",
            swiftSettings: swiftSettings),

        // MARK: Benchmarks (a separate command, never a timed test)
        .executableTarget(
            name: "logbook-bench",
            dependencies: [
                "Runtime", "ZMQ", "AuthService", "RecordsService", "AnalyticsService", "Imaging", "ImagingFixtures", "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/Benchmarks", swiftSettings: swiftSettings, linkerSettings: executableLinkerSettings),

        // MARK: Fuzzing (deploy/fuzz.sh: libFuzzer with -sanitize=fuzzer; a normal build replays inputs)
        .executableTarget(
            name: "logbook-fuzz",
            dependencies: [
                "Runtime", "Storage", "Wire", "AuthService", "RecordsService", "WeatherFetcherService", "AnalyticsService",
                "StoreService", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Fuzz", exclude: ["corpus", "crashes"], swiftSettings: swiftSettings),

        // MARK: Tests
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: swiftSettings),
        // Generated images (Imaging.testImage, flatImage) for tests and benchmarks only.
        .target(
            name: "CImagingFixtures", dependencies: ["CVips", "CVipsShim"], path: "Tests/ImagingFixtures/CImagingFixtures"),
        .target(
            name: "ImagingFixtures", dependencies: ["Imaging", "CImagingFixtures", "CVipsShim"],
            path: "Tests/ImagingFixtures/ImagingFixtures", swiftSettings: swiftSettings),
        .testTarget(
            name: "RuntimeTests", dependencies: ["Runtime", "ZMQ", "TestSupport", "Outbound"], path: "Tests/RuntimeTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "GatewayTests", dependencies: ["Gateway", "Contracts", "TestSupport"], path: "Tests/GatewayTests",
            swiftSettings: swiftSettings),
        // Starts the real executables: depending on them makes `swift test` build them.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "Runtime", "Contracts", "Wire", "ZMQ", "TestSupport", "Imaging", "ImagingFixtures", "logbook",
                "logbook-http", "HTTPGateway",
                .product(name: "GRDB", package: "GRDB.swift"),
            ] + services.map { .target(name: $0.executable) },
            path: "Tests/EndToEndTests", swiftSettings: swiftSettings),
    ] + services.flatMap(\.targets)
)
