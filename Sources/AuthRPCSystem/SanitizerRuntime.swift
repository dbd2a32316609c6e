#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The entry points a sanitizer's runtime exports from the executable it is linked into; absent
/// (nil) outside a sanitizer build.
enum SanitizerRuntime {
    static func symbol<Function>(named name: String, as type: Function.Type) -> Function? {
        #if canImport(Darwin)
        let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #else
        let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
        #endif
        guard let symbol = dlsym(everywhere, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }
}
