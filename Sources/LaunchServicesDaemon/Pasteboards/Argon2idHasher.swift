import CSodium
import LaunchServicesCore

/// Pasteboard password verifiers: Argon2id through libsodium's `crypto_pwhash_str_alg`. The
/// verifier is a PHC string (`$argon2id$v=19$m=19456,t=2,p=1$SALT$HASH`) that carries its
/// own random salt and parameters, so old verifiers keep working if the parameters change.
///
/// Parameters: 19 MiB and 2 passes, one lane (the OWASP minimum for Argon2id). 27 ms per
/// check in a release build on the 2-core machine it was measured on (55 ms with the machine
/// busy): unnoticeable for one paste, and with the daemon's single hashing thread it caps
/// checks at about 20–35 a second for the whole daemon. Memory-hard, so a GPU gains little; 19 MiB is held only while a
/// check runs, on the one thread that runs them.
struct Argon2idHasher: PasswordHasher {
    var passes: UInt64 = 2
    var memoryBytes: Int = 19 * 1024 * 1024

    /// libsodium must be initialised once before use; `sodium_init` is thread-safe and
    /// idempotent, and only fails without a usable random source.
    private static let ready: Bool = sodium_init() >= 0

    func verifier(for password: String) -> String? {
        guard Self.ready else { return nil }
        var out = [CChar](repeating: 0, count: Int(ls_pwhash_strbytes))
        let status = Self.withBytes(of: password) { bytes, count in
            crypto_pwhash_str_alg(&out, bytes, count, passes, memoryBytes, ls_pwhash_alg_argon2id13)
        }
        guard status == 0 else { return nil }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func password(_ password: String, matches verifier: String) -> Bool {
        guard Self.ready else { return false }
        return Self.withBytes(of: password) { bytes, count in
            crypto_pwhash_str_verify(verifier, bytes, count) == 0
        }
    }

    /// The password's UTF-8 bytes (NULs included: the length is passed), never a null pointer.
    private static func withBytes<R>(of password: String, _ body: (UnsafePointer<CChar>, UInt64) -> R) -> R {
        var bytes = password.utf8.map { CChar(bitPattern: $0) }
        let count = UInt64(bytes.count)
        bytes.append(0)
        return bytes.withUnsafeBufferPointer { body($0.baseAddress!, count) }
    }
}
