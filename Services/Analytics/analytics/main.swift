// The analytics service executable: read the configuration, build, run until SIGTERM/SIGINT.
// Settings: the stack's LOGBOOK_ANALYTICS_ENDPOINT and _DATABASE, plus the endpoints of the
// producers it consumes (records, weather-fetcher, auth).
import AnalyticsService
import Runtime

await ServiceMain.run(AnalyticsService.name) { stack, logger in
    try makeAnalyticsService(stack: stack, logger: logger)
}
