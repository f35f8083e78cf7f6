import Foundation
import LaunchServicesCore
import Logging

/// Reads the XDG desktop layout from disk into a `DesktopLayout` — the edge; the choice is
/// `DesktopHandlers`' (Core). Blocking file reads: run it on a worker, never on the loop.
///
/// It reads what GLib reads to choose a handler: every folder's association files
/// (`$desktop-mimeapps.list`, `mimeapps.list`, and in data folders `defaults.list` and
/// `mimeinfo.cache`), every `*.desktop` below each `applications` folder (subfolders give IDs
/// with `-`), and for each entry whether its programs are installed (`ProgramFinder`). Only
/// the keys the choice and the launch need are kept. Everything is bounded
/// (`DesktopReadLimits`); a file that cannot be read, is too large or is malformed is kept as
/// such (its ID still hides later folders' files, as in GLib), logged once, never fatal.
public struct DesktopLayoutReader: Sendable {
    public var limits: DesktopReadLimits

    public init(limits: DesktopReadLimits = DesktopReadLimits()) {
        self.limits = limits
    }

    /// What one read found: the layout, every folder it read (the configuration folders,
    /// which hold the `mimeapps.list` files, the `applications` folders and their
    /// subfolders, whether or not they exist), to watch for changes, and what could not be
    /// read now (`DesktopLayout.carryingOver`).
    public struct Result: Sendable {
        public var layout: DesktopLayout
        public var foldersRead: [String]
        public var unreadable: [DesktopUnreadable] = []
    }

    /// Reads the layout `environment` describes (`XDG_*`, `XDG_CURRENT_DESKTOP`, `PATH`,
    /// `HOME`; `home` when `HOME` is unset). Notes (files skipped and why) are logged at
    /// `notice` and kept in the layout.
    public func read(environment: [String: String], home fallbackHome: String, logger: Logger? = nil) -> Result {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? fallbackHome
        let directories = XDGBaseDirectories(environment: environment, home: home)
        var reader = BoundedFileReader()
        var programs = ProgramFinder(path: environment["PATH"])
        var notes: [String] = []
        var foldersRead: [String] = []
        var unreadable: [DesktopUnreadable] = []
        var budget = limits.maximumEntries
        var folders = DesktopLayout.folders(of: directories)
        for index in folders.indices {
            var folder = folders[index]
            foldersRead.append(folder.path)
            // A folder that is there but cannot be opened: named once, as a folder, rather
            // than once for each file it might hold.
            if let code = Self.openFailure(folder.path), !ReadFailure.isAbsence(code) {
                notes.append("\(folder.path) could not be read: \(ReadFailure.text(code))")
                unreadable.append(DesktopUnreadable(kind: .folder, path: folder.path, reason: ReadFailure.text(code)))
                continue
            }
            for (path, kind) in folder.plannedLists(desktops: directories.currentDesktops) {
                if let list = readList(path, kind: kind, reader: &reader, unreadable: &unreadable) { folder.lists.append(list) }
            }
            if folder.kind == .data {
                var scan = FolderScan(root: folder.path, limits: limits, budget: budget)
                scan.run(reader: &reader)
                budget = scan.budget
                foldersRead += scan.subfolders
                notes += scan.notes
                unreadable += scan.unreadable
                folder.entries.reserveCapacity(scan.files.count)
                // In listing order: of two files with one ID the later is the entry, as in GLib.
                for found in scan.files {
                    let id = DesktopFileID.id(forRelativePath: found.relativePath)
                    let file = DesktopLayout.EntryFile(id: id, path: XDGBaseDirectories.join(folder.path, found.relativePath), content: found.content)
                    if let earlier = folder.entries.updateValue(file, forKey: id) {
                        folder.sameIDFiles.append(earlier)
                        notes.append("\(earlier.path) and \(file.path) have the same ID \(id); the second is used, as GLib does (the last the folder listing returns)")
                    }
                }
                for file in Array(folder.entries.values) + folder.sameIDFiles {
                    if case .success(let entry) = file.content {
                        for program in DesktopEntryCheck.programsToFind(entry) { _ = programs.find(program) }
                    }
                }
            }
            folders[index] = folder
        }
        for folder in folders {
            for list in folder.lists {
                if case .failure(let error) = list.content { notes.append("\(list.path) ignored: \(error)") }
            }
            let failed = folder.entries.values.compactMap { file -> (String, DesktopEntryError)? in
                if case .failure(let error) = file.content { return (file.path, error) }
                return nil
            }
            for (path, error) in failed.sorted(by: { $0.0 < $1.0 }) { notes.append("\(path) is no desktop entry: \(error)") }
        }
        if let logger {
            for note in notes { logger.notice("desktop entries: \(TerminalText.escapingControls(note))") }
        }
        let layout = DesktopLayout(home: home, currentDesktops: directories.currentDesktops, folders: folders,
                                   programs: programs.lookups, searchPath: programs.searchPath, notes: notes)
        return Result(layout: layout, foldersRead: foldersRead, unreadable: unreadable)
    }

    /// The `errno` of opening `folder`, or nil when it opens.
    static func openFailure(_ folder: String) -> Int32? {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        close(fd)
        return nil
    }

    /// One association file, or nil when it is not there; one that could not be read now is
    /// also noted in `unreadable`.
    func readList(_ path: String, kind: DesktopLayout.AssociationList.Kind, reader: inout BoundedFileReader,
                  unreadable: inout [DesktopUnreadable]) -> DesktopLayout.AssociationList? {
        let limit = kind == .mimeinfoCache ? limits.maximumCacheBytes : limits.maximumListBytes
        let maxLine = limits.maximumLineBytes
        let read = reader.read(path, limit: limit) { bytes -> Swift.Result<MimeAppsList, AssociationListError> in
            do throws(KeyFileError) {
                return .success(try MimeAppsList(parsing: bytes, maxLineBytes: maxLine))
            } catch {
                return .failure(.malformed(error))
            }
        }
        switch read {
        case .success(let content): return DesktopLayout.AssociationList(kind: kind, path: path, content: content)
        case .failure(.absent): return nil
        case .failure(let failure):
            if case .system(let code) = failure, !ReadFailure.isAbsence(code) {
                unreadable.append(DesktopUnreadable(kind: .list, path: path, reason: ReadFailure.text(code)))
            }
            return DesktopLayout.AssociationList(kind: kind, path: path, content: .failure(.unreadable(failure.description)))
        }
    }
}
