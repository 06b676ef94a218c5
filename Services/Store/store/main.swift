// The store service executable: configuration in, services out, run until SIGTERM/SIGINT.
import StoreService
import Runtime

await ServiceMain.run("store") { configuration, logger in
    try Store.build(configuration: configuration, logger: logger)
}
