/// Shows ThreadSanitizer a hand-off that the Swift concurrency runtime orders but TSan cannot see.
///
/// A continuation resumed on one thread before its task has finished suspending lets the task run
/// on at once, ordered only by atomics inside the prebuilt, uninstrumented runtime. TSan then
/// reports whatever the resuming thread made for the task (a failure's boxed payload, a response's
/// buffers) as raced when the task reads it. The resuming thread calls ``publish(_:)`` on an object
/// both sides hold just before the resume, and the task calls ``receive(_:)`` on it right after;
/// TSan's own annotations turn that into the ordering it needs.
///
/// Outside a TSan build the annotations are not in the process: each call is a check of a cached
/// `nil`.
package enum ThreadSanitizerHandoff {
    private typealias Annotation = @convention(c) (UnsafeRawPointer?) -> Void

    private static let release = SanitizerRuntime.symbol(named: "__tsan_release", as: Annotation.self)
    private static let acquire = SanitizerRuntime.symbol(named: "__tsan_acquire", as: Annotation.self)

    /// The process runs under ThreadSanitizer and the annotations were found.
    package static var isActive: Bool { release != nil && acquire != nil }

    /// Everything this thread wrote so far happens before what follows a ``receive(_:)`` of
    /// `object` on another thread.
    package static func publish(_ object: AnyObject) {
        release?(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()))
    }

    /// What the thread that called ``publish(_:)`` on `object` wrote before it happens before
    /// what follows here.
    package static func receive(_ object: AnyObject) {
        acquire?(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()))
    }
}
