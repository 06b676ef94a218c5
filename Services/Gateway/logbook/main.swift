// The `logbook` CLI: everything lives in the Gateway library.
import Gateway

await Logbook.runMain()
