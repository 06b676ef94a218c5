// The records service: the five logbooks' data, served over ZeroMQ. Configuration comes
// from the stack's file and environment (see docs/operations); everything else is built by
// `makeRecordsService`, which tests can call too.
import RecordsService
import Runtime

await ServiceMain.run(RecordsService.name) { stack, logger in
    try makeRecordsService(stack: stack, logger: logger)
}
