// weather-fetcher: real weather and tide for every catch (docs/protocol.md, "Weather-fetcher").
import WeatherFetcherService
import Runtime

await ServiceMain.run(WeatherFetcher.name) { configuration, logger in
    try WeatherFetcher.build(configuration: configuration, logger: logger)
}
