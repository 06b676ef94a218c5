// swift-tools-version: 6.1
// Logbook: five small services over ZeroMQ, each with its own SQLite file, and the
// `logbook` gateway CLI. Layout: Shared/ (libraries every service uses), Services/ (one
// folder per service: a library with the logic and a thin executable), Tests/.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Logbook",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "logbook", targets: ["logbook"]),
        .executable(name: "auth", targets: ["auth"]),
        .executable(name: "analytics", targets: ["analytics"]),
        .executable(name: "logbook-bench", targets: ["logbook-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // MARK: C libraries from Debian
        .systemLibrary(
            name: "CZMQ", path: "Shared/CZMQ", pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(
            name: "CSodium", path: "Shared/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),

        // MARK: Shared libraries
        .target(name: "ZMQ", dependencies: ["CZMQ"], path: "Shared/ZMQ", swiftSettings: swiftSettings),
        .target(name: "Wire", dependencies: ["CSodium"], path: "Shared/Wire", swiftSettings: swiftSettings),
        .target(
            name: "Storage",
            dependencies: ["Wire", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Shared/Storage", swiftSettings: swiftSettings),
        .target(
            name: "Runtime",
            dependencies: [
                "ZMQ", "Wire", "Storage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Runtime", swiftSettings: swiftSettings),

        // MARK: Services
        .target(
            name: "AuthService", dependencies: ["Runtime", "CSodium"],
            path: "Services/Auth/AuthService", swiftSettings: swiftSettings),
        .executableTarget(
            name: "auth", dependencies: ["AuthService"], path: "Services/Auth/auth",
            swiftSettings: swiftSettings),
        .target(
            name: "AnalyticsService", dependencies: ["Runtime"],
            path: "Services/Analytics/AnalyticsService", swiftSettings: swiftSettings),
        .executableTarget(
            name: "analytics", dependencies: ["AnalyticsService"], path: "Services/Analytics/analytics",
            swiftSettings: swiftSettings),
        .target(
            name: "Gateway",
            dependencies: ["Runtime", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Services/Gateway/Gateway", swiftSettings: swiftSettings),
        .executableTarget(
            name: "logbook", dependencies: ["Gateway"], path: "Services/Gateway/logbook",
            swiftSettings: swiftSettings),

        // MARK: Benchmarks (a separate command, never a timed test)
        .executableTarget(
            name: "logbook-bench",
            dependencies: [
                "Runtime", "ZMQ", "AnalyticsService", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/Benchmarks", swiftSettings: swiftSettings),

        // MARK: Tests
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: swiftSettings),
        .testTarget(
            name: "RuntimeTests", dependencies: ["Runtime", "ZMQ", "TestSupport"], path: "Tests/RuntimeTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AuthTests", dependencies: ["AuthService"], path: "Tests/AuthTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AnalyticsTests", dependencies: ["AnalyticsService"], path: "Tests/AnalyticsTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "EndToEndTests", dependencies: ["Runtime", "logbook", "auth", "analytics"],
            path: "Tests/EndToEndTests", swiftSettings: swiftSettings),
    ]
)
