import LaunchServicesApp

/// Recipe 16-6: handles `xyz:` URLs and logs the URL's path, the source application and
/// the annotation, as `application:openURL:sourceApplication:annotation:` does there.
final class XYZDelegate: ApplicationDelegate {
    func didFinishLaunching(_ application: Application, options: LaunchOptions) -> Bool {
        StandardStreams.output("[xyz] launched by \(options.sourceApplication) for \(options.urlString)\n")
        return true
    }

    func open(_ application: Application, url: ParsedURL, sourceApplication: String?, annotation: PropertyListValue?) -> Bool {
        StandardStreams.output("""
            [xyz] URL: \(url)
            [xyz] title (url.path): \(url.path.isEmpty ? "(empty)" : url.path)
            [xyz] Opened from : \(sourceApplication ?? "(unknown)")
            [xyz] Annotation : \(annotation?.description ?? "(null)")

            """)
        return true
    }
}

Application.main(delegate: XYZDelegate())
