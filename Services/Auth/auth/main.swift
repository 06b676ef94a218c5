// The auth service executable: everything is built by `AuthService` (AuthService.swift)
// through the runtime's one service shape (LogbookService.swift).
import AuthService
import Runtime

ProcessMain.run { await ServiceMain.run(AuthService.self) }
