import LaunchServicesCore

/// Why a bundle could not be loaded: refused for what it is (the user's doing: no
/// Info.plist, an invalid one, a missing executable), or not readable right now
/// (`ReadFailure`: the descriptor limit, an I/O error, …), which says nothing about it.
///
/// A scan of the apps folders keeps what it registered from a bundle it cannot read now
/// (`ScanCoverage`); `lsctl register`, a check-in and a launch get either as the
/// `BundleError` they always got, which names the bundle and the system's reason.
enum BundleReadFailure: Error {
    case refused(BundleError)
    /// `what` could not be read (`Info.plist`, the bundle folder, its executable), `code`
    /// the `errno`; `error` says so as a refusal would, for callers that want one.
    case unreadable(BundleError, what: String, code: Int32)

    /// As a refusal, for callers that do not tell the two apart.
    var error: BundleError {
        switch self {
        case .refused(let error), .unreadable(let error, _, _): return error
        }
    }

    /// A failure with `errno` `code`: `absent` when the code says the file is not there or
    /// not what was looked for (`ReadFailure.isAbsence`), else unreadable with `unreadable`.
    static func classify(_ code: Int32, what: String, absent: BundleError, unreadable: BundleError) -> BundleReadFailure {
        ReadFailure.isAbsence(code) ? .refused(absent) : .unreadable(unreadable, what: what, code: code)
    }
}
