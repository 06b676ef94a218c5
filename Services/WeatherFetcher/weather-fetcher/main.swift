// weather-fetcher: real weather and tide for every catch (docs/protocol.md, "Weather-fetcher").
// Everything is built by `WeatherFetcherService` (WeatherFetcherService.swift) through the runtime's one
// service shape (LogbookService.swift).
import Runtime
import WeatherFetcherService

ProcessMain.run { await ServiceMain.run(WeatherFetcherService.self) }
