// The store service executable: everything is built by `StoreService` (StoreService.swift) through the
// runtime's one service shape (LogbookService.swift).
import Runtime
import StoreService

ProcessMain.run { await ServiceMain.run(StoreService.self) }
