// The auth service executable: read the configuration, build, run until SIGTERM/SIGINT.
// Settings: LOGBOOK_AUTH_ARGON2_OPSLIMIT, _ARGON2_MEMLIMIT, _HASHING_CONCURRENCY,
// _SESSION_DAYS, plus the stack's LOGBOOK_AUTH_ENDPOINT, _EVENTS, _DATABASE.
import AuthService
import Runtime

await ServiceMain.run("auth") { stack, logger in
    var configuration = try AuthConfiguration.from { stack.setting("auth", $0) }
    configuration.recordsShards = stack.recordsShards
    return try makeAuthService(configuration: configuration, stack: stack, logger: logger)
}
