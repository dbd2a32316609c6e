import AuthRPCSystem
import Foundation
import Synchronization
import Testing

@Suite("ThreadSanitizerHandoff")
struct ThreadSanitizerHandoffTests {
    final class Box: @unchecked Sendable {
        // Unsynchronized on purpose: only the annotations order the write before the read.
        var value = 0
    }

    @Test("under ThreadSanitizer the annotations are found in the process")
    func foundUnderThreadSanitizer() {
        // `make test-sanitize` sets TSAN_OPTIONS for the TSan run only.
        let underTSan = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil
        #expect(ThreadSanitizerHandoff.isActive == underTSan)
    }

    @Test("a write published on one thread is read after receive on another without a report")
    func publishThenReceive() async {
        // The flag is a relaxed atomic, which gives TSan no ordering: without the annotations
        // this read is reported as a race and `halt_on_error=1` fails the run.
        let box = Box()
        let ready = Atomic<Bool>(false)
        let writer = Thread {
            box.value = 42
            ThreadSanitizerHandoff.publish(box)
            ready.store(true, ordering: .relaxed)
        }
        writer.start()
        while !ready.load(ordering: .relaxed) { await Task.yield() }
        ThreadSanitizerHandoff.receive(box)
        #expect(box.value == 42)
    }
}
