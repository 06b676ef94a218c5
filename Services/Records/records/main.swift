// The records service executable: everything is built by `RecordsService`
// (RecordsService.swift) through the runtime's one service shape (LogbookService.swift).
import RecordsService
import Runtime

ProcessMain.run { await ServiceMain.run(RecordsService.self) }
