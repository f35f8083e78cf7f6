#if canImport(Glibc)
import Glibc
#endif
import LaunchServicesCore

/// Proves that a process checking in by hand is the app it names, before anything of that
/// app is trusted. It runs off the event loop: it reads files a peer chose.
///
/// The order matters: first the process's own executable (`/proc/PID/exe`, which the
/// kernel keeps and the peer cannot fake) must lie inside the named bundle folder, so a
/// process cannot make the daemon read an Info.plist that is not its own; only then is the
/// Info.plist read (bounded by `BundleLoader`), and its `CFBundleExecutable` must be that
/// very file — a regular file inside the bundle, not a symbolic link out of it.
enum CheckInVerification {
    struct Refusal: Error {
        var code: OpenErrorCode
        var message: String
    }

    static func verify(pid: Int32, bundlePath: String) throws(Refusal) -> AppBundle {
        guard bundlePath.hasPrefix("/") else {
            throw Refusal(code: .invalidRequest, message: "the bundle path '\(bundlePath)' is not absolute")
        }
        guard let running = BundlePath.resolve("/proc/\(pid)/exe") else {
            throw Refusal(code: .notPermitted, message: "the executable of process \(pid) cannot be read")
        }
        guard let folder = BundlePath.resolve(bundlePath) else {
            throw Refusal(code: .invalidRequest, message: "the bundle folder \(bundlePath) does not exist")
        }
        guard running.hasPrefix(folder + "/") else {
            throw Refusal(code: .notPermitted, message: "process \(pid) runs \(running), which is not inside \(folder): it cannot check in as that bundle's app")
        }
        let bundle: AppBundle
        do {
            bundle = try BundleLoader.load(bundleAt: folder)
        } catch {
            throw Refusal(code: .invalidRequest, message: "cannot check in: \(error)")
        }
        let expected = BundlePath.resolve(bundle.executablePath)
        guard expected == running else {
            throw Refusal(code: .notPermitted, message: "process \(pid) runs \(running), not \(bundle.executablePath) (which resolves to \(expected ?? "nothing")): it cannot check in as \(bundle.id)")
        }
        return bundle
    }
}
