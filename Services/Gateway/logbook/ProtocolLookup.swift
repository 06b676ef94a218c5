// libzmq starts OpenPGM with its context (a multicast transport Logbook never uses), and
// OpenPGM asks the C library for the "pgm" protocol's number: a name-service lookup that
// reads /etc/nsswitch.conf, tries to load libnss_db from a dozen directories (about 100
// failed system calls) and then reads /etc/protocols. That was 0.15-0.25 ms of every
// command that calls a service, on the path to its first request.
//
// The `logbook` executable answers that one question itself: this function is exported
// from the executable (Package.swift: --export-dynamic-symbol), so the dynamic linker
// binds OpenPGM's call to it rather than to the C library's. "pgm" is not found, exactly
// as on a system whose /etc/protocols lacks it, and OpenPGM keeps its built-in number
// (113, the same one /etc/protocols gives). Any other name goes to the C library's
// function. The services, which make one context in a long life, do not do this.
import Glibc

private typealias ProtocolLookup = @convention(c) (
    UnsafePointer<CChar>?, UnsafeMutablePointer<protoent>?, UnsafeMutablePointer<CChar>?, Int,
    UnsafeMutablePointer<UnsafeMutablePointer<protoent>?>?
) -> Int32

/// The C library's getprotobyname_r, for every name but "pgm".
private let cLibraryLookup: ProtocolLookup? = {
    // RTLD_NEXT: the next definition after this executable's, the C library's
    let next = UnsafeMutableRawPointer(bitPattern: -1)
    return dlsym(next, "getprotobyname_r").map { unsafeBitCast($0, to: ProtocolLookup.self) }
}()

@_cdecl("getprotobyname_r")
public func protocolByName(
    _ name: UnsafePointer<CChar>?, _ entry: UnsafeMutablePointer<protoent>?, _ buffer: UnsafeMutablePointer<CChar>?,
    _ length: Int, _ result: UnsafeMutablePointer<UnsafeMutablePointer<protoent>?>?
) -> Int32 {
    if let name, strcmp(name, "pgm") == 0 {
        result?.pointee = nil
        return 0  // not found (POSIX: no error, and no entry)
    }
    guard let cLibraryLookup else {
        result?.pointee = nil
        return ENOENT
    }
    return cLibraryLookup(name, entry, buffer, length, result)
}
