/// Which file names in a watched desktop folder are a change worth a re-read: desktop
/// entries and the association files the reader reads (`DesktopLayout.Folder.plannedLists`).
/// Folders are always a change (a subfolder of `applications` holds entries). Everything else
/// is another program's: `$XDG_CONFIG_HOME` is where every program keeps its settings, and a
/// re-read for each of their writes would be a re-read for nothing.
enum DesktopWatch {
    static func isRelevant(_ name: String) -> Bool {
        name.hasSuffix(".desktop") || name == "mimeapps.list" || name.hasSuffix("-mimeapps.list")
            || name == "defaults.list" || name == "mimeinfo.cache"
    }
}
