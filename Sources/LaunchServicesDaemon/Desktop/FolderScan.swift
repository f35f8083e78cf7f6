import Foundation
import LaunchServicesCore

/// Every `*.desktop` below one `applications` folder, read, in the order GLib meets them: the
/// folder's listing order, a subfolder's files where the listing meets the subfolder (that
/// order decides which of two same-ID files counts). A name ending in `.desktop` is an entry
/// whatever it is (a folder so named is an entry that cannot be read, as in GLib); any other
/// name that is a folder (links followed) is read as a subfolder, to `maximumDepth` levels and
/// never twice on one path (a link loop). Names that are not UTF-8 cannot be IDs here and are
/// skipped with a note.
struct FolderScan {
    struct Found {
        var relativePath: String
        var content: Result<DesktopEntry, DesktopEntryError>
    }

    let root: String
    let limits: DesktopReadLimits
    /// Entries that may still be read, across folders.
    var budget: Int
    private(set) var files: [Found] = []
    private(set) var subfolders: [String] = []
    private(set) var notes: [String] = []
    /// What could not be read now for a reason the system gave (not absence): a folder whose
    /// listing failed, wholly or in part, or an entry file (`DesktopLayout.carryingOver`).
    private(set) var unreadable: [DesktopUnreadable] = []
    private var path: [(device: UInt64, inode: UInt64)] = []
    private var stopped = false

    init(root: String, limits: DesktopReadLimits, budget: Int) {
        self.root = root
        self.limits = limits
        self.budget = budget
    }

    mutating func run(reader: inout BoundedFileReader) {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if !ReadFailure.isAbsence(code) {
                notes.append("\(root) could not be read: \(ReadFailure.text(code))")
                unreadable.append(DesktopUnreadable(kind: .folder, path: root, reason: ReadFailure.text(code)))
            }
            return
        }
        walk(fd, relative: "", depth: 0, reader: &reader)
    }

    /// Reads the folder open at `fd` (closed here), whose path below the root is `relative`.
    private mutating func walk(_ fd: Int32, relative: String, depth: Int, reader: inout BoundedFileReader) {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            failed(relative, errno)
            close(fd)
            return
        }
        let identity = (device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        guard !path.contains(where: { $0 == identity }) else {
            close(fd)
            notes.append("\(folderPath(relative)) is a link back to a folder above it: not read again")
            return
        }
        guard let directory = fdopendir(fd) else {
            failed(relative, errno)
            close(fd)
            return
        }
        path.append(identity)
        defer {
            closedir(directory)
            path.removeLast()
        }
        let folder = dirfd(directory)
        while !stopped {
            errno = 0
            guard let entry = readdir(directory) else {
                let code = errno
                if code != 0 {
                    notes.append("\(folderPath(relative)) could only be read in part: \(ReadFailure.text(code))")
                    unreadable.append(DesktopUnreadable(kind: .folder, path: folderPath(relative), reason: ReadFailure.text(code)))
                }
                return
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(validatingCString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            guard let name else {
                notes.append("\(folderPath(relative)): a file name that is not UTF-8 was skipped")
                continue
            }
            if name == "." || name == ".." { continue }
            if DesktopFileID.isEntryName(name) {
                read(name, in: folder, type: entry.pointee.d_type, relative: relative + name, reader: &reader)
            } else if isFolder(name, in: folder, type: entry.pointee.d_type) {
                guard depth < limits.maximumDepth else {
                    notes.append("\(XDGBaseDirectories.join(root, relative + name)) is more than \(limits.maximumDepth) folders deep: not read")
                    continue
                }
                let sub = openat(folder, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard sub >= 0 else {
                    let code = errno
                    notes.append("\(XDGBaseDirectories.join(root, relative + name)) could not be read: \(ReadFailure.text(code))")
                    if !ReadFailure.isAbsence(code) {
                        unreadable.append(DesktopUnreadable(kind: .folder, path: XDGBaseDirectories.join(root, relative + name), reason: ReadFailure.text(code)))
                    }
                    continue
                }
                subfolders.append(XDGBaseDirectories.join(root, relative + name))
                walk(sub, relative: relative + name + "/", depth: depth + 1, reader: &reader)
            }
        }
    }

    private mutating func read(_ name: String, in folder: Int32, type: UInt8, relative: String, reader: inout BoundedFileReader) {
        guard budget > 0 else {
            stopped = true
            notes.append("more than \(limits.maximumEntries) desktop entries: \(XDGBaseDirectories.join(root, relative)) and the rest were not read")
            return
        }
        budget -= 1
        let maxLine = limits.maximumLineBytes
        let read = reader.read(name, in: folder, type: type, limit: limits.maximumEntryBytes) { bytes -> Result<DesktopEntry, DesktopEntryError> in
            do throws(DesktopEntryError) {
                return .success(try DesktopEntry(parsing: bytes, maxLineBytes: maxLine))
            } catch {
                return .failure(error)
            }
        }
        switch read {
        case .success(let content): files.append(Found(relativePath: relative, content: content))
        case .failure(let failure):
            files.append(Found(relativePath: relative, content: .failure(.unreadable(failure.description))))
            if case .system(let code) = failure, !ReadFailure.isAbsence(code) {
                unreadable.append(DesktopUnreadable(kind: .entry, path: XDGBaseDirectories.join(root, relative), reason: ReadFailure.text(code)))
            }
        }
    }

    /// A folder opened but not listed: not there any more, or unreadable now.
    private mutating func failed(_ relative: String, _ code: Int32) {
        guard !ReadFailure.isAbsence(code) else { return }
        notes.append("\(folderPath(relative)) could not be read: \(ReadFailure.text(code))")
        unreadable.append(DesktopUnreadable(kind: .folder, path: folderPath(relative), reason: ReadFailure.text(code)))
    }

    /// The folder at `relative` (which ends in `/`, or is empty for the root).
    private func folderPath(_ relative: String) -> String {
        relative.isEmpty ? root : XDGBaseDirectories.join(root, String(relative.dropLast()))
    }

    /// Whether `name` is a folder, links followed (as GLib's test is).
    private func isFolder(_ name: String, in folder: Int32, type: UInt8) -> Bool {
        switch Int32(type) {
        case Int32(DT_DIR): return true
        case Int32(DT_LNK), Int32(DT_UNKNOWN):
            var info = stat()
            return fstatat(folder, name, &info, 0) == 0 && info.st_mode & S_IFMT == S_IFDIR
        default: return false
        }
    }
}
