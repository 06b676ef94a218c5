// The analytics service executable: everything is built by `AnalyticsService`
// (AnalyticsService.swift) through the runtime's one service shape (LogbookService.swift).
import AnalyticsService
import Runtime

ProcessMain.run { await ServiceMain.run(AnalyticsService.self) }
