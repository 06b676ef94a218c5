// weather-fetcher: real weather and tide for every catch (docs/protocol-weather.md).
import WeatherFetcherService
import Runtime

await ServiceMain.run(WeatherFetcher.name) { configuration, logger in
    try WeatherFetcher.build(configuration: configuration, logger: logger)
}
