/// No call at all: what the harness itself allocates and spends per call.
struct NoCaller: UnaryCaller {
    nonisolated(nonsending) func call() async throws {}
    func heldCall() async throws {}
    func control(_ command: String) async throws -> Int { 0 }
    func shutdown() async {}
}
