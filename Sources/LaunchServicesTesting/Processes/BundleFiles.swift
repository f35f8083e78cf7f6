import Foundation

/// `BundleFiles` owns writing app bundles on disk for tests and benchmarks that run a real
/// daemon: a generated `Info.plist` (identifier, executable, URL schemes, queried schemes)
/// and the app's built executable placed inside the bundle as a real file.
public enum BundleFiles {
    /// An `Info.plist` declaring `id`, `executable` and the URL `schemes` it handles.
    public static func infoPlist(id: String, executable: String, schemes: [String], queriesSchemes: [String] = []) -> String {
        let schemeItems = schemes.map { "<string>\($0)</string>" }.joined()
        let queries = queriesSchemes.isEmpty ? "" : "<key>LSApplicationQueriesSchemes</key><array>\(queriesSchemes.map { "<string>\($0)</string>" }.joined())</array>"
        return """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
        <key>CFBundleIdentifier</key><string>\(id)</string>
        <key>CFBundleExecutable</key><string>\(executable)</string>
        <key>CFBundleURLTypes</key><array><dict><key>CFBundleURLName</key><string>\(id)</string>
        <key>CFBundleURLSchemes</key><array>\(schemeItems)</array></dict></array>
        \(queries)
        </dict></plist>
        """
    }

    /// Puts a built executable into a bundle as a real file: a hard link (cheap), or a copy
    /// across file systems. A symbolic link would point out of the bundle, which the daemon
    /// refuses (an app's executable must live inside its bundle).
    public static func placeExecutable(_ source: String, at path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        if link(source, path) != 0 {
            try FileManager.default.copyItem(atPath: source, toPath: path)
        }
    }

    /// Writes the bundle folder `bundle` with `infoPlist`, and, when given, the executable
    /// `executable` placed inside it under its own file name.
    public static func write(bundle: String, infoPlist: String, executable: String? = nil) throws {
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try infoPlist.write(toFile: bundle + "/Info.plist", atomically: true, encoding: .utf8)
        if let executable {
            try placeExecutable(executable, at: bundle + "/" + (executable as NSString).lastPathComponent)
        }
    }
}
