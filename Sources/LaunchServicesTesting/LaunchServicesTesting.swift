/// LaunchServicesTesting: what an app author's tests and the project's own tests use to
/// drive apps and the daemon without (or with) real processes.
@_exported import LaunchServicesCore
