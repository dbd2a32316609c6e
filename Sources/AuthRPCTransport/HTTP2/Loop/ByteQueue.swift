/// A growable FIFO of bytes with a stable base address between appends: what the I/O loop
/// gathers frames into before one write, and what is left when the socket took only part.
final class ByteQueue {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var start = 0
    private var end = 0

    init(capacity: Int) {
        self.capacity = capacity
        self.storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    /// Bytes waiting to be consumed.
    var count: Int { end - start }
    var isEmpty: Bool { start == end }

    /// The waiting bytes.
    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage + start, count: end - start)
    }

    /// Drops `n` bytes from the front.
    func consume(_ n: Int) {
        start += n
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Appends a copy of `bytes`.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        let target = reserve(bytes.count)
        target.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        commit(bytes.count)
    }

    /// Returns room for at least `n` bytes at the end; call ``commit(_:)`` with what was written.
    func reserve(_ n: Int) -> UnsafeMutableRawPointer {
        if capacity - end < n {
            if start > 0 {
                (storage).copyMemory(from: storage + start, byteCount: end - start)
                end -= start
                start = 0
            }
            if capacity - end < n {
                var newCapacity = capacity * 2
                while newCapacity - end < n { newCapacity *= 2 }
                let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
                grown.copyMemory(from: storage, byteCount: end)
                storage.deallocate()
                storage = grown
                capacity = newCapacity
            }
        }
        return storage + end
    }

    /// Marks `n` bytes written after ``reserve(_:)``.
    func commit(_ n: Int) {
        end += n
    }
}
