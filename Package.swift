// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "tabbard",
    products: [
        .executable(name: "tabbard", targets: ["tabbard"]),
        .executable(name: "tabbarctl", targets: ["tabbarctl"]),
        .library(name: "TabBarClient", targets: ["TabBarClient"]),
        .library(name: "TabBarCore", targets: ["TabBarCore"]),
        // A front end's test helper: the real daemon on virtual time, its audio captured (docs/HARNESS.md).
        .library(name: "TabBarTesting", targets: ["TabBarTesting"]),
    ],
    targets: [
        // System libraries from Debian (apt install the -dev packages; `make deps` does it).
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        // GIO's GSettings: the desktop's sound settings (DesktopSettings.swift).
        .systemLibrary(name: "CGIO", path: "Sources/CGIO", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),

        // accept4, which Glibc's module hides without _GNU_SOURCE (a header, no library).
        .systemLibrary(name: "CTabBarSystem", path: "Sources/CTabBarSystem"),

        // Pure model: no Glibc, no I/O, no clocks.
        .target(name: "TabBarCore", linkerSettings: [.linkedLibrary("m")]),
        // Every system call goes through here: EINTR retried once, EAGAIN a value, errors typed,
        // the one monotonic clock (README, "System calls").
        .target(name: "TabBarSystem", dependencies: ["CTabBarSystem"]),
        .target(name: "TabBarAudio", dependencies: ["TabBarCore", "TabBarSystem", "CALSA", "CSndFile", "CSoxr", "CSystemd"]),
        // Release builds of the state loop skip the run-time exclusivity checks (one thread owns
        // every object in it; debug builds, which the tests run, keep them): docs/PERFORMANCE.md.
        .target(name: "TabBarServer", dependencies: ["TabBarCore", "TabBarSystem", "TabBarAudio", "CSystemd", "CGIO"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(name: "TabBarClient", dependencies: ["TabBarCore", "TabBarSystem"]),
        .target(name: "TabBarTesting", dependencies: ["TabBarClient", "TabBarCore", "TabBarSystem"]),
        .executableTarget(name: "tabbard", dependencies: ["TabBarServer"]),
        .executableTarget(name: "tabbarctl", dependencies: ["TabBarClient", "TabBarSystem"]),
        // The benchmark (make bench). Its C helpers (the floor server, the LD_PRELOAD click shim,
        // the feedbackd D-Bus client)
        // are built by the Makefile with cc, not by SwiftPM.
        .systemLibrary(name: "CBench", path: "bench/CBench"),
        .executableTarget(name: "tabbard-bench", dependencies: ["TabBarClient", "TabBarCore", "CBench"], path: "bench",
                          exclude: ["floor", "preload", "fbdclient", "canberra", "sink", "CBench", "ir", "sounds"]),

        // The protocol fuzzer: invariants in a library (also run by FuzzTests), the libFuzzer
        // entry point in an executable (`make fuzz` builds it with --sanitize=fuzzer).
        .target(name: "FuzzSupport", dependencies: ["TabBarCore"], path: "Fuzz/FuzzSupport"),
        .executableTarget(name: "FuzzProtocol", dependencies: ["FuzzSupport"], path: "Fuzz/FuzzProtocol"),

        .testTarget(name: "TabBarCoreTests", dependencies: ["TabBarCore", "TabBarTesting"]),
        .testTarget(name: "TabBarClientTests", dependencies: ["TabBarClient", "tabbarctl"]),
        .testTarget(name: "TabBarAudioTests", dependencies: ["TabBarAudio"]),
        .testTarget(name: "TabBarServerTests", dependencies: ["TabBarServer", "TabBarSystem"]),
        .testTarget(name: "FuzzTests", dependencies: ["FuzzSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TabBarClient", "TabBarTesting"]),
    ]
)
