// swift-tools-version: 6.1
import PackageDescription

/// App executables are what a cold open pays to start, so they keep Foundation out and link
/// the Swift runtime statically; a release app is a fully static executable (no dynamic
/// loader: about 105 page faults at start instead of 236, and half the CPU time). Debug
/// builds link only the Swift runtime statically, as the test runner links the same modules.
let staticApp: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib"], .when(configuration: .debug)),
    .unsafeFlags(["-static-executable"], .when(configuration: .release)),
]

let package = Package(
    name: "swift-launch-services",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "launchservicesd", targets: ["launchservicesd"]),
        .executable(name: "lsopen", targets: ["lsopen"]),
        .executable(name: "lsctl", targets: ["lsctl"]),
        .library(name: "LaunchServicesApp", targets: ["LaunchServicesApp"]),
        .library(name: "LaunchServicesClient", targets: ["LaunchServicesClient"]),
        .library(name: "LaunchServicesCore", targets: ["LaunchServicesCore"]),
        // For tests: drive an ApplicationDelegate in-process, run the daemon in-process on
        // embedded channels, and start real daemons and apps as child processes.
        .library(name: "LaunchServicesTesting", targets: ["LaunchServicesTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // Pure core: no I/O, no Foundation. Scheme and URL rules, the Info.plist model,
        // the registry, the launch state machine, property-list values.
        // OrderedCollections: the registry's compact scheme table (`ClaimTable`).
        .target(name: "LaunchServicesCore", dependencies: [.product(name: "OrderedCollections", package: "swift-collections")]),
        // The wire protocol: frames, messages, their byte encoding. No I/O, no Foundation.
        .target(name: "LaunchServicesProtocol", dependencies: ["LaunchServicesCore"]),
        // Small C helpers Glibc does not expose to Swift (pidfd, closefrom, ucred).
        .target(name: "CLaunchServicesShim"),
        // Blocking POSIX client with deadlines: used by lsopen, lsctl and the app runtime.
        .target(
            name: "LaunchServicesClient",
            dependencies: ["LaunchServicesProtocol", "LaunchServicesCore", "CLaunchServicesShim"]
        ),
        // What an app links: Application + ApplicationDelegate.
        .target(
            name: "LaunchServicesApp",
            dependencies: ["LaunchServicesClient", "LaunchServicesProtocol", "LaunchServicesCore", "CLaunchServicesShim"]
        ),
        // libsystemd (sd_notify, sd_listen_fds, sd_journal_sendv) and a small Swift face on it.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(
            name: "LaunchServicesSystemd",
            dependencies: ["CSystemd", .product(name: "Logging", package: "swift-log")]
        ),
        // libsodium's Argon2id, for pasteboard password verifiers. Only the daemon links it.
        // The daemon's objects on the session bus: sd-bus vtables and replies, which are C
        // macros and variadic calls. Only the daemon links it (and with it libsystemd).
        .target(name: "CSessionBus", dependencies: ["CSystemd"]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // The daemon as a library: the executable and lsbench use it, and its unit tests
        // (LaunchServicesDaemonTests) drive its parts directly; the integration tests run the
        // real executable instead.
        .target(
            name: "LaunchServicesDaemon",
            dependencies: [
                "LaunchServicesCore", "LaunchServicesProtocol", "CLaunchServicesShim", "LaunchServicesSystemd", "CSystemd", "CSessionBus", "CSodium",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the read-only check of a database before GRDB opens it
                // (a VFS without locks, which GRDB's open cannot choose).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "launchservicesd",
            dependencies: [
                "LaunchServicesDaemon", "LaunchServicesProtocol", "LaunchServicesSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "lsopen",
            dependencies: [
                "LaunchServicesClient", "LaunchServicesCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Every desktop link runs lsopen, so its start is the product's hot path: a release
            // lsopen is a static executable (no dynamic loader, no symbol lookups or PLT
            // relocations: 140 page faults at start instead of 340). It calls no glibc function
            // that needs shared NSS modules at run time. FoundationEssentials (through
            // ArgumentParser and the chooser's JSONDecoder) needs three more static libraries,
            // named here so a plain `swift build -c release` links it too, not only the
            // scripts' `--static-swift-stdlib` build.
            linkerSettings: [
                .unsafeFlags(["-static-executable"], .when(configuration: .release)),
                .linkedLibrary("_FoundationCollections", .when(configuration: .release)),
                .linkedLibrary("_FoundationCShims", .when(configuration: .release)),
                .linkedLibrary("swiftSynchronization", .when(configuration: .release)),
            ]
        ),
        .executableTarget(
            name: "lsctl",
            dependencies: [
                "LaunchServicesClient", "LaunchServicesCore", "LaunchServicesProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Benchmarks of the open path against same-run baselines (scripts/bench).
        .executableTarget(
            name: "lsbench",
            dependencies: [
                "LaunchServicesClient", "LaunchServicesCore", "LaunchServicesProtocol", "CLaunchServicesShim", "LaunchServicesDaemon",
                // ChildProcess, DaemonProcess, TemporaryFolder, BundleFiles: the same process helpers as the tests.
                "LaunchServicesTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Demo apps (README) and the configurable test app.
        .executableTarget(name: "xyz", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/xyz", linkerSettings: staticApp),
        .executableTarget(name: "todolist", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/todolist", linkerSettings: staticApp),
        .executableTarget(name: "lstestapp", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/lstestapp", linkerSettings: staticApp),
        .executableTarget(name: "wordrev", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/wordrev", linkerSettings: staticApp),
        .executableTarget(name: "schemedemo", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/schemedemo", linkerSettings: staticApp),
        .executableTarget(name: "liteapp", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/liteapp", linkerSettings: staticApp),
        .executableTarget(name: "fullapp", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/fullapp", linkerSettings: staticApp),
        .executableTarget(name: "tweeter", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/tweeter", linkerSettings: staticApp),
        .executableTarget(name: "x-sadun-services", dependencies: ["LaunchServicesApp"], path: "Sources/Apps/x-sadun-services", linkerSettings: staticApp),

        // The testing kit (see the product above).
        .target(
            name: "LaunchServicesTesting",
            dependencies: [
                "LaunchServicesApp", "LaunchServicesDaemon", "LaunchServicesCore", "LaunchServicesProtocol", "LaunchServicesClient", "CLaunchServicesShim",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        .testTarget(name: "LaunchServicesCoreTests", dependencies: ["LaunchServicesCore"]),
        // lsopen's quick reading of plain command lines against swift-argument-parser's.
        .testTarget(name: "LSOpenTests", dependencies: ["lsopen", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .testTarget(name: "LaunchServicesProtocolTests", dependencies: ["LaunchServicesProtocol", "LaunchServicesCore"]),
        .testTarget(
            name: "LaunchServicesDaemonTests",
            dependencies: [
                "LaunchServicesDaemon", "LaunchServicesCore", "LaunchServicesProtocol", "LaunchServicesSystemd",
                "LaunchServicesTesting", "LaunchServicesClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "LaunchServicesTestingTests",
            dependencies: ["LaunchServicesTesting", "LaunchServicesApp", "LaunchServicesCore", "LaunchServicesProtocol"]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "LaunchServicesClient", "LaunchServicesCore", "LaunchServicesProtocol", "CLaunchServicesShim", "LaunchServicesTesting",
                // To write a pasteboard database as an earlier version did (the migration test).
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
