import LaunchServicesCore

/// What `PropertyListBounds.check` refuses `bytes` with, or `nil` when it passes.
func refusal(_ bytes: [UInt8], limits: PropertyListLimits = .infoPlist) -> PropertyListBoundsError? {
    do {
        try PropertyListBounds.check(bytes, limits: limits)
        return nil
    } catch {
        return error
    }
}
