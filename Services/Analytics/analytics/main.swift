// The analytics service executable: everything is built by `AnalyticsService`
// (AnalyticsService.swift) through the runtime's one service shape (LogbookService.swift).
import AnalyticsService
import Runtime

await ServiceMain.run(AnalyticsService.self)
